package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/syscall/sysno"
)

func init() {
	register(sysno.Exit, sysExit)
	register(sysno.ExitGroup, sysExitGroup)
	register(sysno.SetTidAddress, sysSetTidAddress)
	register(sysno.SetRobustList, sysSetRobustList)
	register(sysno.GetRobustList, sysGetRobustList)
	register(sysno.Getpid, sysGetpid)
	register(sysno.Gettid, sysGettid)
	register(sysno.Getppid, sysGetppid)
	register(sysno.Getuid, func(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Proc.UID), nil })
	register(sysno.Geteuid, func(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Proc.EUID), nil })
	register(sysno.Getgid, func(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Proc.GID), nil })
	register(sysno.Getegid, func(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Proc.EGID), nil })
	register(sysno.SchedYield, sysSchedYield)
	register(sysno.SchedGetaffinity, sysSchedGetaffinity)
}

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
	return uint64(t.TID), nil
}

// robustListHeadSize is sizeof(struct robust_list_head).
const robustListHeadSize = 24

// sysSetRobustList implements set_robust_list(2); the list is walked when
// the thread exits.
func sysSetRobustList(t *kernel.Task, a Args) (uint64, error) {
	if a[1] != robustListHeadSize {
		return 0, unix.EINVAL
	}
	t.RobustList = uintptr(a[0])
	return 0, nil
}

// sysGetRobustList implements get_robust_list(2) (tid 0: the caller).
func sysGetRobustList(t *kernel.Task, a Args) (uint64, error) {
	target := t
	if tid := int(int32(a[0])); tid != 0 {
		if target = kernel.TaskByID(tid); target == nil {
			return 0, unix.ESRCH
		}
	}
	if err := copyOut(t, a[1], words(uint64(target.RobustList))); err != nil {
		return 0, err
	}
	return 0, copyOut(t, a[2], words(robustListHeadSize))
}

// sysGetpid implements getpid(2).
func sysGetpid(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Proc.PID), nil }

// sysGettid implements gettid(2).
func sysGettid(t *kernel.Task, a Args) (uint64, error) { return uint64(t.TID), nil }

// sysGetppid implements getppid(2): init's parent is 0.
func sysGetppid(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Proc.ParentPID()), nil }

// sysSchedYield implements sched_yield(2).
func sysSchedYield(t *kernel.Task, a Args) (uint64, error) {
	yield()
	return 0, nil
}

// sysSchedGetaffinity implements sched_getaffinity(2): every hart.
func sysSchedGetaffinity(t *kernel.Task, a Args) (uint64, error) {
	if a[1] < 8 {
		return 0, unix.EINVAL
	}
	return 8, copyOut(t, a[2], words(1<<kernel.CPUs-1))
}
