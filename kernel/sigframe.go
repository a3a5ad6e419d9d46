package kernel

import (
	"unsafe"

	"fmt"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/kernel/loader"
)

// The riscv64 signal frame is Linux's struct rt_sigframe
// (linux.RtSigframe), so that glibc's handlers and unwinders read it.

// frameSize is sizeof(struct rt_sigframe).
const frameSize = uint64(unsafe.Sizeof(linux.RtSigframe{}))

// Siginfo encodes info as a siginfo_t: signo, errno, code, then the union
// member the signal uses.
func Siginfo(i SigInfo) linux.Siginfo {
	si := linux.Siginfo{Signo: int32(i.Signo), Code: i.Code}
	switch {
	case i.Code > 0 && i.Code < SIKernel && isFaultSignal(i.Signo):
		si.SetAddr(i.Addr)
	case i.Band != 0:
		si.SetPoll(i.Band, i.FD)
	case i.Signo == unix.SIGSYS && i.Code == siSysSeccomp:
		si.Errno = i.Errno
		si.SetSys(i.Addr, i.Syscall, AuditArchRISCV64)
	default:
		si.Pid, si.UID = i.Pid, i.UID
		if i.Signo == unix.SIGCHLD {
			si.SetStatus(int32(i.Status))
		} else {
			si.Value = i.Value
		}
	}
	return si
}

func isFaultSignal(sig unix.Signal) bool {
	switch sig {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGILL, unix.SIGFPE, unix.SIGTRAP:
		return true
	}
	return false
}

// setupFrame pushes a signal frame for info on the user stack (or the
// alternate one under SA_ONSTACK) and points the registers at the handler
// with a0 = signal, a1 = &siginfo, a2 = &ucontext and ra at the sigreturn
// trampoline. It reports false when the frame cannot be written (sigMu held).
func (t *Task) setupFrame(info SigInfo, act SigAction) bool {
	r := t.Regs
	sp := r.X[arch.RegSP]
	if t.onAltStack(sp) && !t.onAltStack(sp-frameSize) {
		return false // the alternate stack would overflow
	}
	altSP, altSize, altFlags := t.altStack()
	if act.Flags&SAOnStack != 0 && t.sig.altSize != 0 && !t.onAltStack(sp) {
		sp = t.sig.altSP + t.sig.altSize
	}
	sp = (sp - frameSize) &^ 15

	f := &linux.RtSigframe{Info: Siginfo(info)}
	f.UC.Stack = linux.StackT{SP: altSP, Flags: altFlags, Size: altSize}
	oldMask := t.sig.mask
	if t.sig.hasSavedMask {
		oldMask, t.sig.hasSavedMask = t.sig.savedMask, false
	}
	f.UC.Sigmask = uint64(oldMask)
	mc := &f.UC.Mcontext
	mc.Regs = r.X
	mc.Regs[0] = r.PC // x0 is always zero: its slot holds the pc
	mc.F = r.F
	mc.FCSR = uint32(r.FCSR)

	if t.Proc.CopyOut(uintptr(sp), linux.AsBytes(f)) != nil {
		return false
	}
	mask := oldMask | act.Mask
	if act.Flags&SANoDefer == 0 {
		mask |= Bit(info.Signo)
	}
	t.sig.mask = mask &^ unblockable
	r.PC = act.Handler
	r.X[arch.RegRA] = uint64(loader.SigreturnAddr)
	r.X[arch.RegSP] = sp
	r.X[arch.RegA0] = uint64(info.Signo)
	r.X[arch.RegA1] = sp
	r.X[arch.RegA2] = sp + uint64(unsafe.Offsetof(linux.RtSigframe{}.UC))
	return true
}

// Sigreturn implements rt_sigreturn: it restores the registers, FP state,
// mask and alternate stack saved in the frame at sp. A frame that cannot be
// read raises SIGSEGV, as on Linux.
func (t *Task) Sigreturn() {
	r := t.Regs
	var f linux.RtSigframe
	if err := t.Proc.CopyIn(uintptr(r.X[arch.RegSP]), linux.AsBytes(&f)); err != nil {
		fmt.Printf("kernel: pid %d (%s) rt_sigreturn: bad frame at %#x\n", t.Proc.PID, t.Proc.Exe, r.X[arch.RegSP])
		t.raiseSegv()
		return
	}
	mc := &f.UC.Mcontext
	r.PC = mc.Regs[0]
	x0 := r.X[0]
	r.X = mc.Regs
	r.X[0] = x0
	r.F = mc.F
	r.FCSR = uint64(mc.FCSR)
	t.SetMask(SigSet(f.UC.Sigmask))
	// The saved alternate stack comes back, unless the task is on it
	// (Linux squashes that EPERM).
	ss := f.UC.Stack
	t.SetAltStack(ss.SP, ss.Size, ss.Flags&SSDisable)
}
