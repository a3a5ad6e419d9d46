package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Ptrace, sysPtrace)
}

// ptrace(2) requests (include/uapi/linux/ptrace.h).
const (
	ptraceTraceme    = 0
	ptracePeekText   = 1
	ptracePeekData   = 2
	ptracePokeText   = 4
	ptracePokeData   = 5
	ptraceCont       = 7
	ptraceKill       = 8
	ptraceAttach     = 16
	ptraceDetach     = 17
	ptraceGetSigInfo = 0x4202
	ptraceSetSigInfo = 0x4203
	ptraceGetRegSet  = 0x4204
	ptraceSetRegSet  = 0x4205
	ptraceSeize      = 0x4206
)

// ntPrstatus is the NT_PRSTATUS register set: riscv64's user_regs_struct,
// pc then x1-x31.
const (
	ntPrstatus   = 1
	prstatusSize = 32 * 8
)

// sysPtrace implements ptrace(2) in Linux's order: TRACEME; then the
// thread (ESRCH); ATTACH and SEIZE; then the tracee must be the caller's
// and stopped (ESRCH; KILL only traced). Requests not implemented fail
// as unknown ones, EIO: PEEKUSER and POKEUSER are unknown on riscv64 as on
// Linux; SINGLESTEP, SYSCALL, SETOPTIONS, the ptrace events, INTERRUPT and
// LISTEN are not implemented, and SEIZE takes no options.
func sysPtrace(t *kernel.Task, a Args) (uint64, error) {
	req, pid, addr, data := a[0], int(int32(a[1])), a[2], a[3]
	switch req {
	case ptraceTraceme:
		return 0, t.PtraceTraceme()
	case ptraceAttach:
		return 0, t.PtraceAttach(pid, false)
	case ptraceSeize:
		if t.FindTask(pid) == nil {
			return 0, unix.ESRCH
		}
		if addr != 0 || data != 0 {
			return 0, unix.EIO
		}
		return 0, t.PtraceAttach(pid, true)
	}
	q, err := t.Tracee(pid, req != ptraceKill)
	if err != nil {
		return 0, err
	}
	switch req {
	case ptracePeekText, ptracePeekData:
		w, err := q.PeekWord(addr)
		if err != nil {
			return 0, err
		}
		return 0, copyOutStruct(t, data, w)
	case ptracePokeText, ptracePokeData:
		return 0, q.PokeWord(addr, data)
	case ptraceCont:
		return 0, t.Proc.PtraceCont(q, data)
	case ptraceKill:
		q.PtraceKill()
		return 0, nil
	case ptraceDetach:
		return 0, t.Proc.PtraceDetach(q, data)
	case ptraceGetSigInfo:
		return 0, copyOutStruct(t, data, kernel.Siginfo(q.TraceSigInfo()))
	case ptraceSetSigInfo:
		var si linux.Siginfo
		if err := copyInStruct(t, data, &si); err != nil {
			return 0, err
		}
		q.SetTraceSigInfo(kernel.SigInfo{Signo: unix.Signal(si.Signo), Code: si.Code, Pid: si.Pid, UID: si.UID, Value: si.Value})
		return 0, nil
	case ptraceGetRegSet, ptraceSetRegSet:
		return 0, ptraceRegSet(t, q, addr, data, req == ptraceSetRegSet)
	}
	return 0, unix.EIO
}

// ptraceRegSet reads or writes the tracee's NT_PRSTATUS registers
// through the iovec at iovAddr, as Linux's ptrace_regset: a length not a
// multiple of a register is EINVAL, a longer one is cut to the set and
// written back. Other register sets are EINVAL.
func ptraceRegSet(t *kernel.Task, q *kernel.Process, typ, iovAddr uint64, set bool) error {
	var iov linux.Iovec
	if err := copyInStruct(t, iovAddr, &iov); err != nil {
		return err
	}
	if typ != ntPrstatus || iov.Len%8 != 0 {
		return unix.EINVAL
	}
	regs := q.TraceRegs()
	if regs == nil {
		return unix.ESRCH
	}
	iov.Len = min(iov.Len, prstatusSize)
	var words [32]uint64
	words[0] = regs.PC
	copy(words[1:], regs.X[1:])
	buf := linux.AsBytes(&words)[:iov.Len]
	if set {
		if err := copyIn(t, iov.Base, buf); err != nil {
			return err
		}
		regs.PC = words[0]
		copy(regs.X[1:], words[1:])
	} else if err := copyOut(t, iov.Base, buf); err != nil {
		return err
	}
	return copyOutStruct(t, iovAddr, iov)
}
