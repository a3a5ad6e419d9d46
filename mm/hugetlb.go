package mm

import (
	"sync"
)

// Huge pages (hugetlb), as Linux's persistent pool: root sets how many
// pages of a size the pool holds (nr_hugepages), the pool takes their
// frames from user memory then, and MAP_HUGETLB memory is made only of
// them. A mapping reserves its pages when it is made (ENOMEM when the
// pool cannot promise them) and takes them on first touch; they go back
// to the pool when the last mapping goes.
//
// A huge page here is Size/PageSize ordinary frames, not a physically
// contiguous block mapped by one leaf entry: what programs see of it is
// Linux's (the pool's counts, the alignment of addresses and lengths,
// memory that is there when the mapping was made), what the TLB sees is
// not.

// HugePageSizes are the huge page sizes of RISC-V's Sv39 leaves above
// the base page, as Linux offers them: 2 MiB (a level-1 leaf) is the
// default, 1 GiB (a level-2 leaf) the gigantic one.
var HugePageSizes = []uintptr{2 << 20, 1 << 30}

// HugePool is the pool of huge pages of one size.
type HugePool struct {
	Size uintptr // bytes in a page

	mem Memory
	mu  sync.Mutex
	// free are the pages no mapping has taken, each Size/PageSize frames.
	free     [][]uintptr
	total    int // nr_hugepages
	reserved int // of free, promised to mappings
}

// NewHugePool returns an empty pool of pages of size bytes, whose frames
// come from mem.
func NewHugePool(mem Memory, size uintptr) *HugePool {
	return &HugePool{Size: size, mem: mem}
}

// framesPer is the number of frames in one of p's pages.
func (p *HugePool) framesPer() int { return int(p.Size / PageSize) }

// Counts reports the pool's pages (HugePages_Total), those no mapping
// has taken (HugePages_Free) and those of them promised to mappings
// (HugePages_Rsvd).
func (p *HugePool) Counts() (total, free, reserved int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total, len(p.free), p.reserved
}

// SetPages makes the pool hold n pages, as a write of nr_hugepages: it
// grows until user memory runs out, and shrinks by the pages that are
// neither taken nor promised. The count it reaches is what Counts says.
func (p *HugePool) SetPages(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.total < n {
		frames := make([]uintptr, 0, p.framesPer())
		for len(frames) < cap(frames) {
			pa := p.mem.AllocFrame()
			if pa == 0 {
				break
			}
			frames = append(frames, pa)
		}
		if len(frames) < cap(frames) {
			for _, pa := range frames {
				p.mem.FreeFrame(pa)
			}
			return
		}
		p.free = append(p.free, frames)
		p.total++
	}
	for p.total > n && len(p.free) > p.reserved {
		last := p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		for _, pa := range last {
			p.mem.FreeFrame(pa)
		}
		p.total--
	}
}

// reserve promises n pages to a mapping: false when fewer than n free
// pages are not promised already.
func (p *HugePool) reserve(n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free)-p.reserved < n {
		return false
	}
	p.reserved += n
	return true
}

// unreserve takes back n promises a mapping did not use.
func (p *HugePool) unreserve(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reserved -= n
}

// take hands out a promised page, zeroed.
func (p *HugePool) take() []uintptr {
	frames := p.pop()
	for _, pa := range frames {
		Zero(pa, PageSize)
	}
	return frames
}

// pop takes a promised page off the free list.
func (p *HugePool) pop() []uintptr {
	p.mu.Lock()
	defer p.mu.Unlock()
	frames := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.reserved--
	return frames
}

// put gives a taken page back.
func (p *HugePool) put(frames []uintptr) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, frames)
}

// hugeState is what a SharedMemory made of huge pages keeps beside its
// frames (SharedMemory.huge).
type hugeState struct {
	pool *HugePool
	// promised are the huge pages (by index in the memory) the pool has
	// promised it and it has not taken yet.
	promised map[uintptr]struct{}
	// private marks a private mapping's memory, which fork copies.
	private bool
	// source is the file memory a private mapping of a huge page file
	// maps: a page takes source's contents at sourceOffset when first
	// touched.
	source       *SharedMemory
	sourceOffset uintptr
	// end is a file's size (nil for anonymous memory): a page wholly
	// past it is a bus error, as past the end of any mapped file.
	end func() int64
}

// framesPer is the number of frames in one huge page.
func (h *hugeState) framesPer() uintptr { return uintptr(h.pool.framesPer()) }

// promise has the pool promise the pages [first, first+count) that are
// neither taken nor promised: ErrNoMemory, and nothing promised, when it
// cannot. s.mu is held.
func (s *SharedMemory) promise(first, count uintptr) error {
	h, n := s.huge, s.huge.framesPer()
	unheld := func(g uintptr) bool {
		_, taken := s.pages[g*n]
		_, promised := h.promised[g]
		return !taken && !promised
	}
	// Counted first, so that nothing the length of a user's mapping is
	// allocated before the pool says yes.
	want := 0
	for g := first; g < first+count; g++ {
		if unheld(g) {
			want++
		}
	}
	if !h.pool.reserve(want) {
		return ErrNoMemory
	}
	for g := first; g < first+count; g++ {
		if unheld(g) {
			h.promised[g] = struct{}{}
		}
	}
	return nil
}

