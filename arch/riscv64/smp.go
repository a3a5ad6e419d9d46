//go:build riscv64

package riscv64

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// Several harts. Every hart runs the same trap handler on its own trap
// stack; the state that handler shares (threads, deadlines, futex and poll
// waiters, interrupt records, the kernel page table) is guarded by one
// spinlock, the kernel lock, taken with interrupts off for a whole trap.
// The frame allocator has its own spinlock (mm.Frames), so ordinary Go
// code that allocates frames never waits for a trap on another hart.
//
// A hart with nothing to run waits in wfi with the lock released and is
// woken by a software interrupt when a thread becomes runnable, by its
// timer or by a device. A hart sends one by writing the target's CLINT
// msip; the target's M-mode handler (machineTrap) turns it into the
// supervisor software interrupt.

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
func clearSoft(h *hart) { clearSoftPending() }

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
// wakes the asking hart; first it moves to the kernel table if the asking
// hart is retiring the table this hart has loaded.
//
//go:nosplit
func ackFlush(h *hart) {
	if atomic.LoadUint32(&h.flushReq) != 0 { // inlined: at every trap
		answerFlush(h)
	}
}

//go:nosplit
func answerFlush(h *hart) {
	req := atomic.LoadUint32(&h.flushReq)
	if req&flushTLB != 0 {
		if h.retiring != 0 && h.satp == withASID(h.retiring) {
			switchSatp(h, kernelSatp)
		}
		h.retiring = 0
		sfenceVMA()
	}
	if req&flushCode != 0 {
		fenceI()
	}
	atomic.StoreUint32(&h.flushReq, 0)
	sendSoft(shootdownOwner)
}

// What a hart's flushReq asks of it.
const (
	flushTLB  = 1 << iota // sfence.vma: a page table it may use changed
	flushCode             // fence.i: code was written for the table it runs
)

// kernelShootdown makes every hart forget the kernel's old translations
// after h changed them (the runtime's munmap and madvise), and returns
// once every hart that is not idle has: the freed frames may be handed out
// as soon as the kernel lock is released. The kernel's half is mapped in
// every table, so every running hart flushes whatever it has loaded; an
// idle hart fences when it leaves wfi (staleTLB).
//
//go:nosplit
func kernelShootdown(h *hart) {
	sfenceVMA()
	var running uint64
	for i := 0; i < nHarts; i++ {
		if o := &harts[i]; i != h.id && !o.idle {
			running |= 1 << i
		} else if i != h.id {
			o.staleTLB = true
		}
	}
	askFlushes(h, running)
}

// retire makes every hart that has the user table in satp (without ASID)
// loaded move to the kernel table, before the table is freed; a hart that
// runs kernel threads keeps the last table it loaded (resume). The kernel
// lock is held.
//
//go:nosplit
func retire(h *hart, satp uint64) {
	loaded := withASID(satp)
	if h.satp == loaded {
		switchSatp(h, kernelSatp)
	}
	shootdownOwner = h.id
	for i := 0; i < nHarts; i++ {
		if o := &harts[i]; i != h.id && o.satp == loaded {
			o.retiring = satp
			atomic.StoreUint32(&o.flushReq, flushTLB)
			sendSoft(i)
		}
	}
	waitFlushes(h)
}

// askFlushes makes the harts in mask flush their TLB and returns once
// they have: through the firmware's remote fence, or by a flushReq and a
// software interrupt to each, answered at its next trap entry or while it
// waits for the kernel lock.
//
//go:nosplit
func askFlushes(h *hart, mask uint64) {
	if remoteFence(mask) {
		return
	}
	shootdownOwner = h.id
	for i := 0; i < nHarts; i++ {
		if mask&(1<<i) != 0 {
			atomic.StoreUint32(&harts[i].flushReq, flushTLB)
			sendSoft(i)
		}
	}
	waitFlushes(h)
}

