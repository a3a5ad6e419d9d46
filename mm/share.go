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
	// kernelOwned memory is written by the kernel alone (the vDSO's data
	// page): user mappings of it can never be made writable.
	kernelOwned bool
	// file is the file whose pages these are (filemem.go), or nil.
	file FileSource
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
func (s *SharedMemory) Frame(i uintptr) uintptr { return s.frame(i) }

func newSharedMemory(mem Memory) *SharedMemory {
	return &SharedMemory{mem: mem, pages: map[uintptr]uintptr{}, vmas: 1}
}

// frame returns the frame of page index i, allocating a zeroed one, or
// one holding the file's page, on first use.
func (s *SharedMemory) frame(i uintptr) uintptr {
	if s.file != nil {
		s.file.Lock()
		defer s.file.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pa, ok := s.pages[i]
	if !ok {
		if pa = s.mem.AllocFrame(); pa != 0 {
			s.pages[i] = pa
			if s.file != nil {
				s.file.ReadPage(i, (*[PageSize]byte)(Ptr(pa))[:])
			}
		}
	}
	return pa
}

func (s *SharedMemory) hold() {
	s.mu.Lock()
	s.vmas++
	s.mu.Unlock()
}

// release drops a VMA's reference; the last one frees the frames, a
// file's after writing them back to it.
func (s *SharedMemory) release() {
	if s.file != nil {
		s.file.Lock()
		defer s.file.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vmas--; s.vmas > 0 {
		return
	}
	for i, pa := range s.pages {
		if s.file != nil {
			s.file.WritePage(i, (*[PageSize]byte)(Ptr(pa))[:])
		}
		s.mem.FreeFrame(pa)
	}
	s.pages = nil
	if s.file != nil {
		s.file.Unmapped()
	}
}
