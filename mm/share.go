package mm

import "sync"

// frameRefs counts the owners of private frames that fork shared between
// address spaces (copy on write). A frame it does not list has one owner.
// The address spaces of one fork tree share one frameRefs, each under its
// own process's lock, hence the mutex.
type frameRefs struct {
	mu     sync.Mutex
	owners map[uintptr]uint32
}

func newFrameRefs() *frameRefs { return &frameRefs{owners: map[uintptr]uint32{}} }

// share adds an owner to the frame pa.
func (r *frameRefs) share(pa uintptr) {
	r.mu.Lock()
	if n := r.owners[pa]; n == 0 {
		r.owners[pa] = 2
	} else {
		r.owners[pa] = n + 1
	}
	r.mu.Unlock()
}

// shared reports whether pa has more than one owner.
func (r *frameRefs) shared(pa uintptr) bool {
	r.mu.Lock()
	_, ok := r.owners[pa]
	r.mu.Unlock()
	return ok
}

// drop removes an owner and reports whether it was the last one.
func (r *frameRefs) drop(pa uintptr) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch n := r.owners[pa]; n {
	case 0:
		return true
	case 2:
		delete(r.owners, pa)
	default:
		r.owners[pa] = n - 1
	}
	return false
}

// SharedMemory is anonymous MAP_SHARED memory: its frames belong to it, not
// to a page table, so every address space that maps it, before or after a
// fork, sees the same pages. It lives while a VMA refers to it.
type SharedMemory struct {
	mu    sync.Mutex
	mem   Memory
	pages map[uintptr]uintptr // page index -> frame
	vmas  int                 // VMAs that refer to it, in every address space
	// privates counts the private mappings of a file that map its frames
	// read-only until they write (VMA.Cache); they never store into them.
	privates int
	// spaces are the address spaces whose VMAs map a file's memory, with
	// how many VMAs each: a truncate tells them (Truncated).
	spaces map[*AddressSpace]int
	// kernelOwned memory is written by the kernel alone (the vDSO's data
	// page): user mappings of it can never be made writable.
	kernelOwned bool
	// file is the file whose pages these are (filemem.go), or nil.
	file FileSource
	// detached is a segment's hook (NewSegmentMemory).
	detached func()
	// huge is huge memory's pool and promises (hugetlb.go); nil for
	// memory of ordinary pages.
	huge *hugeState
}

// NewKernelMemory returns shared memory that the kernel holds and writes,
// and that user programs map read-only (MapKernelMemory). The kernel's own
// reference keeps it alive whatever the programs unmap.
func NewKernelMemory(mem Memory) *SharedMemory {
	s := newSharedMemory(mem)
	s.kernelOwned = true
	return s
}

// Frame returns the frame of page index i, allocated zeroed on first use;
// 0 when memory is exhausted.
func (s *SharedMemory) Frame(i uintptr) uintptr {
	pa, _ := s.frame(i)
	return pa
}

// NewSegmentMemory returns anonymous shared memory held by its maker (a
// System V shared memory segment), which user programs map read-write or
// read-only (Mapping.Held). Its frames go when the maker has released its
// hold (Release) and no mapping is left. detached is called, without s's lock,
// each time a mapping's reference goes while the maker still holds it.
func NewSegmentMemory(mem Memory, detached func()) *SharedMemory {
	s := newSharedMemory(mem)
	s.detached = detached
	return s
}

// References counts the VMAs that map s, and its maker's hold if it has
// not released it.
func (s *SharedMemory) References() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vmas
}

// Resident counts the pages that have frames.
func (s *SharedMemory) Resident() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pages)
}

func newSharedMemory(mem Memory) *SharedMemory {
	return &SharedMemory{mem: mem, pages: map[uintptr]uintptr{}, vmas: 1}
}

// frame returns the frame of page index i, allocating a zeroed one, or
// one holding the file's page, on first use: ErrNoMemory when there is no
// frame, ErrBus when the page lies wholly past the end of the file (the
// access Linux answers with SIGBUS).
func (s *SharedMemory) frame(i uintptr) (uintptr, error) {
	if s.file != nil {
		s.file.Lock()
		defer s.file.Unlock()
		if int64(i) >= (s.file.Size()+PageSize-1)/PageSize {
			return 0, ErrBus
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.huge != nil {
		return s.hugeFrame(i)
	}
	pa, ok := s.pages[i]
	if !ok {
		if pa = s.mem.AllocFrame(); pa == 0 {
			return 0, ErrNoMemory
		}
		s.pages[i] = pa
		if s.file != nil {
			s.file.ReadPage(i, (*[PageSize]byte)(Ptr(pa))[:])
		}
	}
	return pa, nil
}

func (s *SharedMemory) hold() {
	s.mu.Lock()
	s.vmas++
	s.mu.Unlock()
}

// enter and leave count a VMA of as that maps a file's memory.
func (s *SharedMemory) enter(as *AddressSpace) {
	if s.file == nil {
		return
	}
	s.mu.Lock()
	if s.spaces == nil {
		s.spaces = map[*AddressSpace]int{}
	}
	s.spaces[as]++
	s.mu.Unlock()
}

func (s *SharedMemory) leave(as *AddressSpace) {
	if s.file == nil {
		return
	}
	s.mu.Lock()
	if s.spaces[as]--; s.spaces[as] <= 0 {
		delete(s.spaces, as)
	}
	s.mu.Unlock()
}

func (s *SharedMemory) holdPrivate() {
	s.mu.Lock()
	s.privates++
	s.mu.Unlock()
}

// release drops a VMA's reference. The last shared mapping of a file
// writes its pages back to it (only shared mappings store into them); the
// last reference of any kind frees the frames.
func (s *SharedMemory) release() { s.drop(false) }

// releasePrivate drops a private file mapping's reference (holdPrivate).
func (s *SharedMemory) releasePrivate() { s.drop(true) }

func (s *SharedMemory) drop(private bool) {
	if s.dropped(private) && s.detached != nil {
		s.detached()
	}
}

// dropped is drop's work under the locks; it reports whether references
// are left.
func (s *SharedMemory) dropped(private bool) bool {
	if s.file != nil {
		s.file.Lock()
		defer s.file.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if private {
		s.privates--
	} else if s.vmas--; s.vmas == 0 && s.file != nil {
		for i, pa := range s.pages {
			s.file.WritePage(i, (*[PageSize]byte)(Ptr(pa))[:])
		}
	}
	if s.vmas > 0 || s.privates > 0 {
		return true
	}
	if s.huge != nil {
		s.freeHuge()
	} else {
		for _, pa := range s.pages {
			s.mem.FreeFrame(pa)
		}
	}
	s.pages = nil
	if s.file != nil {
		s.file.Unmapped()
	}
	return false
}
