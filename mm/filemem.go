package mm

// File mappings. The file's data (an fs node's bytes) stays the master
// copy; the frames of its MAP_SHARED mappings are a cache of its pages,
// one SharedMemory per file, that the file keeps coherent: a read of the
// file first copies the cached frames back into its data (Pull), and a
// write or truncate copies the changed pages into them (Push). When the
// last shared mapping goes, the frames are written back and freed.
// Private file mappings copy a page from the file (through the cache when
// there is one) when it is first touched.

// FileSource is the file behind file mappings.
type FileSource interface {
	// Lock and Unlock are the file's lock, held whenever data moves
	// between the file and frames.
	Lock()
	Unlock()
	// Sync brings what was stored through shared mappings into the
	// file's data (Pull), before a private mapping copies a page.
	Sync()
	// ReadPage copies page i of the file's data into p, zeros past its end.
	ReadPage(i uintptr, p []byte)
	// WritePage copies p into page i of the file, up to its end.
	WritePage(i uintptr, p []byte)
	// Unmapped tells the file that its shared mappings' memory is gone
	// (its pages were written back).
	Unmapped()
}

// NewFileMemory returns the memory of a file's shared mappings, with no
// mapping yet: the caller holds the file's lock and calls HoldLocked for
// the mapping it makes.
func (as *AddressSpace) NewFileMemory(file FileSource) *SharedMemory {
	return &SharedMemory{mem: as.mem, pages: map[uintptr]uintptr{}, file: file}
}

// HoldLocked adds a mapping's reference; the file's lock is held.
func (s *SharedMemory) HoldLocked() { s.hold() }

// Release drops a reference taken by HoldLocked for a mapping that was
// not made.
func (s *SharedMemory) Release() { s.release() }

// Pull copies the cached pages into data, the file's contents, up to its
// end. The file's lock is held.
func (s *SharedMemory) Pull(data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, pa := range s.pages {
		if off := i * PageSize; off < uintptr(len(data)) {
			copy(data[off:], (*[PageSize]byte)(Ptr(pa))[:])
		}
	}
}

// Push copies the pages of data that overlap [from, to) into their cached
// frames, zeros past the end of data. The file's lock is held.
func (s *SharedMemory) Push(data []byte, from, to int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, pa := range s.pages {
		off := int64(i * PageSize)
		if off+PageSize <= from || off >= to {
			continue
		}
		page := (*[PageSize]byte)(Ptr(pa))
		n := 0
		if off < int64(len(data)) {
			n = copy(page[:], data[off:])
		}
		clear(page[n:])
	}
}
