package mm

import (
	"sync/atomic"
	"unsafe"
)

// PageSize is the size of a frame and of a base page.
const PageSize = 4096

const maxRanges = 16

// Frames hands out 4 KiB physical frames. Freed frames form a list threaded
// through their first word; frames never handed out are taken from a few
// ranges in address order, so adding a range costs nothing.
//
// Frames spins on its own lock. A caller in ordinary Go code must disable
// interrupts on its hart first (the trap handler may want the same lock).
type Frames struct {
	lock    uint32
	free    uintptr // head of the freed-frame list, 0 when empty
	ranges  [maxRanges]frameRange
	nranges int
	inUse   uint64
	total   uint64
}

type frameRange struct{ next, end uintptr }

// AddRange gives the frames in [start, end) to the allocator. Both ends are
// rounded inwards to page boundaries. It reports false when the range table is full.
//
//go:nosplit
func (f *Frames) AddRange(start, end uintptr) bool {
	start = (start + PageSize - 1) &^ (PageSize - 1)
	end &^= PageSize - 1
	if end <= start {
		return true
	}
	f.acquire()
	defer f.release()
	if f.nranges == maxRanges {
		return false
	}
	f.ranges[f.nranges] = frameRange{start, end}
	f.nranges++
	f.total += uint64(end-start) / PageSize
	return true
}

// Alloc returns a zeroed frame, or 0 when memory is exhausted.
//
//go:nosplit
func (f *Frames) Alloc() uintptr {
	f.acquire()
	pa := f.free
	if pa != 0 {
		f.free = *(*uintptr)(Ptr(pa))
	} else {
		for i := 0; i < f.nranges; i++ {
			r := &f.ranges[i]
			if r.next < r.end {
				pa = r.next
				r.next += PageSize
				break
			}
		}
	}
	if pa != 0 {
		f.inUse++
	}
	f.release()
	if pa != 0 {
		Zero(pa, PageSize)
	}
	return pa
}

// Free returns a frame that Alloc handed out.
//
//go:nosplit
func (f *Frames) Free(pa uintptr) {
	f.acquire()
	*(*uintptr)(Ptr(pa)) = f.free
	f.free = pa
	f.inUse--
	f.release()
}

// Stats reports the frames handed out and the frames managed.
//
//go:nosplit
func (f *Frames) Stats() (inUse, total uint64) {
	f.acquire()
	inUse, total = f.inUse, f.total
	f.release()
	return
}

//go:nosplit
func (f *Frames) acquire() {
	for !atomic.CompareAndSwapUint32(&f.lock, 0, 1) {
	}
}

//go:nosplit
func (f *Frames) release() { atomic.StoreUint32(&f.lock, 0) }

// Zero clears n bytes at physical address pa; n is a multiple of 8.
// clear is the runtime's memclr, eight stores a loop: a word-by-word loop
// here took seven instructions a word, and zeroing frames was a quarter of
// the instructions of a boot to nginx's first answer.
//
//go:nosplit
func Zero(pa, n uintptr) {
	clear(unsafe.Slice((*uint64)(Ptr(pa)), n/8))
}

// Ptr turns a physical address into a pointer through the kernel's direct
// map of physical memory. Physical memory is outside the Go heap, so the
// garbage collector ignores such pointers.
//
//go:nosplit
func Ptr(pa uintptr) unsafe.Pointer {
	va := pa + DirectMap
	return *(*unsafe.Pointer)(unsafe.Pointer(&va))
}

// PhysOf is the physical address behind a pointer into the direct map.
//
//go:nosplit
func PhysOf(p unsafe.Pointer) uintptr { return uintptr(p) - DirectMap }
