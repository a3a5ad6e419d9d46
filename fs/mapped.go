package fs

import (
	"bytes"

	"golang.org/x/sys/unix"
)

// FileMapping is the memory of a file's shared mappings (mm's
// SharedMemory of a file): the frames that cache its pages. The file's
// data stays the master copy: a read first pulls the frames into it, a
// write or truncate pushes the changed pages to them.
type FileMapping interface {
	// HoldLocked adds a mapping's reference; the node's lock is held.
	HoldLocked()
	// Pull copies the frames into the file (WritePage); Push copies the
	// file's pages that overlap [from, to) into the frames (ReadPage). The
	// node's lock is held.
	Pull()
	Push(from, to int64)
}

// MappedNode is a node as the source of its mappings' pages (mm's
// FileSource).
type MappedNode struct{ n *Node }

// Source is n as its mappings see it.
func (n *Node) Source() MappedNode { return MappedNode{n} }

// Lock takes the node's lock.
func (m MappedNode) Lock() { m.n.mu.Lock() }

// Unlock releases the node's lock.
func (m MappedNode) Unlock() { m.n.mu.Unlock() }

// Sync pulls what was stored through shared mappings into the data.
func (m MappedNode) Sync() {
	if m.n.mapped != nil {
		m.n.mapped.Pull()
	}
}

// ReadPage copies page i of the file into p, zeros past its end.
func (m MappedNode) ReadPage(i uintptr, p []byte) {
	k := 0
	if off := int64(i * pageSize); off >= 0 {
		k = m.n.readAtLocked(p, off)
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
	} else if bytes.Equal(p, m.n.Data[off:off+int64(len(p))]) {
		return // a page of the image only read
	}
	m.n.writeAtLocked(p, off)
}

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

// Unmapped drops the node's shared mappings' memory: the last one is gone.
func (m MappedNode) Unmapped() {
	m.n.mapped = nil
	m.n.releaseIfGoneLocked()
}

const pageSize = 4096

// MapShared returns the memory of n's shared mappings, made by create
// when there is none, with a reference held for one more mapping.
func (n *Node) MapShared(create func(MappedNode) FileMapping) FileMapping {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mapped == nil {
		n.mapped = create(MappedNode{n})
	}
	n.mapped.HoldLocked()
	return n.mapped
}

// Contents returns the file's data with what shared mappings stored in
// it, as exec reads programs: in place when the file was never written,
// else a copy; ENOMEM for a file larger than maxContents.
func (n *Node) Contents() ([]byte, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.Source().Sync()
	if n.written == nil {
		return n.Data, nil
	}
	if n.written.size > maxContents {
		return nil, unix.ENOMEM
	}
	data := make([]byte, n.written.size)
	n.readAtLocked(data, 0)
	return data, nil
}

// maxContents bounds the copy Contents makes of a written file (an
// executable written at run time; Debian's largest are tens of MiB).
const maxContents = 256 << 20

// ReadAt reads the file's data at off, with what shared mappings stored
// in it.
func (n *Node) ReadAt(p []byte, off int64) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.Source().Sync()
	return n.readAtLocked(p, off)
}
