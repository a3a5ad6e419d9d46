//go:build riscv64

package riscv64

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"github.com/jiege-go/jiege/mm"
)

// What the rest of the kernel uses. These run as ordinary Go code in kernel
// threads; they mask interrupts where they share state with the trap handler,
// and call only nosplit functions while masked: a function the runtime may
// preempt at its prologue could switch goroutines with interrupts off, and
// a thread that runs on with them off answers no TLB shootdown.

// BootInfo describes how the machine was started.
type BootInfo struct {
	DTB        uintptr // physical address of the device tree
	InitrdBase uintptr
	InitrdEnd  uintptr
	RAMBase    uintptr
	RAMSize    uintptr
	// The kernel image's code starts at KernelStart (0x80010000 booted by
	// the trampoline; as an Image, 4 KiB above where the firmware loaded
	// it), and the image ends at KernelEnd. Its code is mapped at KernelVA.
	KernelStart, KernelEnd, KernelVA uintptr
	// SBI: booted as the payload of SBI firmware (sbiEntry), not by Entry.
	SBI       bool
	BootTicks uint64 // time CSR at Entry
	Timebase  uint64 // time CSR ticks per second
	// The kernel's half of every address space: the direct map of
	// physical memory at DirectMap, the runtime's window [HeapStart, HeapEnd).
	DirectMap, HeapStart, HeapEnd uintptr
}

// Boot returns what the boot code found.
func Boot() BootInfo {
	return BootInfo{
		DTB: bootDTB, InitrdBase: initrdBase, InitrdEnd: initrdEnd,
		RAMBase: ramBase, RAMSize: ramSize, KernelStart: kernelStart() - imageOffset, KernelEnd: kernelEnd() - imageOffset, KernelVA: kernelStart(),
		SBI:       sbiBoot,
		BootTicks: bootTicks, Timebase: timebase,
		DirectMap: directMap, HeapStart: kvaBase, HeapEnd: kvaLimit,
	}
}

// Ticks returns the time CSR.
func Ticks() uint64 { return readTime() }

// TicksToNs converts time CSR ticks to nanoseconds.
func TicksToNs(t uint64) int64 { return ticksToNs(t) }

// SetWallClock sets the wall-clock time now, in nanoseconds since the Unix
// epoch, as read from the RTC.
func SetWallClock(ns int64) {
	old := disableInterrupts()
	wallOffsetNs = ns - ticksToNs(readTime())
	setKernelVDSOWallClock(wallOffsetNs)
	wallClockSeen = true
	restoreInterrupts(old)
}

// WallClockOffset is CLOCK_REALTIME minus the time CSR converted to ns.
func WallClockOffset() int64 {
	old := disableInterrupts()
	off := wallOffsetNs
	restoreInterrupts(old)
	return off
}

// PowerOff stops the machine; QEMU exits with status code (0 = success).
func PowerOff(code int) { powerOff(code) }

// Reboot restarts the machine (QEMU with -no-reboot exits with status 0);
// it returns when no firmware or device can.
func Reboot() { reboot() }

// MemoryStats reports physical frames in use and managed, in bytes.
func MemoryStats() (inUse, total uint64) {
	old := disableInterrupts()
	inUse, total = frames.Stats()
	restoreInterrupts(old)
	return inUse * mm.PageSize, total * mm.PageSize
}

// AllocFrame returns a zeroed physical frame, or 0 when memory is exhausted.
func AllocFrame() uintptr {
	old := disableInterrupts()
	pa := frames.Alloc()
	restoreInterrupts(old)
	return pa
}

// FreeFrame returns a frame from AllocFrame.
func FreeFrame(pa uintptr) {
	old := disableInterrupts()
	frames.Free(pa)
	restoreInterrupts(old)
}

// MapUserPage maps va to pa in the user page table rooted at root.
func MapUserPage(root, va, pa uintptr, perm uint64) bool {
	old := disableInterrupts()
	ok := mm.Map(root, va, pa, perm|mm.PTEUser|mm.PTEAccessed|mm.PTEDirty, &frames)
	restoreInterrupts(old)
	return ok
}

// FreePageTable frees a user page table and the frames it maps. The walk
// runs with interrupts on (it is ordinary Go code, which the runtime may
// preempt: a goroutine switched in with interrupts off would keep them
// off); each frame is freed with them off.
func FreePageTable(root uintptr) {
	ecall2(sysRetire, root, 0)
	forgetRoot(root)
	mm.FreeTables(root, true, FreeFrame)
}

