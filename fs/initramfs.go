package fs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/u-root/u-root/pkg/cpio"
)

const (
	newcMagic   = "070701"
	newcHeader  = 110
	trailerName = "TRAILER!!!"
	sIFMT       = 0o170000
	sIFDIR      = 0o040000
	sIFREG      = 0o100000
	sIFLNK      = 0o120000
	sIFCHR      = 0o020000
)

// Unpack builds a tree from an initramfs: one or more newc cpio archives,
// concatenated, with zero padding between them, as Linux accepts. Later
// archives override earlier ones. Hard links share one node; character
// devices are kept; block devices, FIFOs and sockets are skipped. File
// data aliases the image, which must stay unchanged (a write copies it).
func Unpack(image []byte) (*Tree, error) {
	return unpack(bytes.NewReader(image), int64(len(image)), func(off, size int64) fileData {
		return fileData{mem: image[off : off+size : off+size]}
	})
}

// UnpackDisk builds a tree as Unpack does from the same archives on a
// device (a root image on a disk), reading only their headers: the files'
// data is read from the device when they are (disk.go). The device must
// stay unchanged.
func UnpackDisk(dev io.ReaderAt, size int64) (*Tree, error) {
	img, err := newDiskImage(dev, size)
	if err != nil {
		return nil, err
	}
	return unpack(img, size, func(off, size int64) fileData {
		return fileData{disk: &diskFile{img: img, off: off, size: size}}
	})
}

// fileData is where a regular file's data is: in memory or on a disk.
type fileData struct {
	mem  []byte
	disk *diskFile
}

func (d fileData) empty() bool { return len(d.mem) == 0 && (d.disk == nil || d.disk.size == 0) }

// unpack reads the archives in src; data locates a file's bytes.
func unpack(src io.ReaderAt, size int64, data func(off, size int64) fileData) (*Tree, error) {
	u := &unpacker{t: &Tree{Root: NewDir(0o755)}, links: map[[3]uint64]*Node{}}
	var off int64
	for {
		var err error
		if off, err = skipZeros(src, off, size); err != nil {
			return nil, err
		}
		if off >= size {
			return u.t, nil
		}
		if !hasAt(src, off, newcMagic) {
			return nil, fmt.Errorf("initramfs: no newc cpio archive at offset %d", off)
		}
		end, err := u.archive(src, size, off, data)
		if err != nil {
			return nil, err
		}
		off = end
	}
}

// skipZeros returns the offset of the first byte at or after off that is
// not zero, or size.
func skipZeros(src io.ReaderAt, off, size int64) (int64, error) {
	var buf [512]byte
	for off < size {
		k, err := src.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if k == 0 {
			return 0, fmt.Errorf("initramfs: read at offset %d: %w", off, err)
		}
		for _, b := range buf[:k] {
			if b != 0 {
				return off, nil
			}
			off++
		}
	}
	return off, nil
}

// hasAt reports whether src holds s at off.
func hasAt(src io.ReaderAt, off int64, s string) bool {
	buf := make([]byte, len(s))
	k, _ := src.ReadAt(buf, off)
	return k == len(s) && string(buf) == s
}

// unpacker builds a tree from archives, record by record.
type unpacker struct {
	t *Tree
	// links maps a hard-linked file's device and inode numbers to its
	// node (newc gives the data to the last of its names).
	links map[[3]uint64]*Node
	// dir names the directory the last record went into, parent is its
	// node: an archive lists a directory's entries together. A new entry
	// never changes where a path leads; a replaced one may (a path can
	// lead through its own directory's entries by a symbolic link), and
	// clears them.
	dir    string
	parent *Node
}

