package syscall

import (
	"encoding/binary"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Clone, sysClone)
	register(sysno.Clone3, sysClone3)
	register(sysno.Exit, sysExit)
	register(sysno.ExitGroup, sysExitGroup)
	register(sysno.SetTidAddress, sysSetTidAddress)
	register(sysno.Getpid, sysGetpid)
	register(sysno.Gettid, sysGettid)
	register(sysno.Getppid, sysGetppid)
	register(sysno.Setpgid, sysSetpgid)
	register(sysno.Getpgid, sysGetpgid)
	register(sysno.Getsid, sysGetsid)
	register(sysno.Setsid, sysSetsid)
	register(sysno.SchedYield, sysSchedYield)
	register(sysno.SchedGetaffinity, sysSchedGetaffinity)
	register(sysno.SchedSetaffinity, sysSchedSetaffinity)
	register(sysno.Prctl, sysPrctl)
}

// sysClone implements clone(2): new processes (fork, vfork, CLONE_VM) and
// threads (CLONE_THREAD). Its riscv64 argument order is flags, stack,
// parent_tid, tls, child_tid. Its flags are 32 bits, as on Linux: the
// flags above them (CLONE_CLEAR_SIGHAND) are clone3's. CLONE_PIDFD
// stores the pidfd at parent_tid, so it excludes CLONE_PARENT_SETTID.
func sysClone(t *kernel.Task, a Args) (uint64, error) {
	flags := uint64(uint32(a[0]))
	if flags&unix.CLONE_PIDFD != 0 && flags&unix.CLONE_PARENT_SETTID != 0 {
		return 0, unix.EINVAL
	}
	child, err := t.Clone(kernel.CloneArgs{Flags: flags &^ 0xff, ExitSignal: int(flags & 0xff),
		Stack: uintptr(a[1]), ParentTID: uintptr(a[2]), TLS: uintptr(a[3]), ChildTID: uintptr(a[4]), PidFD: uintptr(a[2])})
	if err != nil {
		return 0, err
	}
	return uint64(t.Proc.NumberOf(child.TID)), nil
}

// struct clone_args sizes: the first version, and the last one known here
// (set_tid, cgroup).
const (
	cloneArgsSize0   = 64
	cloneArgsSizeMax = 88
)

// sysClone3 implements clone3(2) (glibc's pthread_create tries it first).
// set_tid chooses the child's numbers in its PID namespace and those
// above it, at most 32 (MAX_PID_NS_LEVEL), deepest first; cgroup
// placement needs cgroups this kernel does not have.
// The pidfd field counts only with CLONE_PIDFD; glibc's pthread_create
// fills it in anyway, as Linux allows.
func sysClone3(t *kernel.Task, a Args) (uint64, error) {
	size := a[1]
	switch {
	case size < cloneArgsSize0:
		return 0, unix.EINVAL
	case size > 4096:
		return 0, unix.E2BIG
	}
	b := make([]byte, size)
	if err := copyIn(t, a[0], b); err != nil {
		return 0, err
	}
	for _, c := range b[min(size, cloneArgsSizeMax):] {
		if c != 0 {
			return 0, unix.E2BIG
		}
	}
	var ca linux.CloneArgs // an older, shorter version's missing fields are zero
	linux.Decode(b, &ca)
	flags, exitSignal, stack, stackSize := ca.Flags, ca.ExitSignal, ca.Stack, ca.StackSize
	switch {
	case flags&0xff != 0, exitSignal > 64, (ca.SetTID == 0) != (ca.SetTIDSize == 0),
		ca.SetTIDSize > maxPIDNSLevel,
		(stack == 0) != (stackSize == 0),
		flags&unix.CLONE_THREAD != 0 && exitSignal != 0:
		return 0, unix.EINVAL
	}
	var setTID []int
	if ca.SetTIDSize != 0 {
		ids := make([]byte, 4*ca.SetTIDSize)
		if err := copyIn(t, ca.SetTID, ids); err != nil {
			return 0, err
		}
		for i := 0; i < len(ids); i += 4 {
			setTID = append(setTID, int(int32(binary.LittleEndian.Uint32(ids[i:]))))
		}
	}
	sp := uintptr(0)
	if stack != 0 {
		sp = uintptr(stack + stackSize)
	}
	child, err := t.Clone(kernel.CloneArgs{Flags: flags, ExitSignal: int(exitSignal), Stack: sp,
		ChildTID: uintptr(ca.ChildTID), ParentTID: uintptr(ca.ParentTID), TLS: uintptr(ca.TLS), PidFD: uintptr(ca.Pidfd),
		SetTID: setTID})
	if err != nil {
		return 0, err
	}
	return uint64(t.Proc.NumberOf(child.TID)), nil
}

