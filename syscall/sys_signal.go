package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
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
const sigsetSize = linux.SizeofSigset

// signalArg decodes a signal number argument, 1..64.
func signalArg(v uint64) (unix.Signal, error) {
	if v == 0 || v > kernel.NumSignals {
		return 0, unix.EINVAL
	}
	return unix.Signal(v), nil
}

func copyInSigset(t *kernel.Task, addr uint64) (kernel.SigSet, error) {
	var set uint64
	if err := copyInStruct(t, addr, &set); err != nil {
		return 0, err
	}
	return kernel.SigSet(set), nil
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
		var sa linux.Sigaction
		if err := copyInStruct(t, a[1], &sa); err != nil {
			return 0, err
		}
		act = &kernel.SigAction{Handler: sa.Handler, Flags: sa.Flags, Mask: kernel.SigSet(sa.Mask)}
	}
	old := t.Proc.Action(sig)
	if act != nil {
		old = t.Proc.SetAction(sig, *act)
	}
	if a[2] != 0 {
		return 0, copyOutStruct(t, a[2], linux.Sigaction{Handler: old.Handler, Flags: old.Flags, Mask: uint64(old.Mask)})
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
		return 0, copyOutStruct(t, a[2], uint64(old))
	}
	return 0, nil
}

// sysRtSigpending implements rt_sigpending(2): the pending signals that
// are blocked.
func sysRtSigpending(t *kernel.Task, a Args) (uint64, error) {
	if a[1] > sigsetSize {
		return 0, unix.EINVAL
	}
	set := uint64(t.Pending() & t.Mask())
	return 0, copyOut(t, a[0], linux.AsBytes(&set)[:a[1]])
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
		if err := copyOutStruct(t, a[1], kernel.Siginfo(info)); err != nil {
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
		var ss linux.StackT
		if err := copyInStruct(t, a[0], &ss); err != nil {
			return 0, err
		}
		const ssAutoDisarm = 1 << 31
		mode := int32(uint32(ss.Flags) &^ ssAutoDisarm)
		if mode == kernel.SSOnStack {
			mode = 0 // accepted as 0, as Linux does for old programs
		}
		if err := t.SetAltStack(ss.SP, ss.Size, mode); err != nil {
			return 0, err
		}
	}
	if a[1] != 0 {
		return 0, copyOutStruct(t, a[1], linux.StackT{SP: sp, Flags: int32(flags), Size: size})
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
	var si linux.Siginfo
	if err := copyInStruct(t, addr, &si); err != nil {
		return kernel.SigInfo{}, err
	}
	return kernel.SigInfo{Signo: unix.Signal(sig), Code: si.Code, Pid: si.Pid, UID: si.UID, Value: si.Value}, nil
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
// (ERESTARTNOHAND, restart_block) only when no handler ran, msgsnd and
// msgrcv so too; epoll_wait, rt_sigtimedwait, semop and io_uring_enter
// never; everything else under SA_RESTART (ERESTARTSYS).
func restartOf(nr uint64) kernel.Restart {
	switch nr {
	case sysno.Nanosleep, sysno.ClockNanosleep, sysno.RestartSyscall, sysno.Ppoll, sysno.Pselect6, sysno.RtSigsuspend,
		sysno.Msgsnd, sysno.Msgrcv:
		return kernel.RestartNoHandler
	case sysno.EpollPwait, sysno.EpollPwait2, sysno.RtSigtimedwait, sysno.Semop, sysno.Semtimedop, sysno.IoUringEnter:
		return kernel.RestartNever
	}
	return kernel.RestartSys
}

// raiseSIGPIPE sends SIGPIPE to a thread whose write to a broken pipe or
// socket failed with EPIPE, unless it passed MSG_NOSIGNAL to send.
func raiseSIGPIPE(t *kernel.Task, nr uint64, a Args) {
	switch nr {
	case sysno.Write, sysno.Writev, sysno.Pwrite64, sysno.Pwritev, sysno.Pwritev2, sysno.Sendfile, sysno.Splice, sysno.Tee:
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
	t.SignalThread(unix.SIGPIPE, &kernel.SigInfo{Code: kernel.SIUser, Pid: int32(t.Proc.Getpid()), UID: t.Proc.UID})
}
