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
	t := &Tree{Root: NewDir(0o755)}
	links := map[[3]uint64]*Node{}
	off := 0
	for {
		for off < len(image) && image[off] == 0 {
			off++
		}
		if off >= len(image) {
			return t, nil
		}
		if !bytes.HasPrefix(image[off:], []byte(newcMagic)) {
			return nil, fmt.Errorf("initramfs: no newc cpio archive at offset %d", off)
		}
		end, err := unpackArchive(t, links, image, off)
		if err != nil {
			return nil, err
		}
		off = end
	}
}

// unpackArchive adds one archive's records and returns the offset after its trailer.
func unpackArchive(t *Tree, links map[[3]uint64]*Node, image []byte, start int) (int, error) {
	r := cpio.Newc.Reader(bytes.NewReader(image[start:]))
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
		fileEnd := start + int(rec.FilePos) + int(rec.FileSize)
		if fileEnd > len(image) {
			return 0, fmt.Errorf("initramfs: %s: data runs past the image", rec.Name)
		}
		next = (fileEnd + 3) &^ 3
		if err := add(t, links, rec, image[start+int(rec.FilePos):fileEnd]); err != nil {
			return 0, err
		}
	}
	trailer := next
	if trailer+newcHeader > len(image) || !bytes.HasPrefix(image[trailer:], []byte(newcMagic)) ||
		!bytes.HasPrefix(image[trailer+newcHeader:], []byte(trailerName)) {
		return 0, fmt.Errorf("initramfs: archive at offset %d has no trailer", start)
	}
	return (trailer + newcHeader + len(trailerName) + 1 + 3) &^ 3, nil
}

// add puts one record in the tree; links maps a hard-linked file's
// device and inode numbers to its node (newc gives the data to the last
// of its names).
func add(t *Tree, links map[[3]uint64]*Node, rec cpio.Record, data []byte) error {
	name := path.Clean("/" + rec.Name)
	if name == "/" || name == "/." {
		return nil
	}
	mtime := time.Unix(int64(rec.MTime), 0)
	n := &Node{Mode: ModeFromUnix(uint32(rec.Mode)), UID: uint32(rec.UID), GID: uint32(rec.GID), ATime: mtime, MTime: mtime, CTime: mtime}
	linkKey := [3]uint64{rec.Major, rec.Minor, rec.Ino}
	if rec.Mode&sIFMT == sIFREG && rec.NLink > 1 {
		if shared, ok := links[linkKey]; ok {
			if len(data) > 0 {
				shared.Data = data[:len(data):len(data)]
			}
			return link(t, name, shared)
		}
		links[linkKey] = n
	}
	switch rec.Mode & sIFMT {
	case sIFDIR:
		if old, err := t.Lookup(nil, name, false); err == nil && old.IsDir() {
			old.Mode = fs.ModeDir | n.Mode
			return nil
		}
		n.Mode |= fs.ModeDir
		n.Children = map[string]*Node{}
	case sIFREG:
		n.Data = data[:len(data):len(data)]
	case sIFLNK:
		n.Mode |= fs.ModeSymlink
		n.Link = string(data)
	case sIFCHR:
		n.Mode |= fs.ModeDevice | fs.ModeCharDevice
		n.Rdev = Mkdev(uint32(rec.Rmajor), uint32(rec.Rminor))
	default:
		return nil
	}
	n.Ino = nextIno.Add(1)
	return link(t, name, n)
}

// link names n at name, whose parent directory must exist.
func link(t *Tree, name string, n *Node) error {
	if dir, _ := path.Split(name); dir != "/" {
		if p, err := t.Lookup(nil, dir, true); err != nil || !p.IsDir() {
			return fmt.Errorf("initramfs: %s: parent directory missing", strings.TrimPrefix(name, "/"))
		}
	}
	parent, _ := t.Lookup(nil, path.Dir(name), true)
	parent.putChild(path.Base(name), n)
	n.Links++
	return nil
}
