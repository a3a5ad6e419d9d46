//go:build riscv64

package riscv64

import (
	"unsafe"

	"github.com/jiege-go/jiege/profiling"
)

// Kernel threads: the runtime's Ms. Each is a saved Frame; switching
// threads is choosing which Frame the trap return path resumes. Threads
// block on futex words, on deadlines and on interrupts; a timer tick every
// quantum rotates the runnable ones.

const (
	threadFree = iota
	threadRunnable
	threadRunning
	threadBlocked
)

type thread struct {
	frame     Frame   // S-mode context
	user      uintptr // address of the U-mode Frame while the thread runs user code
	lastUser  uintptr // the U-mode Frame the thread ran last (its system calls' CPU time goes there)
	state     int32
	tid       int32
	waitKey   uintptr         // futex word's physical address, or an IRQ number; 0 when none
	deadline  uint64          // time CSR value at which a blocked thread wakes; 0 when none
	onTimeout int64           // the result (a0) of the blocking call if the deadline passes
	_         [cacheLine]byte // the next thread's Frame off this one's lines (as hart)
}

var (
	threads [maxThreads]thread
	// threadsUsed bounds the slots ever used (the boot thread is slot 0):
	// the scheduler's scans stop there, not at maxThreads.
	threadsUsed = 1
	nextTID     int32
	earliest    uint64 = ^uint64(0) // no blocked thread's deadline is earlier
)

//go:nosplit
func allocThread() int {
	for i := range threads {
		if threads[i].state == threadFree {
			threadsUsed = max(threadsUsed, i+1)
			return i
		}
	}
	return -1
}

// block puts the current thread to sleep until woken on key, until the
// deadline (when not 0), or both; the call then returns onTimeout when the
// deadline passed first.
//
//go:nosplit
func block(h *hart, key uintptr, deadline uint64, onTimeout int64) {
	t := &threads[h.current]
	t.state = threadBlocked
	t.waitKey = key
	t.deadline = deadline
	t.onTimeout = onTimeout
	if deadline != 0 && deadline < earliest {
		earliest = deadline
	}
}

// wake makes a blocked thread runnable and wakes an idle hart to run it.
//
//go:nosplit
func wake(t *thread) {
	t.state = threadRunnable
	t.waitKey = 0
	t.deadline = 0
	kickIdle(thisHart())
}

// wakeKey wakes up to n threads blocked on key, returning how many woke.
//
//go:nosplit
func wakeKey(key uintptr, n int) int {
	woken := 0
	for i := range threads[:threadsUsed] {
		if woken >= n {
			break
		}
		t := &threads[i]
		if t.state == threadBlocked && t.waitKey == key {
			wake(t)
			woken++
		}
	}
	return woken
}

// expire wakes every thread whose deadline has passed and recomputes the
// earliest remaining deadline.
//
//go:nosplit
func expire(now uint64) {
	earliest = ^uint64(0)
	for i := range threads[:threadsUsed] {
		t := &threads[i]
		if t.state != threadBlocked || t.deadline == 0 {
			continue
		}
		if t.deadline <= now {
			t.frame.X[RegA0] = uint64(t.onTimeout)
			wake(t)
		} else if t.deadline < earliest {
			earliest = t.deadline
		}
	}
}

//go:nosplit
func pickNext(from int) int {
	for i := 1; i <= threadsUsed; i++ {
		j := (from + i) % threadsUsed
		if threads[j].state == threadRunnable {
			return j
		}
	}
	return -1
}

// resume chooses the thread to run on h and points h.save at the Frame
// that the trap return path restores: the current thread if it still runs,
// else the next runnable one, idling until there is one. The kernel lock
// is held.
//
//go:nosplit
func resume(h *hart) {
	if h.current == noThread || threads[h.current].state != threadRunning {
		h.current = pickThread(h)
	}
	t := &threads[h.current]
	if t.user != 0 {
		switchSatp(h, frameAt(t.user).Satp)
		resumeUser(h, t)
		return
	}
	// A kernel thread runs on whatever table the hart has loaded: every
	// one maps the kernel's half. A system call thus switches no table
	// (under QEMU a satp write flushes its whole TLB). retire takes a
	// table away from the harts before it is freed.
	t.frame.Status = t.frame.Status&sstatusSPIE | kernelStatus
	t.frame.X[RegTP] = uint64(uintptr(unsafe.Pointer(h))) // RunUser finds its hart there
	h.save = uintptr(unsafe.Pointer(&t.frame))
	resumeFrame(h)
}

// resumeUser makes the user Frame of t, running on h with its table
// loaded, the one trapReturn restores.
//
//go:nosplit
func resumeUser(h *hart, t *thread) {
	fetchCode(h)
	frameAt(t.user).Status = userStatus
	h.save = t.user
	resumeFrame(h)
}

// resumeFrame finishes the choice of h.save: fcsr and the timer.
//
//go:nosplit
func resumeFrame(h *hart) {
	chooseFCSR(h)
	rearmTimer(h)
}

// chooseFCSR has trapReturn load fcsr when h.save's differs from the
// hart's.
//
//go:nosplit
func chooseFCSR(h *hart) {
	if fcsr := frameAt(h.save).FCSR; fcsr != h.fcsr {
		h.fcsr, h.setFCSR = fcsr, 1
	} else {
		h.setFCSR = 0
	}
}