// NewUserFrame returns a zeroed user context on a frame of its own (outside
// the Go heap: the trap path stores registers to it), or nil.
func NewUserFrame() *Frame {
	pa := AllocFrame()
	if pa == 0 {
		return nil
	}
	return (*Frame)(mm.Ptr(pa))
}

// FreeUserFrame releases a context from NewUserFrame. The kernel threads
// that ran it forget it first: the timer charges a thread's time there.
func FreeUserFrame(f *Frame) {
	old := disableInterrupts()
	lockKernel(thisHart())
	for i := range threads[:threadsUsed] {
		if threads[i].lastUser == uintptr(unsafe.Pointer(f)) {
			threads[i].lastUser = 0
		}
	}
	unlockKernel()
	restoreInterrupts(old)
	FreeFrame(mm.PhysOf(unsafe.Pointer(f)))
}

// NewUserRoot returns a root table for a user address space, holding the
// kernel's half (every address space maps the kernel), or 0.
func NewUserRoot() uintptr { return withKernelHalf(AllocFrame()) }

// withKernelHalf copies the kernel's root entries into a zeroed root.
func withKernelHalf(root uintptr) uintptr {
	if root != 0 {
		mm.CopyRootEntries(root, kernelRoot, kernelHalf, kernelHalfEnd)
	}
	return root
}

// EnableIRQ gives PLIC interrupt irq a priority and opens every hart's
// S-mode threshold; the source itself is unmasked by IRQ.Wait.
func EnableIRQ(irq int) {
	if irqHart == nil {
		return
	}
	Write32(plicBase+uintptr(4*irq), 1)
	for i := 0; i < nHarts; i++ {
		if c := harts[i].plicContext; c != noContext {
			Write32(plicBase+plicContext+0x1000*c, 0)
		}
	}
}

// EnableIRQAcked is EnableIRQ for a device whose interrupt the trap
// handler acknowledges itself, writing the bits it reads at status to ack
// (virtio-mmio's InterruptStatus and InterruptACK). The device then lowers
// its line at once, so the source stays unmasked: an interrupt costs no
// PLIC masking and unmasking, and IRQ.Wait no PLIC access at all.
func EnableIRQAcked(irq int, status, ack uintptr) {
	if irqHart == nil {
		return
	}
	EnableIRQ(irq)
	old := disableInterrupts()
	lockKernel(thisHart())
	irqAcks[irq].status, irqAcks[irq].ack = status, ack
	plicEnable(uint32(irq), true)
	unlockKernel()
	restoreInterrupts(old)
}

// QuietOnIRQ names a 16-bit word of kernel memory that the trap handler
// sets to 1 when irq (EnableIRQAcked) fires: a virtqueue's available-ring
// flags, where 1 (VRING_AVAIL_F_NO_INTERRUPT) tells the device not to
// interrupt for it until the driver, having worked through the queue,
// clears it again, as Linux's interrupt handler leaves a queue to NAPI.
// Without it every buffer the device used between the interrupt and the
// driver's goroutine running would interrupt again.
func QuietOnIRQ(irq int, word unsafe.Pointer) {
	old := disableInterrupts()
	lockKernel(thisHart())
	irqAcks[irq].quiet = (*uint16)(word)
	unlockKernel()
	restoreInterrupts(old)
}

// SeedRandom mixes seed into the generator behind the runtime's getrandom.
func SeedRandom(seed []byte) {
	old := disableInterrupts()
	lockKernel(thisHart())
	randStream.seed(seed)
	randSeeded = true
	unlockKernel()
	restoreInterrupts(old)
}

// IRQ is a PLIC interrupt as the Go runtime's netpoller sees it: a
// goroutine waiting for it parks like one waiting for a socket.
type IRQ struct {
	f  *os.File
	rc syscall.RawConn
}

// OpenIRQ opens PLIC interrupt irq (1..maxIRQ-1) for waiting.
func OpenIRQ(irq int) (*IRQ, error) {
	if irq <= 0 || irq >= maxIRQ {
		return nil, fmt.Errorf("irq %d out of range", irq)
	}
	if irqHart == nil {
		return nil, fmt.Errorf("irq %d: the device tree names no PLIC context of S-mode", irq)
	}
	f := os.NewFile(uintptr(irqFDBase+irq), fmt.Sprintf("irq%d", irq))
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &IRQ{f: f, rc: rc}, nil
}

// Wait blocks the calling goroutine until the interrupt fires, unmasking
// it first unless the trap handler acknowledges it (EnableIRQAcked); the
// trap handler masks it again then.
func (q *IRQ) Wait() {
	q.rc.Read(func(fd uintptr) bool {
		r, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, 0, 0)
		return errno == 0 && r == 1
	})
}
