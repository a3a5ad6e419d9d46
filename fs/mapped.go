package fs

// FileMapping is the memory of a file's shared mappings (mm's
// SharedMemory of a file): the frames that cache its pages. The file's
// data stays the master copy: a read first pulls the frames into it, a
// write or truncate pushes the changed pages to them.
type FileMapping interface {
	// HoldLocked adds a mapping's reference; the node's lock is held.
	HoldLocked()
	// Pull copies the frames into data; Push copies data's pages that
	// overlap [from, to) into the frames. The node's lock is held.
	Pull(data []byte)
	Push(data []byte, from, to int64)
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
		m.n.mapped.Pull(m.n.Data)
	}
}

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
// it (exec reads programs so).
func (n *Node) Contents() []byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.Source().Sync()
	return n.Data
}