// archive adds one archive's records and returns the offset after its trailer.
func (u *unpacker) archive(src io.ReaderAt, size, start int64, data func(off, size int64) fileData) (int64, error) {
	r := cpio.Newc.Reader(io.NewSectionReader(src, start, size-start))
	// The EOFReader hides the trailer; find it after the last record.
	next := start
	for {
		rec, err := r.ReadRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("initramfs: archive at offset %d: %w", start, err)
		}
		fileStart := start + int64(rec.FilePos)
		if rec.FileSize > uint64(size) || fileStart+int64(rec.FileSize) > size {
			return 0, fmt.Errorf("initramfs: %s: data runs past the image", rec.Name)
		}
		fileEnd := fileStart + int64(rec.FileSize)
		next = (fileEnd + 3) &^ 3
		if err := u.add(rec, src, data(fileStart, int64(rec.FileSize)), fileStart); err != nil {
			return 0, err
		}
	}
	trailer := next
	if !hasAt(src, trailer, newcMagic) || !hasAt(src, trailer+newcHeader, trailerName) {
		return 0, fmt.Errorf("initramfs: archive at offset %d has no trailer", start)
	}
	return (trailer + newcHeader + int64(len(trailerName)) + 1 + 3) &^ 3, nil
}

// maxLinkTarget bounds a symbolic link's target (PATH_MAX).
const maxLinkTarget = 4096

// add puts one record in the tree. A symbolic link's target is read from
// src at off.
func (u *unpacker) add(rec cpio.Record, src io.ReaderAt, data fileData, off int64) error {
	name := CleanPath("/" + rec.Name) // u-root cleaned it already
	if name == "/" || name == "/." {
		return nil
	}
	mtime := time.Unix(int64(rec.MTime), 0)
	n := &Node{Mode: ModeFromUnix(uint32(rec.Mode)), UID: uint32(rec.UID), GID: uint32(rec.GID), ATime: mtime, MTime: mtime, CTime: mtime}
	linkKey := [3]uint64{rec.Major, rec.Minor, rec.Ino}
	if rec.Mode&sIFMT == sIFREG && rec.NLink > 1 {
		if shared, ok := u.links[linkKey]; ok {
			if !data.empty() {
				shared.Data, shared.disk = data.mem, data.disk
			}
			return u.link(name, shared)
		}
		u.links[linkKey] = n
	}
	switch rec.Mode & sIFMT {
	case sIFDIR:
		if old, err := u.t.Lookup(nil, name, false); err == nil && old.IsDir() {
			old.Mode = fs.ModeDir | n.Mode
			return nil
		}
		n.Mode |= fs.ModeDir
		n.Children = map[string]*Node{}
	case sIFREG:
		n.Data, n.disk = data.mem, data.disk
	case sIFLNK:
		if rec.FileSize > maxLinkTarget {
			return fmt.Errorf("initramfs: %s: symbolic link target of %d bytes", rec.Name, rec.FileSize)
		}
		target := make([]byte, rec.FileSize)
		if k, err := src.ReadAt(target, off); k < len(target) {
			return fmt.Errorf("initramfs: %s: %w", rec.Name, err)
		}
		n.Mode |= fs.ModeSymlink
		n.Link = string(target)
	case sIFCHR:
		n.Mode |= fs.ModeDevice | fs.ModeCharDevice
		n.Rdev = Mkdev(uint32(rec.Rmajor), uint32(rec.Rminor))
	default:
		return nil
	}
	n.Ino = nextIno.Add(1)
	return u.link(name, n)
}

// link names n at name, whose parent directory must exist.
func (u *unpacker) link(name string, n *Node) error {
	dir, base := path.Split(name)
	if dir != u.dir || u.parent == nil {
		p, err := u.t.Lookup(nil, dir, true)
		if err != nil || !p.IsDir() {
			return fmt.Errorf("initramfs: %s: parent directory missing", strings.TrimPrefix(name, "/"))
		}
		u.dir, u.parent = dir, p
	}
	_, replaced := u.parent.Children[base]
	u.parent.putChild(base, n)
	n.Links++
	if replaced {
		u.dir, u.parent = "", nil
	}
	return nil
}
