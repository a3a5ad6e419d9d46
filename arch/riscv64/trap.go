//go:build riscv64

package riscv64

import "unsafe"

// trap is called by trapEntry on the hart's trap stack with the interrupted
// registers saved in the Frame that hart.save pointed at.
//
//go:nosplit
func trap() {
	h := trapHart()
	if h.inTrap {
		fatalFrame("trap inside the trap handler", frameAt(h.save))
	}
	h.inTrap = true
	ackFlush(h)
	lockKernel(h)
	t := &threads[h.current]
	if t.user != 0 {
		// From U-mode: RunUser returns the cause to its goroutine, which
		// reads the rest from the user Frame.
		uf := frameAt(t.user)
		t.user = 0
		t.frame.X[RegA0] = uf.Cause
		if uf.Cause&causeInterrupt != 0 {
			interrupt(h, uf.Cause)
		}
	} else {
		f := &t.frame
		switch cause := f.Cause; {
		case cause&causeInterrupt != 0:
			interrupt(h, cause)
		case cause == causeEcallS, cause == CauseBreakpoint && sbiBoot:
			// Under SBI firmware the kernel's ECALLs are EBREAKs
			// (kimage.TrapECALLs): an ECALL from S-mode is the firmware's.
			f.PC += 4
			runtimeSyscall(h, t, f)
		case cause == CauseLoadPageFault || cause == CauseStorePageFault:
			if !kernelFault(uintptr(f.Tval)) {
				fatalFrame("kernel page fault", f)
			}
		default:
			fatalFrame("unexpected trap in the kernel", f)
		}
	}
	resume(h)
	h.inTrap = false
	unlockKernel()
}

//go:nosplit
func fatal(msg string) {
	print("\nkernel panic: ")
	print(msg)
	print("\n")
	powerOff(3)
}

//go:nosplit
func fatalFrame(msg string, f *Frame) {
	print("\nkernel panic: ")
	print(msg)
	print("\n  pc ")
	printHex(f.PC)
	print(" cause ")
	printHex(f.Cause)
	print(" tval ")
	printHex(f.Tval)
	print(" ra ")
	printHex(f.X[RegRA])
	print(" sp ")
	printHex(f.X[RegSP])
	print(" thread ")
	printDec(int64(thisHart().current))
	print(" hart ")
	printDec(int64(thisHart().id))
	print("\n")
	powerOff(3)
}

// RunUser runs the user context f (a Frame from NewUserFrame) in U-mode
// until it traps, and returns the trap cause; f then holds the user
// registers, PC, Cause and Tval. An interrupt taken in U-mode returns too, so
// that the calling goroutine can yield. It is enterUser in assembly: the
// calling thread leaves its context in its Frame and the hart goes to U-mode
// from the trap stack, without a trap; the user program's next trap
// resumes the thread at runUserReturn with the cause.
func RunUser(f *Frame) uint64

// runUserReturn is where a thread that called RunUser resumes.
func runUserReturn()

// fastSyscall is trapEntry's way back from a system call (ECALL from
// U-mode) to the thread that called RunUser, on this hart, without the
// kernel lock or a trap return: trapEntry continues the thread at
// runUserReturn itself, with interrupts on (each CSR access and sret is
// a trip through QEMU's main loop, and the lock an atomic each way). It
// touches this hart's state and its running thread's, which no other
// hart changes while the thread runs, and it returns the thread's Frame;
// or 0, for trap's full path, when the thread must not simply continue:
// its state changed, or its rounding mode differs from the program's
// (fcsr is left as the program set it; its flags do not matter to Go).
//
//go:nosplit
func fastSyscall(h *hart) uintptr {
	t := &threads[h.current]
	if t.state != threadRunning || (t.frame.FCSR^h.fcsr)&^fcsrFlags != 0 {
		return 0
	}
	ackFlush(h)
	t.user = 0
	h.save = uintptr(unsafe.Pointer(&t.frame))
	return h.save
}

// fcsrFlags are fcsr's accrued exception flags (fflags).
const fcsrFlags = 0x1f

// enterUser is RunUser's half on the trap stack, on hart h: it does what
// the trap handler does for a thread entering U-mode, with the kernel
// lock unless the hart has the program's table loaded.
//
//go:nosplit
func enterUser(f uintptr, h *hart) {
	if h.inTrap {
		fatal("RunUser inside the trap handler")
	}
	h.inTrap = true
	ackFlush(h)
	t := &threads[h.current]
	if t.state == threadRunning && satpLoaded(h, frameAt(f).Satp) {
		// The hart runs the program's table already (the thread left it
		// for a system call): nothing another hart reads changes, and a
		// shootdown that finds the table here sends its request anyway.
		t.user, t.lastUser = f, f
		frameAt(f).Status = userStatus
		h.save = f
		fetchCode(h)
		chooseFCSR(h) // the timer stands: see rearmTimer
	} else {
		lockKernel(h)
		t.user, t.lastUser = f, f
		resume(h)
		unlockKernel()
	}
	h.inTrap = false
}
