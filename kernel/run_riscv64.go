package kernel

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/mm"
)

// Run runs the task's user code until it exits or its process does, and
// counts its CPU time: the time in U-mode, and the time it spent handling
// a trap that was not an interrupt, less what it waited in Block. Each
// return from U-mode is one trap: a system call goes to dispatch, a page
// fault to the address space, an interrupt yields to other goroutines (and
// brings a thread in U-mode back to see its process exit), anything else
// kills the process with the signal Linux would send.
func (t *Task) Run(dispatch func(*Task)) {
	var cause uint64 // the trap being handled
	defer func() {
		// A panic in a handler is a kernel bug: it is reported with its
		// stack and kills the calling process, not the kernel. (Recovered
		// here, not around each call: a deferred recover at every system
		// call costs QEMU a few lookups each.)
		if r := recover(); r != nil {
			if cause == arch.CauseEcallU {
				fmt.Printf("kernel: BUG in system call %d of pid %d: %v\n%s", t.Regs.X[arch.RegA7], t.Proc.PID, r, debug.Stack())
			} else {
				fmt.Printf("kernel: BUG in trap %d of pid %d: %v\n%s", cause, t.Proc.PID, r, debug.Stack())
			}
			t.kill(unix.SIGKILL, cause)
		}
		t.cpu.stop(time.Now())
		t.leave()
		arch.FreeUserFrame(t.Regs)
	}()
	t.cpu.start(time.Now())
	for !t.Exiting {
		t.HandleSignals()
		if t.Proc.gone.Load() || t.endedByExec() {
			return
		}
		if t.Proc.AS.TruncationPending() { // a mapped file shrank
			t.Proc.dropTruncated()
		}
		t.Regs.Owner = uint64(t.Proc.PID) // exec replaces the registers
		cause = arch.RunUser(t.Regs)
		switch {
		case arch.IsInterrupt(cause):
			// Waiting for the processor is not CPU time.
			t.cpu.stop(time.Now())
			t.countSwitch()
			runtime.Gosched()
			t.cpu.start(time.Now())
		case cause == arch.CauseEcallU:
			t.Regs.PC += 4
			dispatch(t)
		case cause == arch.CauseLoadPageFault || cause == arch.CauseStorePageFault || cause == arch.CauseInstrPageFault:
			t.countFault()
			access := mm.Read
			if cause == arch.CauseStorePageFault {
				access = mm.Write
			} else if cause == arch.CauseInstrPageFault {
				access = mm.Execute
			}
			fault := func() error {
				t.Proc.Lock()
				defer t.Proc.Unlock()
				return t.Proc.AS.Fault(uintptr(t.Regs.Tval), access)
			}
			killedSelf, err := t.Proc.AllocateUser(fault)
			if uf, ok := err.(*mm.Userfault); ok {
				t.awaitUserfault(uf) // then the instruction faults again
				continue
			}
			switch {
			case killedSelf: // a SIGKILL is on its way
			case errors.Is(err, mm.ErrBus): // past the end of a mapped file
				t.Fault(unix.SIGBUS, BusAdrErr, t.Regs.Tval, cause)
			case errors.Is(err, mm.ErrPoisoned): // UFFDIO_POISON
				t.Fault(unix.SIGBUS, BusMceerrAr, t.Regs.Tval, cause)
			case err != nil:
				t.Fault(unix.SIGSEGV, t.segvCode(uintptr(t.Regs.Tval)), t.Regs.Tval, cause)
			}
		case cause == arch.CauseIllegalInstr:
			t.Fault(unix.SIGILL, IllIllOpc, t.Regs.PC, cause)
		case cause == arch.CauseBreakpoint:
			t.Fault(unix.SIGTRAP, TrapBrkpt, t.Regs.PC, cause)
		case cause == arch.CauseInstrMisaligned || cause == arch.CauseLoadMisaligned || cause == arch.CauseStoreMisaligned:
			// QEMU's harts do misaligned plain loads and stores (Linux
			// would emulate them); an lr, sc or AMO's is SIGBUS, as Linux's.
			t.Fault(unix.SIGBUS, BusAdrAln, t.Regs.Tval, cause)
		default:
			t.Fault(unix.SIGSEGV, SegvMapErr, t.Regs.Tval, cause)
		}
	}
}

// kill ends the process with a fatal signal and reports it on the console.
func (t *Task) kill(sig unix.Signal, cause uint64) {
	fmt.Printf("kernel: pid %d (%s) killed by %s: cause %d at pc %#x, address %#x\n",
		t.Proc.PID, t.Proc.Exe, unix.SignalName(sig), cause, t.Regs.PC, t.Regs.Tval)
	t.Exiting = true
	t.Proc.exitBySignal(sig)
}

// segvCode is SEGV_ACCERR for an address inside a mapping, SEGV_MAPERR
// for one outside all.
func (t *Task) segvCode(addr uintptr) int32 {
	t.Proc.Lock()
	defer t.Proc.Unlock()
	for _, v := range t.Proc.AS.VMAs() {
		if addr >= v.Start && addr < v.End {
			return SegvAccErr
		}
	}
	return SegvMapErr
}
