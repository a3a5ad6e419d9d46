package syscall

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.RtSigaction, sysRtSigaction)
	register(sysno.RtSigprocmask, sysRtSigprocmask)
	register(sysno.RtSigpending, sysRtSigpending)
	register(sysno.RtSigsuspend, sysRtSigsuspend)
	register(sysno.RtSigtimedwait, sysRtSigtimedwait)
	register(sysno.RtSigreturn, sysRtSigreturn)
	register(sysno.Sigaltstack, sysSigaltstack)
	register(sysno.Kill, sysKill)
	register(sysno.Tkill, sysTkill)
	register(sysno.Tgkill, sysTgkill)
	register(sysno.RtSigqueueinfo, sysRtSigqueueinfo)
	register(sysno.RtTgsigqueueinfo, sysRtTgsigqueueinfo)
	register(sysno.RestartSyscall, sysRestartSyscall)
}

// sigsetSize is sizeof(sigset_t) in the kernel ABI: 64 signals.
const sigsetSize = 8

// signalArg decodes a signal number argument, 1..64.
func signalArg(v uint64) (unix.Signal, error) {
	if v == 0 || v > kernel.NumSignals {
		return 0, unix.EINVAL
	}
	return unix.Signal(v), nil
}

func copyInSigset(t *kernel.Task, addr uint64) (kernel.SigSet, error) {
	b := make([]byte, sigsetSize)
	if err := copyIn(t, addr, b); err != nil {
		return 0, err
	}
	return kernel.SigSet(binary.LittleEndian.Uint64(b)), nil
}

// sysRtSigaction implements rt_sigaction(2): struct sigaction on riscv64 is
// handler, flags, mask (no restorer).
func sysRtSigaction(t *kernel.Task, a Args) (uint64, error) {
	sig, err := signalArg(a[0])
	if err != nil || a[3] != sigsetSize {
		return 0, unix.EINVAL
	}
	var act *kernel.SigAction
	if a[1] != 0 {
		if sig == unix.SIGKILL || sig == unix.SIGSTOP {
			return 0, unix.EINVAL
		}
		b := make([]byte, 24)
		if err := copyIn(t, a[1], b); err != nil {
			return 0, err
		}
		le := binary.LittleEndian
		act = &kernel.SigAction{Handler: le.Uint64(b), Flags: le.Uint64(b[8:]), Mask: kernel.SigSet(le.Uint64(b[16:]))}
	}
	old := t.Proc.Action(sig)
	if act != nil {
		old = t.Proc.SetAction(sig, *act)
	}
	if a[2] != 0 {
		return 0, copyOut(t, a[2], words(old.Handler, old.Flags, uint64(old.Mask)))
	}
	return 0, nil
}

// sysRtSigprocmask implements rt_sigprocmask(2).
func sysRtSigprocmask(t *kernel.Task, a Args) (uint64, error) {
	if a[3] != sigsetSize {
		return 0, unix.EINVAL
	}
	old := t.Mask()
	if a[1] != 0 {
		set, err := copyInSigset(t, a[1])
		if err != nil {
			return 0, err
		}
		switch a[0] {
		case unix.SIG_BLOCK:
			t.SetMask(old | set)
		case unix.SIG_UNBLOCK:
			t.SetMask(old &^ set)
		case unix.SIG_SETMASK:
			t.SetMask(set)
		default:
			return 0, unix.EINVAL
		}
	}
	if a[2] != 0 {
		return 0, copyOut(t, a[2], words(uint64(old)))
	}
	return 0, nil
}

// sysRtSigpending implements rt_sigpending(2): the pending signals that
// are blocked.
func sysRtSigpending(t *kernel.Task, a Args) (uint64, error) {
	if a[1] > sigsetSize {
		return 0, unix.EINVAL
	}
	set := t.Pending() & t.Mask()
	return 0, copyOut(t, a[0], words(uint64(set))[:a[1]])
}

// sysRtSigsuspend implements rt_sigsuspend(2).
func sysRtSigsuspend(t *kernel.Task, a Args) (uint64, error) {
	if a[1] != sigsetSize {
		return 0, unix.EINVAL
	}
	set, err := copyInSigset(t, a[0])
	if err != nil {
		return 0, err
	}
	return 0, t.Suspend(set)
}

// sysRtSigtimedwait implements rt_sigtimedwait(2).
func sysRtSigtimedwait(t *kernel.Task, a Args) (uint64, error) {
	if a[3] != sigsetSize {
		return 0, unix.EINVAL
	}
	set, err := copyInSigset(t, a[0])
	if err != nil {
		return 0, err
	}
	var deadline time.Time
	if a[2] != 0 {
		d, err := copyInTimespec(t, a[2])
		if err != nil {
			return 0, err
		}
		deadline = time.Now().Add(d)
		if d == 0 {
			deadline = time.Now() // poll
		}
	}
	info, err := t.TakeSignal(set, deadline)
	if err != nil {
		return 0, err
	}
	if a[1] != 0 {
		if err := copyOut(t, a[1], kernel.EncodeSiginfo(info)); err != nil {
			return 0, err
		}
	}
	return uint64(info.Signo), nil
}

// sysRtSigreturn implements rt_sigreturn(2): a0 comes back with the other
// registers, so it is the result.
func sysRtSigreturn(t *kernel.Task, a Args) (uint64, error) {
	t.Sigreturn()
	return t.Regs.X[10], nil
}