func newHugeState(pool *HugePool) *SharedMemory {
	s := newSharedMemory(pool.mem)
	s.huge = &hugeState{pool: pool, promised: map[uintptr]struct{}{}}
	return s
}

// NewHugeMemory returns anonymous memory of size bytes (a multiple of
// pool's page size) made of pool's pages, all of them promised now
// unless noReserve (MAP_NORESERVE: a page is taken on first touch if one
// is free, and the touch is a bus error if none is): ErrNoMemory when the
// pool cannot promise them. It is shared memory for a MAP_SHARED
// mapping; private marks it as a MAP_PRIVATE mapping's, which a fork
// copies instead of sharing.
func NewHugeMemory(pool *HugePool, size uintptr, private, noReserve bool) (*SharedMemory, error) {
	s := newHugeState(pool)
	s.huge.private = private
	if !noReserve {
		if err := s.promise(0, size/pool.Size); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// NewHugeFileMemory returns the memory of a huge page file (a memfd made
// with MFD_HUGETLB), whose size end reports: its data lives in pool's
// pages, promised by each mapping (ReserveHuge) or taken on first touch
// when free. The file holds the reference newSharedMemory gives and
// drops it with Release.
func NewHugeFileMemory(pool *HugePool, end func() int64) *SharedMemory {
	s := newHugeState(pool)
	s.huge.end = end
	return s
}

// ReserveHuge has huge file memory's pool promise the pages of size
// bytes at offset that it does not hold yet, for a shared mapping:
// ErrNoMemory when it cannot. The promises stay with the file.
func (s *SharedMemory) ReserveHuge(offset, size uintptr) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	hs := s.huge.pool.Size
	return s.promise(offset/hs, (offset+size+hs-1)/hs-offset/hs)
}

// NewHugePrivateCopy returns the memory of a private mapping of size
// bytes at offset of huge file memory src, which it holds: its pages,
// promised now unless noReserve, start as src's when first touched
// (Linux shares them until the first write instead).
func NewHugePrivateCopy(src *SharedMemory, offset, size uintptr, noReserve bool) (*SharedMemory, error) {
	s, err := NewHugeMemory(src.huge.pool, size, true, noReserve)
	if err != nil {
		return nil, err
	}
	src.hold() // the file's pages outlive its descriptor while mapped, as Linux's vm_file
	s.huge.source, s.huge.sourceOffset, s.huge.end = src, offset, src.huge.end
	return s, nil
}

// HugePool is the pool of huge memory's pages; nil for other memory.
func (s *SharedMemory) HugePool() *HugePool {
	if s.huge == nil {
		return nil
	}
	return s.huge.pool
}

// hugeFrame returns the frame of page index i of huge memory, taking the
// huge page that holds it from the pool on first touch: its promise, or
// a free page; ErrBus when there is none, or when the page lies past the
// end of the file. s.mu is held.
func (s *SharedMemory) hugeFrame(i uintptr) (uintptr, error) {
	h, n := s.huge, s.huge.framesPer()
	if h.end != nil && int64((i+h.sourceOffset/PageSize)*PageSize) >= h.end() {
		return 0, ErrBus
	}
	first := i - i%n
	if pa, ok := s.pages[i]; ok {
		return pa, nil
	}
	if _, ok := h.promised[first/n]; !ok && !h.pool.reserve(1) {
		return 0, ErrBus // MAP_NORESERVE memory, and no page free
	} else if ok {
		delete(h.promised, first/n)
	}
	s.installHugePage(first, h.pool.take())
	if src := h.source; src != nil {
		src.copyHugePage(s, first, first+h.sourceOffset/PageSize)
	}
	return s.pages[i], nil
}

// hasPage reports whether page index i has a frame.
func (s *SharedMemory) hasPage(i uintptr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pages[i]
	return ok
}

// installHugePage makes frames the page at index first. s.mu is held.
func (s *SharedMemory) installHugePage(first uintptr, frames []uintptr) {
	for k, pa := range frames {
		s.pages[first+uintptr(k)] = pa
	}
}

// copyHugePage copies src's huge page at index from, where it has one,
// into dst's at index to. dst's lock is held (a copy locks its file after
// itself).
func (src *SharedMemory) copyHugePage(dst *SharedMemory, to, from uintptr) {
	src.mu.Lock()
	defer src.mu.Unlock()
	for k := range dst.huge.framesPer() {
		if pa, ok := src.pages[from+k]; ok {
			copy((*[PageSize]byte)(Ptr(dst.pages[to+k]))[:], (*[PageSize]byte)(Ptr(pa))[:])
		}
	}
}

// freeHuge gives huge memory's pages and promises back to its pool, and
// a private copy's hold of its file. s.mu is held (a copy locks its file
// after itself, as hugeFrame does).
func (s *SharedMemory) freeHuge() {
	s.dropHugePages(0, ^uintptr(0), false)
	if src := s.huge.source; src != nil {
		s.huge.source = nil
		src.release()
	}
}

// dropHugePages gives back the huge pages [first, end) of s (by index):
// those taken to the pool, the promises of the others too. With
// keepPromise each page given back stays promised. s.mu is held.
func (s *SharedMemory) dropHugePages(first, end uintptr, keepPromise bool) {
	h, n := s.huge, s.huge.framesPer()
	for i := range s.pages {
		g := i / n
		if i%n != 0 || g < first || g >= end {
			continue
		}
		frames := make([]uintptr, n)
		for k := range frames {
			frames[k] = s.pages[i+uintptr(k)]
			delete(s.pages, i+uintptr(k))
		}
		h.pool.put(frames)
		if keepPromise && h.pool.reserve(1) {
			h.promised[g] = struct{}{}
		}
	}
	if keepPromise {
		return
	}
	for g := range h.promised {
		if g >= first && g < end {
			delete(h.promised, g)
			h.pool.unreserve(1)
		}
	}
}

// copyHuge returns a copy of size bytes at offset of private huge memory
// for a forked child, with pages of its own, all promised: ErrNoMemory
// when the pool cannot promise them.
func (s *SharedMemory) copyHuge(offset, size uintptr) (*SharedMemory, error) {
	c, err := NewHugeMemory(s.huge.pool, size, true, false)
	if err != nil {
		return nil, err
	}
	if src := s.huge.source; src != nil {
		src.hold()
		c.huge.source, c.huge.sourceOffset, c.huge.end = src, s.huge.sourceOffset+offset, s.huge.end
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n, first := c.huge.framesPer(), offset/PageSize
	for g := range size / c.huge.pool.Size {
		if s.hasPage(first + g*n) {
			delete(c.huge.promised, g)
			c.installHugePage(g*n, c.huge.pool.take())
			s.copyHugePage(c, g*n, first+g*n)
		}
	}
	return c, nil
}

// dropHugeRange gives back the pages of size bytes at offset of private
// huge memory whose mapping goes (munmap, mremap shrinking): those taken
// to the pool, the promises of the others too, as Linux's close of a
// private hugetlb VMA does. With keepPromise (MADV_DONTNEED) the range
// stays mapped: its taken pages go back, each still promised, and the
// next touch finds a zeroed page (or the file's). Shared memory keeps its
// pages while any mapping is left.
func (s *SharedMemory) dropHugeRange(offset, size uintptr, keepPromise bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hs := s.huge.pool.Size
	s.dropHugePages(offset/hs, (offset+size)/hs, keepPromise)
}

// TruncateHuge drops the pages and promises of huge file memory wholly
// past size, when no mapping maps it: the pages of a mapped file stay
// until its last mapping goes (Linux unmaps them from every mapping).
func (s *SharedMemory) TruncateHuge(size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vmas > 1 {
		return
	}
	hs := int64(s.huge.pool.Size)
	s.dropHugePages(uintptr((size+hs-1)/hs), ^uintptr(0), false)
}

// ReadHuge copies huge memory's bytes at off into p (zeros where no page
// was taken) and reports the huge pages taken, for a file's read.
func (s *SharedMemory) ReadHuge(p []byte, off uintptr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(p) > 0 {
		in := off % PageSize
		n := min(uintptr(len(p)), PageSize-in)
		if pa, ok := s.pages[off/PageSize]; ok {
			copy(p[:n], (*[PageSize]byte)(Ptr(pa))[in:in+n])
		} else {
			clear(p[:n])
		}
		p, off = p[n:], off+n
	}
}

// HugeTaken counts the huge pages huge memory has taken (a file's
// blocks).
func (s *SharedMemory) HugeTaken() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pages) / int(s.huge.framesPer())
}

// HugePageSize is the page size of v's memory when it is huge memory,
// else 0.
func (v *VMA) HugePageSize() uintptr {
	if v.Shared != nil && v.Shared.huge != nil {
		return v.Shared.huge.pool.Size
	}
	return 0
}

// splitsHugePage reports whether making x a VMA boundary would cut a
// huge page in two, which Linux refuses (EINVAL).
func (as *AddressSpace) splitsHugePage(x uintptr) bool {
	v := as.vmas.find(x)
	if v == nil || v.Start == x {
		return false
	}
	size := v.HugePageSize()
	return size != 0 && (x-v.Start)%size != 0
}

// hugePrivate reports whether s is a private mapping's huge memory.
func (s *SharedMemory) hugePrivate() bool { return s.huge != nil && s.huge.private }