// waitFlushes waits, asleep in wfi, until every flush request is answered.
//
//go:nosplit
func waitFlushes(h *hart) {
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

// shootdown makes every hart forget the translations of the table in satp
// (without ASID) after h changed it; the kernel lock is held. A hart
// running that table now is asked to flush and waited for: the software
// interrupt brings it to trap, which flushes before it takes the lock, or
// it is spinning for the lock, which flushes too. Every other hart may
// still hold translations under the table's ASID (switching satp does not
// fence, asid.go), so its record of the ASID is cleared: it fences before
// it runs the table again. An idle hart, which may have the table loaded,
// fences when it leaves wfi (staleTLB).
// h sleeps in wfi while it waits; each flush wakes it.
//
//go:nosplit
func shootdown(h *hart, satp uint64) {
	loaded := withASID(satp)
	if h.satp == loaded {
		sfenceVMA()
	} else {
		forgetASID(h.id, satp)
	}
	var running uint64
	for i := 0; i < nHarts; i++ {
		if o := &harts[i]; i != h.id {
			if !o.idle && o.satp == loaded {
				running |= 1 << i
			} else {
				forgetASID(i, satp)
				o.staleTLB = o.staleTLB || o.idle
			}
		}
	}
	askFlushes(h, running)
}

// userShootdown makes every hart forget the old translations of the user
// page table rooted at root; called from Go code after changing it. With
// one hart a local fence does (it covers every ASID); with several, the
// shootdown runs in the trap handler, under the kernel lock, so that no
// hart switches tables meanwhile.
func userShootdown(root uintptr) {
	if nHarts == 1 {
		sfenceVMA()
		return
	}
	ecall2(sysShootdown, root, 0)
}

// secondaryInit is where a secondary hart enters Go code, on its trap
// stack with sscratch set, once the boot hart has released it. It
// programs what is per hart (interrupt enables, its timer) and picks
// a thread; trapReturn then runs it.
//
//go:nosplit
func secondaryInit() {
	h := thisHart()
	h.current = noThread
	setTimer(h, ^uint64(0))
	h.newSlice = true
	clearSoft(h)
	writeSie(1<<irqSoft | 1<<irqTimer | 1<<irqExternal)
	kernelTableLoaded(h) // Entry loaded it
	lockKernel(h)
	h.inTrap = true
	resume(h)
	h.inTrap = false
	unlockKernel()
}

// initHarts prepares every hart's trap stack and identity; the boot hart
// calls it before it releases the others. It returns the boot hart's cpu
// node in the device tree (0 when the tree does not list it).
//
// Under our own M-mode code QEMU starts every hart and each finds its
// harts entry by mhartid, so index and hart id agree (QEMU numbers its
// harts from 0). Under SBI firmware the boot hart, whichever the firmware
// chose, is index 0, and the other harts the device tree lists as able to
// run the kernel follow in its order; sbiSecondaryEntry finds a hart's
// index by its id.
//
//go:nosplit
func initHarts(dtb uintptr) uintptr {
	var ids [maxHarts]int
	var bootNode uintptr
	if sbiBoot {
		nHarts, bootNode = fdtHarts(dtb, sbiBootHart, ids[:])
	} else {
		nHarts, bootNode = fdtHarts(dtb, 0, ids[:])
		for i := range ids {
			ids[i] = i
		}
	}
	for i := range harts {
		harts[i].id = i
		harts[i].hartID = ids[i]
		harts[i].plicContext = noContext
		harts[i].current = noThread
		harts[i].stackTop = uintptr(unsafe.Pointer(&trapStacks[i][trapStackSize-32])) // ABI0 argument and result slots above it
	}
	return bootNode
}

// Harts returns the number of harts the kernel runs on.
func Harts() int { return nHarts }

// CurrentHart returns the hart the caller was running on when it asked;
// the goroutine may be on another by the time it looks.
func CurrentHart() int { return thisHart().id }