// sysSigaltstack implements sigaltstack(2); stack_t is ss_sp, ss_flags,
// ss_size.
func sysSigaltstack(t *kernel.Task, a Args) (uint64, error) {
	sp, size, flags := t.AltStack()
	if a[0] != 0 {
		b := make([]byte, 24)
		if err := copyIn(t, a[0], b); err != nil {
			return 0, err
		}
		le := binary.LittleEndian
		const ssAutoDisarm = 1 << 31
		mode := int32(le.Uint32(b[8:]) &^ ssAutoDisarm)
		if mode == kernel.SSOnStack {
			mode = 0 // accepted as 0, as Linux does for old programs
		}
		if err := t.SetAltStack(le.Uint64(b), le.Uint64(b[16:]), mode); err != nil {
			return 0, err
		}
	}
	if a[1] != 0 {
		b := words(sp, uint64(uint32(flags)), size)
		return 0, copyOut(t, a[1], b)
	}
	return 0, nil
}

// sysKill implements kill(2).
func sysKill(t *kernel.Task, a Args) (uint64, error) {
	return 0, t.Kill(int(int32(a[0])), unix.Signal(int32(a[1])))
}

// sysTkill implements tkill(2).
func sysTkill(t *kernel.Task, a Args) (uint64, error) {
	return 0, t.Tgkill(-1, int(int32(a[0])), unix.Signal(int32(a[1])))
}

// sysTgkill implements tgkill(2).
func sysTgkill(t *kernel.Task, a Args) (uint64, error) {
	if int32(a[0]) <= 0 {
		return 0, unix.EINVAL
	}
	return 0, t.Tgkill(int(int32(a[0])), int(int32(a[1])), unix.Signal(int32(a[2])))
}

// copyInSiginfo reads the siginfo_t a process queues: si_code, and the
// sender and value of the kill/rt union member.
func copyInSiginfo(t *kernel.Task, addr uint64, sig uint64) (kernel.SigInfo, error) {
	b := make([]byte, 128)
	if err := copyIn(t, addr, b); err != nil {
		return kernel.SigInfo{}, err
	}
	le := binary.LittleEndian
	return kernel.SigInfo{Signo: unix.Signal(sig), Code: int32(le.Uint32(b[8:])), Pid: int32(le.Uint32(b[16:])),
		UID: le.Uint32(b[20:]), Value: le.Uint64(b[24:])}, nil
}

// sysRtSigqueueinfo implements rt_sigqueueinfo(2).
func sysRtSigqueueinfo(t *kernel.Task, a Args) (uint64, error) {
	info, err := copyInSiginfo(t, a[2], a[1])
	if err != nil {
		return 0, err
	}
	return 0, t.Queue(int(int32(a[0])), 0, info)
}

// sysRtTgsigqueueinfo implements rt_tgsigqueueinfo(2).
func sysRtTgsigqueueinfo(t *kernel.Task, a Args) (uint64, error) {
	if int32(a[0]) <= 0 || int32(a[1]) <= 0 {
		return 0, unix.EINVAL
	}
	info, err := copyInSiginfo(t, a[3], a[2])
	if err != nil {
		return 0, err
	}
	return 0, t.Queue(int(int32(a[0])), int(int32(a[1])), info)
}

// sysRestartSyscall implements restart_syscall(2): it continues the call
// a signal without a handler interrupted.
func sysRestartSyscall(t *kernel.Task, a Args) (uint64, error) {
	fn := t.TakeRestartBlock()
	if fn == nil {
		return 0, unix.EINTR
	}
	return fn(t)
}

// restartOf says how a system call that failed with EINTR resumes, as
// Linux's return codes for it decide: nanosleep, poll and select
// (ERESTARTNOHAND, restart_block) only when no handler ran; epoll_wait and
// rt_sigtimedwait never; everything else under SA_RESTART (ERESTARTSYS).
func restartOf(nr uint64) kernel.Restart {
	switch nr {
	case sysno.Nanosleep, sysno.ClockNanosleep, sysno.RestartSyscall, sysno.Ppoll, sysno.Pselect6, sysno.RtSigsuspend:
		return kernel.RestartNoHandler
	case sysno.EpollPwait, sysno.EpollPwait2, sysno.RtSigtimedwait:
		return kernel.RestartNever
	}
	return kernel.RestartSys
}

// raiseSIGPIPE sends SIGPIPE to a thread whose write to a broken pipe or
// socket failed with EPIPE, unless it passed MSG_NOSIGNAL to send.
func raiseSIGPIPE(t *kernel.Task, nr uint64, a Args) {
	switch nr {
	case sysno.Write, sysno.Writev, sysno.Pwrite64, sysno.Pwritev, sysno.Pwritev2, sysno.Sendfile:
	case sysno.Sendto:
		if a[3]&unix.MSG_NOSIGNAL != 0 {
			return
		}
	case sysno.Sendmsg:
		if a[2]&unix.MSG_NOSIGNAL != 0 {
			return
		}
	default:
		return
	}
	// Linux's send_sig(SIGPIPE, current, 0): SI_USER from the writer itself.
	t.SignalThread(unix.SIGPIPE, &kernel.SigInfo{Code: kernel.SIUser, Pid: int32(t.Proc.PID), UID: t.Proc.UID})
}
