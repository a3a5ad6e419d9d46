package kernel

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/kernel/loader"
)

// The riscv64 signal frame, laid out as Linux's struct rt_sigframe
// (arch/riscv/kernel/signal.c) so that glibc's handlers and unwinders read
// it: siginfo, then the ucontext (uc_flags, uc_link, uc_stack, uc_sigmask
// padded to 128 bytes of sigset, then struct sigcontext: the 32 words of
// user_regs_struct, pc first, and the FP state, d extension in the q-sized
// union). Offsets checked with offsetof() in a riscv64 glibc program.
const (
	frameSize      = 128 + 960 // sizeof(struct rt_sigframe)
	ucOffset       = 128       // frame.uc
	ucStackOffset  = ucOffset + 16
	ucMaskOffset   = ucOffset + 40
	ucMctxOffset   = ucOffset + 176 // uc_mcontext, 16-byte aligned
	ucFPOffset     = ucMctxOffset + 256
	ucFCSROffset   = ucFPOffset + 256
	siginfoAddrOff = 16
)

// encodeSiginfo writes a siginfo_t: signo, errno, code, then the union
// member the signal uses.
func encodeSiginfo(b []byte, i SigInfo) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(i.Signo))
	le.PutUint32(b[8:], uint32(i.Code))
	switch {
	case i.Code > 0 && i.Code < SIKernel && isFaultSignal(i.Signo):
		le.PutUint64(b[siginfoAddrOff:], i.Addr)
	default:
		le.PutUint32(b[16:], uint32(i.Pid))
		le.PutUint32(b[20:], i.UID)
		if i.Signo == unix.SIGCHLD {
			le.PutUint32(b[24:], uint32(i.Status))
		} else {
			le.PutUint64(b[24:], i.Value)
		}
	}
}

func isFaultSignal(sig unix.Signal) bool {
	switch sig {
	case unix.SIGSEGV, unix.SIGBUS, unix.SIGILL, unix.SIGFPE, unix.SIGTRAP:
		return true
	}
	return false
}

// EncodeSiginfo returns info as a 128-byte siginfo_t (rt_sigtimedwait).
func EncodeSiginfo(info SigInfo) []byte {
	b := make([]byte, 128)
	encodeSiginfo(b, info)
	return b
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

	b := make([]byte, frameSize)
	le := binary.LittleEndian
	encodeSiginfo(b, info)
	le.PutUint64(b[ucStackOffset:], altSP)
	le.PutUint32(b[ucStackOffset+8:], uint32(altFlags))
	le.PutUint64(b[ucStackOffset+16:], altSize)
	oldMask := t.sig.mask
	if t.sig.hasSavedMask {
		oldMask, t.sig.hasSavedMask = t.sig.savedMask, false
	}
	le.PutUint64(b[ucMaskOffset:], uint64(oldMask))
	le.PutUint64(b[ucMctxOffset:], r.PC)
	for i := 1; i < 32; i++ {
		le.PutUint64(b[ucMctxOffset+8*i:], r.X[i])
	}
	for i := 0; i < 32; i++ {
		le.PutUint64(b[ucFPOffset+8*i:], r.F[i])
	}
	le.PutUint32(b[ucFCSROffset:], uint32(r.FCSR))

	t.Proc.Lock()
	err := t.Proc.AS.CopyOut(uintptr(sp), b)
	t.Proc.Unlock()
	if err != nil {
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
	r.X[arch.RegA2] = sp + ucOffset
	return true
}

// Sigreturn implements rt_sigreturn: it restores the registers, FP state,
// mask and alternate stack saved in the frame at sp. A frame that cannot be
// read raises SIGSEGV, as on Linux.
func (t *Task) Sigreturn() {
	r := t.Regs
	b := make([]byte, frameSize)
	t.Proc.Lock()
	err := t.Proc.AS.CopyIn(uintptr(r.X[arch.RegSP]), b)
	t.Proc.Unlock()
	if err != nil {
		fmt.Printf("kernel: pid %d (%s) rt_sigreturn: bad frame at %#x\n", t.Proc.PID, t.Proc.Exe, r.X[arch.RegSP])
		t.Proc.k.sigMu.Lock()
		t.forceSegv()
		t.Proc.k.sigMu.Unlock()
		return
	}
	le := binary.LittleEndian
	r.PC = le.Uint64(b[ucMctxOffset:])
	for i := 1; i < 32; i++ {
		r.X[i] = le.Uint64(b[ucMctxOffset+8*i:])
	}
	for i := 0; i < 32; i++ {
		r.F[i] = le.Uint64(b[ucFPOffset+8*i:])
	}
	r.FCSR = uint64(le.Uint32(b[ucFCSROffset:]))
	t.Proc.k.sigMu.Lock()
	t.setMaskLocked(SigSet(le.Uint64(b[ucMaskOffset:])))
	t.Proc.k.sigMu.Unlock()
	// The saved alternate stack comes back, unless the task is on it
	// (Linux squashes that EPERM).
	t.SetAltStack(le.Uint64(b[ucStackOffset:]), le.Uint64(b[ucStackOffset+16:]), int32(le.Uint32(b[ucStackOffset+8:]))&SSDisable)
}
