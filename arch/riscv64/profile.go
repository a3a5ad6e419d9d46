//go:build riscv64

package riscv64

import (
	"unsafe"

	"github.com/jiege-go/jiege/profiling"
)

// profileTick gives the profiler the pc that the timer interrupted on h:
// a user program's (with its process id, Frame.Owner) or the kernel's.
//
//go:nosplit
func profileTick(h *hart, now uint64) {
	f := frameAt(h.save)
	var pid uint32
	if f.Status&sstatusSPP == 0 { // the trap came from U-mode
		pid = uint32(f.Owner)
	}
	profiling.Tick(h.id, now, f.PC, pid)
}

// EnableProfiling starts the timer sampling pcs rateHz times a second on
// every hart (profile= on the command line). Kernel threads run with
// interrupts masked (the boot thread starts so and the others are cloned
// from it): for the timer to sample them, every thread from here on runs
// with interrupts enabled.
func EnableProfiling(rateHz uint64) {
	old := disableInterrupts()
	profiling.Enable(rateHz, timebase)
	for i := range threads {
		threads[i].frame.Status |= sstatusSPIE
	}
	restoreInterrupts(old | sstatusSIE)
}

// ReleaseProfiler gives the whole pages of the profiler's tables to the
// frame allocator and returns how many bytes it gave: with profiling off
// nothing touches them. EnableProfiling must not run after it.
func ReleaseProfiler() uintptr {
	var n uintptr
	for _, t := range [][2]uintptr{
		{uintptr(unsafe.Pointer(&profiling.Ring)), unsafe.Sizeof(profiling.Ring)},
		{uintptr(unsafe.Pointer(&profiling.Mappings)), unsafe.Sizeof(profiling.Mappings)},
	} {
		pa := t[0] - imageOffset
		start, end := (pa+pageMask)&^pageMask, (pa+t[1])&^pageMask
		if end <= start {
			continue
		}
		old := disableInterrupts()
		ok := frames.AddRange(start, end)
		restoreInterrupts(old)
		if ok {
			n += end - start
		}
	}
	return n
}
