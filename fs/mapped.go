package fs

import (
	"bytes"
	"math"

	"golang.org/x/sys/unix"
)

// FileMapping is the memory of a file's shared mappings (mm's
// SharedMemory of a file): the frames that cache its pages. The file's
// data stays the master copy: a read first pulls the frames into it, a
// write or truncate pushes the changed pages to them.
type FileMapping interface {
	// HoldLocked adds a shared mapping's reference, HoldPrivateLocked a
	// private one's; the node's lock is held.
	HoldLocked()
	HoldPrivateLocked()
	// Shared reports whether a shared mapping holds it.
	Shared() bool
	// Pull copies the frames into the file (WritePage); Push copies the
	// file's pages that overlap [from, to) into the frames (ReadPage). The
	// node's lock is held.
	Pull()
	Push(from, to int64)
	// Truncated says the file now ends at size, shorter than it was: its
	// mappings drop their pages past the end. The node's lock is held.
	Truncated(size int64)
}

// MappedNode is a node as the source of its mappings' pages (mm's
// FileSource).
type MappedNode struct{ n *Node }

// Lock takes the node's lock.
func (m MappedNode) Lock() { m.n.mu.Lock() }

// Unlock releases the node's lock.
func (m MappedNode) Unlock() { m.n.mu.Unlock() }

// Size is the file's length.
func (m MappedNode) Size() int64 { return m.n.sizeLocked() }

// ReadPage copies page i of the file into p, zeros past its end (and
// where a root disk failed: the console says so). A page of a root disk's
// file comes from the disk's cache or the disk itself: the mapping keeps
// the page, a second copy in the cache would be waste.
func (m MappedNode) ReadPage(i uintptr, p []byte) {
	k := 0
	if off := int64(i * pageSize); off < 0 {
	} else if m.n.written == nil && m.n.disk != nil {
		k, _ = m.n.disk.readThrough(p, off)
	} else {
		k, _ = m.n.readAtLocked(p, off)
	}
	clear(p[k:])
}

// WritePage copies p into page i of the file, up to its end. A hole stays
// a hole while p is zeros; a page the limits leave no room for keeps the
// file's old contents, as a store to a full tmpfs faults on Linux.
func (m MappedNode) WritePage(i uintptr, p []byte) {
	off := int64(i * pageSize)
	size := m.n.sizeLocked()
	if off < 0 || off >= size {
		return
	}
	p = p[:min(int64(len(p)), size-off)]
	if w := m.n.written; w != nil {
		if pg := w.pages[int64(i)]; pg != nil {
			copy(pg[:], p)
			return
		}
		if allZero(p) {
			return
		}
	} else if m.n.imageHolds(p, off) {
		return // a page of the image only read
	}
	m.n.writeAtLocked(p, off)
}

// imageHolds reports whether the file's image (in memory or on disk) has
// p at off. n.mu is held.
func (n *Node) imageHolds(p []byte, off int64) bool {
	if n.disk == nil {
		return bytes.Equal(p, n.Data[off:off+int64(len(p))])
	}
	var image page
	k, err := n.disk.readAt(image[:len(p)], off)
	return err == nil && k == len(p) && bytes.Equal(p, image[:len(p)])
}

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

// Node is the mapped node (/proc/PID/map_files leads to it).
func (m MappedNode) Node() *Node { return m.n }

// Stat is the mapped node's stat(2): the device, inode and link count
// /proc/PID/maps shows.
func (m MappedNode) Stat() Stat { return StatNode(m.n) }

// Unmapped drops the node's shared mappings' memory: the last one is gone.
func (m MappedNode) Unmapped() {
	m.n.mapped = nil
	m.n.releaseIfGoneLocked()
}

const pageSize = 4096

// Map returns the memory of n's mappings, made by create when there is
// none, with a reference held for one more shared or private mapping.
func (n *Node) Map(create func(MappedNode) FileMapping, shared bool) FileMapping {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mapped == nil {
		n.mapped = create(MappedNode{n})
	}
	if shared {
		n.mapped.HoldLocked()
	} else {
		n.mapped.HoldPrivateLocked()
	}
	return n.mapped
}

// pullMapped brings what was stored through shared mappings into the
// data. The node's lock is held.
func (n *Node) pullMapped() {
	if n.mapped != nil {
		n.mapped.Pull()
	}
}

// truncateLocked sets the file's size; its mappings read zeros past the
// new end and drop the pages wholly past it. The node's lock is held.
func (n *Node) truncateLocked(size int64) error {
	n.pullMapped()
	old := n.sizeLocked()
	if err := n.resizeLocked(size); err != nil {
		return err
	}
	if n.mapped != nil {
		n.mapped.Push(0, math.MaxInt64)
		if size < old {
			n.mapped.Truncated(size)
		}
	}
	return nil
}

// Contents returns the file's data with what shared mappings stored in
// it, as exec reads programs: in place when the file was never written
// (from the disk cache for a root image's file), else a copy; ENOMEM for a
// file larger than maxContents, or a root disk's file larger than the
// disk cache may hold (exec of a 64 MiB file on a disk must not cost the
// kernel 64 MiB at -m 128M).
func (n *Node) Contents() ([]byte, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pullMapped()
	if n.written == nil && n.disk == nil {
		return n.Data, nil
	}
	if n.written == nil {
		if data := n.disk.load(); data != nil {
			return data, nil
		}
		if n.disk.size > n.disk.img.cache.sizeLimit() {
			return nil, unix.ENOMEM
		}
	}
	size := n.sizeLocked()
	if size > maxContents {
		return nil, unix.ENOMEM
	}
	data := make([]byte, size)
	if _, err := n.readAtLocked(data, 0); err != nil {
		return nil, err
	}
	return data, nil
}

// maxContents bounds the copy Contents makes of a written file (an
// executable written at run time; Debian's largest are tens of MiB).
const maxContents = 256 << 20

// ReadAt reads the file's data at off, with what shared mappings stored
// in it.
func (n *Node) ReadAt(p []byte, off int64) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pullMapped()
	return n.readAtLocked(p, off)
}
