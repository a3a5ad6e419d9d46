package fs

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
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
	t := NewTree(NewDir(0o755))
	return unpack(t, bytes.NewReader(image), int64(len(image)), func(off, size int64) fileData {
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
	t := NewTree(NewDir(0o755))
	img.cache = &t.diskCache
	return unpack(t, img, size, func(off, size int64) fileData {
		return fileData{disk: &diskFile{img: img, off: off, size: size}}
	})
}

// fileData is where a regular file's data is: in memory or on a disk.
type fileData struct {
	mem  []byte
	disk *diskFile
}

func (d fileData) empty() bool { return len(d.mem) == 0 && (d.disk == nil || d.disk.size == 0) }

// unpack reads the archives in src into t; data locates a file's bytes.
func unpack(t *Tree, src io.ReaderAt, size int64, data func(off, size int64) fileData) (*Tree, error) {
	u := &unpacker{t: t, links: map[[3]uint64]*Node{}}
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
	for off := start; ; {
		rec, fileStart, err := readNewc(src, off, size)
		if err != nil {
			return 0, fmt.Errorf("initramfs: archive at offset %d: %w", start, err)
		}
		if rec.size > uint64(size-fileStart) {
			return 0, fmt.Errorf("initramfs: %s: data runs past the image", rec.name)
		}
		next := (fileStart + int64(rec.size) + 3) &^ 3
		if rec.name == trailerName {
			return next, nil
		}
		if err := u.add(&rec, src, data(fileStart, int64(rec.size)), fileStart); err != nil {
			return 0, err
		}
		off = next
	}
}

// newcRecord is a newc header: its fields in the archive's order, then
// the name without its NUL.
type newcRecord struct {
	ino, mode, uid, gid, nlink, mtime, size       uint64
	major, minor, rmajor, rminor, nameSize, check uint64 // check: the crc format's sum, unused
	name                                          string
}

// maxNameSize bounds a record's name with its NUL (PATH_MAX, as Linux's
// unpacker does).
const maxNameSize = 4096

// readNewc reads the record whose header is at off and returns it with the
// offset of its data: after the name, at a multiple of 4. The fields are
// eight hex digits each (the kernel reads them itself: a reader built on
// reflection costs more at every boot than the rest of the unpacking).
func readNewc(src io.ReaderAt, off, size int64) (newcRecord, int64, error) {
	var rec newcRecord
	var hdr [newcHeader]byte
	if size-off < newcHeader {
		return rec, 0, fmt.Errorf("no trailer (a header at %d runs past the image)", off)
	}
	if k, err := src.ReadAt(hdr[:], off); k < newcHeader {
		return rec, 0, fmt.Errorf("header at %d: %w", off, err)
	}
	if string(hdr[:len(newcMagic)]) != newcMagic {
		return rec, 0, fmt.Errorf("no newc header at %d", off)
	}
	fields := [...]*uint64{&rec.ino, &rec.mode, &rec.uid, &rec.gid, &rec.nlink, &rec.mtime, &rec.size,
		&rec.major, &rec.minor, &rec.rmajor, &rec.rminor, &rec.nameSize, &rec.check}
	for i, f := range fields {
		v, ok := parseHex8(hdr[len(newcMagic)+8*i:][:8])
		if !ok {
			return rec, 0, fmt.Errorf("header at %d: field %d is not hexadecimal", off, i)
		}
		*f = v
	}
	if rec.nameSize == 0 || rec.nameSize > maxNameSize || int64(rec.nameSize) > size-off-newcHeader {
		return rec, 0, fmt.Errorf("header at %d: name of %d bytes", off, rec.nameSize)
	}
	name := make([]byte, rec.nameSize)
	if k, err := src.ReadAt(name, off+newcHeader); k < len(name) {
		return rec, 0, fmt.Errorf("name at %d: %w", off+newcHeader, err)
	}
	if name[len(name)-1] != 0 {
		return rec, 0, fmt.Errorf("name at %d does not end in NUL", off+newcHeader)
	}
	rec.name = string(name[:len(name)-1])
	return rec, (off + newcHeader + int64(rec.nameSize) + 3) &^ 3, nil
}

// parseHex8 reads eight hex digits.
func parseHex8(b []byte) (uint64, bool) {
	var v uint64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

// maxLinkTarget bounds a symbolic link's target (PATH_MAX).
const maxLinkTarget = 4096

// add puts one record in the tree. A symbolic link's target is read from
// src at off.
func (u *unpacker) add(rec *newcRecord, src io.ReaderAt, data fileData, off int64) error {
	name := CleanPath("/" + rec.name)
	if name == "/" || name == "/." {
		return nil
	}
	mtime := time.Unix(int64(rec.mtime), 0)
	n := &Node{Mode: ModeFromUnix(uint32(rec.mode)), UID: uint32(rec.uid), GID: uint32(rec.gid), ATime: mtime, MTime: mtime, CTime: mtime}
	linkKey := [3]uint64{rec.major, rec.minor, rec.ino}
	if rec.mode&sIFMT == sIFREG && rec.nlink > 1 {
		if shared, ok := u.links[linkKey]; ok {
			if !data.empty() {
				shared.Data, shared.disk = data.mem, data.disk
			}
			return u.link(name, shared)
		}
		u.links[linkKey] = n
	}
	switch rec.mode & sIFMT {
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
		if rec.size > maxLinkTarget {
			return fmt.Errorf("initramfs: %s: symbolic link target of %d bytes", rec.name, rec.size)
		}
		target := make([]byte, rec.size)
		if k, err := src.ReadAt(target, off); k < len(target) {
			return fmt.Errorf("initramfs: %s: %w", rec.name, err)
		}
		n.Mode |= fs.ModeSymlink
		n.Link = string(target)
	case sIFCHR:
		n.Mode |= fs.ModeDevice | fs.ModeCharDevice
		n.Rdev = Mkdev(uint32(rec.rmajor), uint32(rec.rminor))
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
	n.tree = u.t
	u.parent.putChild(base, n)
	n.Links++
	if replaced {
		u.dir, u.parent = "", nil
	}
	return nil
}