// rearmTimer sets h's timer for the end of the slice or earlier, unless
// it has fired (or the hart idled with it set for the earliest deadline):
// then the clock is read and a new slice begins. Otherwise it is
// rewritten only to fire earlier. Reading the clock and writing the timer
// each cost QEMU a trip through its main loop; a slice may end a little
// early. Every trap's resume calls it; a system call's two halves
// (fastSyscall, enterUser's way back) do not: what it looks at changes
// only in a trap (a timer interrupt, an idle spell, a deadline set by a
// runtime call on this hart) or on another hart, whose own resume sets
// its timer for the earliest deadline.
//
//go:nosplit
func rearmTimer(h *hart) {
	if h.newSlice || min(earliest, profiling.Next(h.id)) < h.timerAt {
		newTimer(h)
	}
}

//go:nosplit
func newTimer(h *hart) {
	now := readTime()
	if want := min(now+quantumTicks, earliest, profiling.Next(h.id)); want < h.timerAt || h.timerAt <= now {
		setTimer(h, want)
	}
	h.newSlice = false
}

// pickThread returns the next runnable thread after h's last one, now
// running on h, idling until there is one.
//
//go:nosplit
func pickThread(h *hart) int {
	from := max(h.current, 0)
	h.current = noThread
	idled := false
	for {
		if n := pickNext(from); n >= 0 {
			threads[n].state = threadRunning
			if idled {
				// A fence empties QEMU's TLB and its cache of jump
				// targets: only when a shootdown passed this hart by.
				if h.staleTLB {
					sfenceVMA()
					h.staleTLB = false
				}
				h.newSlice = true
			}
			return n
		}
		idle(h)
		idled = true
	}
}

// idle releases the kernel lock and waits, interrupts masked, until an
// interrupt is pending, then takes the lock, charges the sleep to the
// profiler, and serves the interrupt. WFI wakes on a
// pending interrupt enabled in sie even while sstatus.SIE is clear.
//
//go:nosplit
func idle(h *hart) {
	setTimer(h, earliest)
	h.idle = true
	unlockKernel()
	wfi()
	lockKernel(h)
	h.idle = false
	h.sampledAt = readTime()
	profiling.Idle(h.id, h.sampledAt, wfiPC())
	mip := readSip()
	if mip&(1<<irqSoft) != 0 {
		clearSoft(h)
	}
	if mip&(1<<irqTimer) != 0 {
		expire(readTime())
		setTimer(h, earliest)
	}
	if mip&(1<<irqExternal) != 0 {
		external(h)
	}
}

// interrupt serves an interrupt taken while a thread ran.
//
//go:nosplit
func interrupt(h *hart, cause uint64) {
	switch cause &^ causeInterrupt {
	case irqTimer:
		h.newSlice = true
		now := readTime()
		profileTick(h, now)
		chargeTick(h, now)
		expire(now)
		if t := &threads[h.current]; t.state == threadRunning {
			t.state = threadRunnable // round robin: the next runnable thread goes first
		}
	case irqExternal:
		external(h)
	case irqSoft:
		// A TLB flush request (answered at trap entry) or a wake-up.
		clearSoft(h)
	}
}

// chargeTick gives the hart's time since the last timer interrupt (or
// since it left wfi) to the user thread the timer found running: to its
// user time if it was in U-mode, to its system time if it was in one of
// its system calls (the kernel thread that last ran it runs its
// goroutine). Time in other kernel code is no task's, as Linux charges
// its own threads'.
//
//go:nosplit
func chargeTick(h *hart, now uint64) {
	elapsed := now - h.sampledAt
	h.sampledAt = now
	f := frameAt(h.save)
	t := &threads[h.current]
	if f.Status&sstatusSPP == 0 { // from U-mode: the user Frame
		f.UserTicks += elapsed
	} else if u := t.lastUser; u != 0 && frameAt(u).kernelG == f.X[27] {
		frameAt(u).SysTicks += elapsed
	}
}

// external claims a pending PLIC interrupt, records it and wakes the
// threads waiting for it; the drivers do the device work in Go code. It
// claims one: another pending source keeps the hart's external interrupt
// raised and is taken next (a second claim that finds none costs an MMIO
// exit into QEMU, where almost every interrupt comes alone).
//
//go:nosplit
func external(h *hart) {
	if h.plicContext == noContext {
		return
	}
	claim := plicBase + plicContext + 0x1000*h.plicContext + plicClaim
	irq := Read32(claim)
	if irq == 0 {
		return
	}
	if irq < maxIRQ && irqAcks[irq].ack != 0 {
		// The device lowers its line when acknowledged; then the
		// completion lets the PLIC take its next interrupt.
		if q := irqAcks[irq].quiet; q != nil {
			*q = 1
		}
		Write32(irqAcks[irq].ack, Read32(irqAcks[irq].status))
		Write32(claim, irq)
	} else {
		// Complete first (the PLIC ignores completions for disabled
		// sources), then mask the source until its driver waits again:
		// the device holds its line high until the driver acknowledges it.
		Write32(claim, irq)
		plicEnable(irq, false)
	}
	if irq < maxIRQ {
		irqPending.add(irq)
		irqEdge.add(irq)
		wakeKey(rtPollKey, maxThreads)
	}
}

//go:nosplit
func plicIsPending(irq uint32) bool {
	return Read32(plicBase+plicPendingBase+uintptr(irq/32*4))&(1<<(irq%32)) != 0
}

// plicEnable unmasks or masks irq in irqHart's context only, as Linux's
// PLIC driver gives each interrupt one hart: QEMU raises a source enabled
// for several harts on each of them, so every interrupt took every hart
// out of what it ran (a cross-thread kick in QEMU), and all but the first
// trapped to claim nothing.
//
//go:nosplit
func plicEnable(irq uint32, on bool) {
	en := plicBase + plicEnableBase + 0x80*irqHart.plicContext + uintptr(irq/32*4)
	if on {
		Write32(en, Read32(en)|1<<(irq%32))
	} else {
		Write32(en, Read32(en)&^(1<<(irq%32)))
	}
}
