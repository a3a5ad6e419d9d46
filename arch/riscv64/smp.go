//go:build riscv64

package riscv64

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/jiege-go/jiege/mm"
)

// Several harts. Every hart runs the same trap handler on its own trap
// stack; the state that handler shares (threads, deadlines, futex and poll
// waiters, interrupt records, the kernel page table) is guarded by one
// spinlock, the kernel lock, taken with interrupts off for a whole trap.
// The frame allocator has its own spinlock (mm.Frames), so ordinary Go
// code that allocates frames never waits for a trap on another hart.
//
// A hart with nothing to run waits in wfi with the lock released and is
// woken by a software interrupt (CLINT msip) when a thread becomes
// runnable, by its timer or by a device.

const clintMsip = 0x0 // + 4 * hart: software interrupt pending

// lockSpins is how often a hart tries for the kernel lock before it
// sleeps in wfi until the holder lets go. Under QEMU the harts are host
// threads: a hart that spins keeps the host processor from the hart it
// waits for.
const lockSpins = 64

var (
	kernelLock     uint32 // guards the trap handler's shared state
	lockWaiters    uint32 // harts asleep waiting for kernelLock, one bit each
	shootdownOwner int    // the hart waiting in kernelShootdown (kernel lock held)
)

// lockKernel takes the kernel lock with interrupts off: it spins a while,
// then sleeps in wfi until unlockKernel sends it a software interrupt.
// While it waits it answers TLB flush requests: the holder may be waiting
// for them. Its timer is set a quantum ahead, so that no lost wake-up
// keeps it asleep (resume sets the timer again).
//
//go:nosplit
func lockKernel(h *hart) {
	for spins := 0; !atomic.CompareAndSwapUint32(&kernelLock, 0, 1); spins++ {
		ackFlush(h)
		if spins < lockSpins {
			continue
		}
		atomic.OrUint32(&lockWaiters, 1<<h.id)
		clearSoft(h)
		setTimer(h, readTime()+quantumTicks)
		if atomic.LoadUint32(&kernelLock) != 0 && atomic.LoadUint32(&h.flushReq) == 0 {
			wfi()
		}
		atomic.AndUint32(&lockWaiters, ^uint32(1<<h.id))
	}
}

// unlockKernel releases the kernel lock and wakes one hart asleep for it.
//
//go:nosplit
func unlockKernel() {
	atomic.StoreUint32(&kernelLock, 0)
	if w := atomic.LoadUint32(&lockWaiters); w != 0 {
		sendSoft(bits.TrailingZeros32(w))
	}
}

//go:nosplit
func sendSoft(id int) { Write32(clintBase+clintMsip+4*uintptr(id), 1) }

//go:nosplit
func clearSoft(h *hart) { Write32(clintBase+clintMsip+4*uintptr(h.id), 0) }

// kickIdle wakes one idle hart other than h to pick up a thread that just
// became runnable. The kernel lock is held.
//
//go:nosplit
func kickIdle(h *hart) {
	for i := 0; i < nHarts; i++ {
		if i != h.id && harts[i].idle {
			// No longer counted as idle, so that the next wake-up goes to
			// another hart; it answers flush requests while it waits for
			// the lock.
			harts[i].idle = false
			sendSoft(i)
			return
		}
	}
}

// ackFlush flushes this hart's TLB if another hart asked for it, and
// wakes the asking hart.
//
//go:nosplit
func ackFlush(h *hart) {
	if atomic.LoadUint32(&h.flushReq) != 0 {
		sfenceVMA()
		atomic.StoreUint32(&h.flushReq, 0)
		sendSoft(shootdownOwner)
	}
}

// kernelShootdown makes every other hart flush its TLB after h changed
// the kernel page table (the runtime's munmap and madvise), and returns
// once they have: the freed frames may be handed out as soon as the
// kernel lock is released. The kernel lock is held, so the other harts are
// running a thread (the software interrupt brings them to trap, which
// flushes before it takes the lock), spinning for the lock (which
// flushes), idle (it flushes when it leaves wfi), or on a user table: it
// loaded that with a full flush and flushes again when it loads the kernel
// table. h sleeps in wfi while it waits; each flush wakes it.
//
//go:nosplit
func kernelShootdown(h *hart) {
	sfenceVMA()
	shootdownOwner = h.id
	for i := 0; i < nHarts; i++ {
		if o := &harts[i]; i != h.id && !o.idle && atomic.LoadUint64(&o.satp) == kernelSatp {
			atomic.StoreUint32(&o.flushReq, 1)
			sendSoft(i)
		}
	}
	for i := 0; i < nHarts; i++ {
		for atomic.LoadUint32(&harts[i].flushReq) != 0 {
			clearSoft(h)
			setTimer(h, readTime()+quantumTicks)
			if atomic.LoadUint32(&harts[i].flushReq) != 0 {
				wfi()
			}
		}
	}
}

// userShootdown makes the harts that run user code on the page table
// rooted at root leave U-mode, which flushes their TLB: every entry to
// U-mode loads satp with a full sfence.vma (the kernel threads run on the
// kernel table), so only a hart in U-mode right now can hold a stale
// translation. Called from Go code after changing root's page table.
func userShootdown(root uintptr) {
	if nHarts == 1 {
		return
	}
	satp := mm.SatpSv39(root)
	var loads [maxHarts]uint64
	var wait [maxHarts]bool
	for i := 0; i < nHarts; i++ {
		o := &harts[i]
		loads[i] = atomic.LoadUint64(&o.satpLoads)
		if atomic.LoadUint64(&o.satp) == satp {
			wait[i] = true
			sendSoft(i)
		}
	}
	for i := 0; i < nHarts; i++ {
		for wait[i] && atomic.LoadUint64(&harts[i].satpLoads) == loads[i] &&
			atomic.LoadUint64(&harts[i].satp) == satp {
		}
	}
}

// loadSatp switches h to the address space satp. The new value is
// published before the switch, so a hart that changes that table and then
// finds h on another table knows h will see the change.
//
//go:nosplit
func loadSatp(h *hart, satp uint64) {
	atomic.StoreUint64(&h.satp, satp)
	writeSatp(satp)
	atomic.AddUint64(&h.satpLoads, 1)
}

// secondaryInit is where a secondary hart enters Go code, on its trap
// stack with mscratch set, once the boot hart has released it. It
// programs what is per hart (PMP, interrupt enables, its timer) and picks
// a thread; trapReturn then runs it.
//
//go:nosplit
func secondaryInit() {
	h := thisHart()
	h.current = noThread
	writePMP0(^uint64(0)>>10, 0x18|0x7)
	setTimer(h, ^uint64(0))
	clearSoft(h)
	writeMie(1<<irqSoft | 1<<irqTimer | 1<<irqExternal)
	h.satp = kernelSatp
	lockKernel(h)
	h.inTrap = true
	resume(h)
	h.inTrap = false
	unlockKernel()
}

// initHarts prepares every hart's trap stack and identity; the boot hart
// calls it before it releases the others.
//
//go:nosplit
func initHarts(dtb uintptr) {
	nHarts = min(max(fdtCount(dtb, "cpu@"), 1), maxHarts)
	for i := range harts {
		harts[i].id = i
		harts[i].current = noThread
		harts[i].stackTop = uintptr(unsafe.Pointer(&trapStacks[i][trapStackSize-16]))
	}
}

// Harts returns the number of harts the kernel runs on.
func Harts() int { return nHarts }

// CurrentHart returns the hart the caller was running on when it asked;
// the goroutine may be on another by the time it looks.
func CurrentHart() int { return thisHart().id }
