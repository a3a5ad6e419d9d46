package mm

// File mappings. The file's data (an fs node's pages) stays the master
// copy; the frames of its MAP_SHARED mappings are a cache of its pages,
// one SharedMemory per file, that the file keeps coherent: a read of the
// file first copies the cached frames back into its data (Pull), and a
// write or truncate copies the changed pages into them (Push). When the
// last shared mapping goes, the frames are written back; when no mapping
// is left, they are freed. Private file mappings map the same frames
// read-only, so they see the file's changes to a page until they write it
// and get a copy of their own (copy on write, as Linux maps its page
// cache).

import "errors"

// FileSource is the file behind file mappings.
type FileSource interface {
	// Lock and Unlock are the file's lock, held whenever data moves
	// between the file and frames.
	Lock()
	Unlock()
	// Size is the file's length in bytes: a page past it is not mapped.
	Size() int64
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

// Source is the file whose pages s holds, or nil for anonymous memory.
func (s *SharedMemory) Source() FileSource { return s.file }

// HoldLocked adds a shared mapping's reference; the file's lock is held.
func (s *SharedMemory) HoldLocked() { s.hold() }

// HoldPrivateLocked adds a private mapping's reference (Mapping.Cache);
// the file's lock is held.
func (s *SharedMemory) HoldPrivateLocked() { s.holdPrivate() }

// Shared reports whether a shared mapping maps the memory.
func (s *SharedMemory) Shared() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vmas > 0
}

// Release drops a reference taken by HoldLocked for a mapping that was
// not made, or the maker's hold of a segment (NewSegmentMemory).
func (s *SharedMemory) Release() { s.release() }

// ReleasePrivate drops a reference taken by HoldPrivateLocked for a
// mapping that was not made.
func (s *SharedMemory) ReleasePrivate() { s.releasePrivate() }

// Pull copies the cached pages into the file, up to its end. The file's
// lock is held. Without a shared mapping nothing can have stored into
// them since the last one wrote them back.
func (s *SharedMemory) Pull() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vmas == 0 {
		return
	}
	for i, pa := range s.pages {
		s.file.WritePage(i, (*[PageSize]byte)(Ptr(pa))[:])
	}
}

// Truncated tells the address spaces that map the file that it now ends
// at size, shorter than it was: each drops its pages past the end before
// it next runs user code (AddressSpace.DropTruncated), so that touching
// them is SIGBUS as on Linux. The file's lock is held.
func (s *SharedMemory) Truncated(size int64) {
	page := uintptr((size + PageSize - 1) / PageSize)
	s.mu.Lock()
	defer s.mu.Unlock()
	for as := range s.spaces {
		as.noteTruncation(s, page)
	}
}

// Push copies the file's pages that overlap [from, to) into their cached
// frames, zeros past the file's end. The file's lock is held.
func (s *SharedMemory) Push(from, to int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, pa := range s.pages {
		off := int64(i * PageSize)
		if off+PageSize <= from || off >= to {
			continue
		}
		s.file.ReadPage(i, (*[PageSize]byte)(Ptr(pa))[:])
	}
}

// MapFilePages maps every page of the private file mapping over
// [start, end) to the file's cached frame, as a read fault would, with
// one flush: the loader spares a new program a trap for each page of its
// code. Pages past the end of the file stay unmapped.
func (as *AddressSpace) MapFilePages(start, end uintptr) error {
	defer as.mem.Flush(as.root)
	// The loader's: no thread runs a new program's table yet, so its
	// processors fence when they first enter it.
	defer as.mem.SyncICache(as.root)
	for va := pageDown(start); va < end; va += PageSize {
		v := as.vmas.find(va)
		if v == nil || v.Cache == nil {
			return ErrFault
		}
		if as.pte(va) != nil {
			continue
		}
		pa, err := v.Cache.frame((v.Offset + va - v.Start) / PageSize)
		if errors.Is(err, ErrBus) {
			return nil
		}
		if err != nil {
			return err
		}
		if !as.mapPage(va, pa, as.leafBits(v, pa, true)) {
			return ErrNoMemory
		}
	}
	return nil
}

// faultAround is how many pages, in an aligned window, a read fault of a
// private file mapping maps at once, as Linux's fault_around_bytes
// (64 KiB): a program's first pass over a library's code then traps once
// per window, not once per page. Linux maps what its page cache holds,
// which for files in memory is every page; here the file's frames are
// filled for them (a copy costs less than a trap).
const faultAround = 16

// mapWindow maps the file's page at va, which a read or execute fault
// found absent, and the other absent pages of its window that are in v
// and in the file, while frames are to be had; their frames are filled
// first, so that code among them is synced once, before any is mapped.
// No fence: a hart that cached one of them as missing faults once more,
// and Fault finds it mapped (Linux's spurious-fault fix does the same).
func (as *AddressSpace) mapWindow(v *VMA, va uintptr) error {
	pa, err := v.Cache.frame((v.Offset + va - v.Start) / PageSize)
	if err != nil {
		return err
	}
	lo := max(v.Start, va&^(faultAround*PageSize-1))
	hi := min(v.End, va&^(faultAround*PageSize-1)+faultAround*PageSize)
	var around [faultAround]uintptr // the frames of the other pages to map, or 0
	for page := lo; page < hi; page += PageSize {
		if page == va || as.pte(page) != nil {
			continue
		}
		f, err := v.Cache.frame((v.Offset + page - v.Start) / PageSize)
		if err != nil {
			break
		}
		around[(page-lo)/PageSize] = f
	}
	if v.Perm&PTEExec != 0 {
		as.mem.SyncICache(as.root)
	}
	if !as.mapPage(va, pa, as.leafBits(v, pa, true)) {
		return ErrNoMemory
	}
	for page := lo; page < hi; page += PageSize {
		if f := around[(page-lo)/PageSize]; f != 0 && !as.mapPage(page, f, as.leafBits(v, f, true)) {
			break
		}
	}
	return nil
}
