package fs

import "math"

// FileMapping is the memory of a file's shared mappings (mm's
// SharedMemory of a file): the frames that cache its pages. The file's
// data stays the master copy: a read first pulls the frames into it, a
// write or truncate pushes the changed pages to them.
type FileMapping interface {
	// HoldLocked adds a shared mapping's reference, HoldPrivateLocked a
	// private one's; the node's lock is held.
	HoldLocked()
	HoldPrivateLocked()
	// Pull copies the frames into data; Push copies data's pages that
	// overlap [from, to) into the frames. The node's lock is held.
	Pull(data []byte)
	Push(data []byte, from, to int64)
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
func (m MappedNode) Size() int64 { return int64(len(m.n.Data)) }

// ReadPage copies page i of the data into p, zeros past its end.
func (m MappedNode) ReadPage(i uintptr, p []byte) {
	k := 0
	if off := i * pageSize; off < uintptr(len(m.n.Data)) {
		k = copy(p, m.n.Data[off:])
	}
	clear(p[k:])
}

// WritePage copies p into page i of the data, up to its end.
func (m MappedNode) WritePage(i uintptr, p []byte) {
	if off := i * pageSize; off < uintptr(len(m.n.Data)) {
		copy(m.n.Data[off:], p)
	}
}

// Unmapped drops the node's shared mappings' memory: the last one is gone.
func (m MappedNode) Unmapped() { m.n.mapped = nil }

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
		n.mapped.Pull(n.Data)
	}
}

// truncateLocked sets the size of n's data; its mappings read zeros past
// the new end and drop the pages wholly past it. The node's lock is held.
func (n *Node) truncateLocked(size int64) error {
	n.pullMapped()
	old := int64(len(n.Data))
	if err := n.resize(size); err != nil {
		return err
	}
	if n.mapped != nil {
		n.mapped.Push(n.Data, 0, math.MaxInt64)
		if size < old {
			n.mapped.Truncated(size)
		}
	}
	return nil
}

// Contents returns the file's data with what shared mappings stored in
// it (exec reads programs so).
func (n *Node) Contents() []byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pullMapped()
	return n.Data
}