// maxPIDNSLevel is MAX_PID_NS_LEVEL, the most set_tid entries.
const maxPIDNSLevel = 32

// sysExit implements exit(2): the thread ends, and the process with its
// last thread.
func sysExit(t *kernel.Task, a Args) (uint64, error) {
	t.ExitThread(int(a[0] & 0xff))
	return 0, nil
}

// sysExitGroup implements exit_group(2).
func sysExitGroup(t *kernel.Task, a Args) (uint64, error) {
	t.Exiting = true
	t.Proc.Exit(int(a[0] & 0xff))
	return 0, nil
}

// sysSetTidAddress implements set_tid_address(2).
func sysSetTidAddress(t *kernel.Task, a Args) (uint64, error) {
	t.ClearTID = uintptr(a[0])
	return uint64(t.Gettid()), nil
}

// sysGetpid implements getpid(2): the caller's number in its PID
// namespace.
func sysGetpid(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Proc.Getpid()), nil }

// sysGettid implements gettid(2).
func sysGettid(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Gettid()), nil }

// sysGetppid implements getppid(2): init's parent is 0, and so is a
// parent outside the caller's PID namespace.
func sysGetppid(t *kernel.Task, a Args) (uint64, error) {
	return uint64(t.Proc.NumberOf(t.Proc.ParentPID())), nil
}

// sysSetpgid implements setpgid(2).
func sysSetpgid(t *kernel.Task, a Args) (uint64, error) {
	return 0, t.Setpgid(int(int32(a[0])), int(int32(a[1])))
}

// sysGetpgid implements getpgid(2).
func sysGetpgid(t *kernel.Task, a Args) (uint64, error) {
	pgid, err := t.Getpgid(int(int32(a[0])))
	return uint64(pgid), err
}

// sysGetsid implements getsid(2).
func sysGetsid(t *kernel.Task, a Args) (uint64, error) {
	sid, err := t.Getsid(int(int32(a[0])))
	return uint64(sid), err
}

// sysSetsid implements setsid(2).
func sysSetsid(t *kernel.Task, a Args) (uint64, error) {
	sid, err := t.Setsid()
	return uint64(sid), err
}

// sysSchedYield implements sched_yield(2).
func sysSchedYield(t *kernel.Task, a Args) (uint64, error) {
	runtime.Gosched()
	return 0, nil
}

// sysSchedGetaffinity implements sched_getaffinity(2): the harts the
// thread may run on, in a mask of one long (the harts are at most 8); the
// size must be a multiple of a long.
func sysSchedGetaffinity(t *kernel.Task, a Args) (uint64, error) {
	if a[1] < 8 || a[1]%8 != 0 {
		return 0, unix.EINVAL
	}
	target, err := schedTarget(t, a[0])
	if err != nil {
		return 0, err
	}
	return 8, copyOutStruct(t, a[2], target.Affinity())
}

// sysSchedSetaffinity implements sched_setaffinity(2): a mask shorter
// than a long is zero-extended, a longer one cut (harts past 64 cannot
// exist); another user's thread is EPERM, a mask of no hart EINVAL.
func sysSchedSetaffinity(t *kernel.Task, a Args) (uint64, error) {
	b := make([]byte, 8)
	if err := copyIn(t, a[2], b[:min(a[1], 8)]); err != nil {
		return 0, err
	}
	target, err := schedTarget(t, a[0])
	if err != nil {
		return 0, err
	}
	if !target.SameOwner(t.Proc) {
		return 0, unix.EPERM
	}
	return 0, target.SetAffinity(binary.LittleEndian.Uint64(b))
}
