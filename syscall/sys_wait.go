package syscall

import (
	"math"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Wait4, sysWait4)
	register(sysno.Waitid, sysWaitid)
}

// waitThreadFlags are __WNOTHREAD, __WALL and __WCLONE, accepted and
// without effect: every child is a process.
const waitThreadFlags = 0x20000000 | 0x40000000 | 0x80000000

// sysWait4 implements wait4(2) without resource usage.
func sysWait4(t *kernel.Task, a Args) (uint64, error) {
	if a[2]&^(unix.WNOHANG|unix.WUNTRACED|unix.WCONTINUED|waitThreadFlags) != 0 {
		return 0, unix.EINVAL
	}
	if int32(a[0]) == math.MinInt32 {
		return 0, unix.ESRCH // its group, -INT_MIN, does not exist (Linux's kernel_wait4)
	}
	r, err := t.Wait(t.WaitForPid(int(int32(a[0]))), int(a[2]&^waitThreadFlags)|kernel.WaitExited)
	if err != nil || r.PID == 0 {
		return 0, err
	}
	if a[1] != 0 {
		if err := copyOutStruct(t, a[1], int32(r.WaitStatus())); err != nil {
			return 0, err
		}
	}
	if a[3] != 0 {
		if err := copyOutStruct(t, a[3], linux.Rusage{}); err != nil {
			return 0, err
		}
	}
	return uint64(r.PID), nil
}

// sysWaitid implements waitid(2) for P_ALL, P_PID, P_PGID and P_PIDFD,
// without resource usage. A pidfd opened with PIDFD_NONBLOCK waits as
// with WNOHANG, and finding no change is EAGAIN unless WNOHANG was asked.
func sysWaitid(t *kernel.Task, a Args) (uint64, error) {
	const pAll, pPID, pPGID, pPIDFD = 0, 1, 2, 3
	options := a[3] &^ waitThreadFlags
	if options&^(unix.WNOHANG|unix.WSTOPPED|unix.WEXITED|unix.WCONTINUED|unix.WNOWAIT) != 0 ||
		options&(unix.WSTOPPED|unix.WEXITED|unix.WCONTINUED) == 0 {
		return 0, unix.EINVAL
	}
	id := int(int32(a[1]))
	var which kernel.WaitFor
	nonblockFD := false
	switch a[0] {
	case pAll:
		which.Any = true
	case pPID:
		if id <= 0 {
			return 0, unix.EINVAL
		}
		which.PID = t.WaitID(id)
	case pPGID:
		if id < 0 {
			return 0, unix.EINVAL
		}
		which.PGID = t.WaitID(id)
		if id == 0 {
			which.PGID = t.Proc.PGID() // the caller's group
		}
	case pPIDFD:
		if id < 0 {
			return 0, unix.EINVAL
		}
		q, nonblock, err := pidfdWaitTarget(t, a[1])
		if err != nil {
			return 0, err
		}
		which.PID, nonblockFD = q.PID, nonblock
	default:
		return 0, unix.EINVAL
	}
	waitOptions := options
	if nonblockFD {
		waitOptions |= unix.WNOHANG
	}
	r, err := t.Wait(which, int(waitOptions))
	if err != nil {
		return 0, err
	}
	if r.PID == 0 && nonblockFD && options&unix.WNOHANG == 0 {
		return 0, unix.EAGAIN
	}
	if a[2] != 0 {
		var info linux.Siginfo
		if r.PID != 0 {
			info = linux.Siginfo{Signo: int32(unix.SIGCHLD), Code: int32(r.Code), Pid: int32(r.PID), UID: r.UID}
			info.SetStatus(int32(r.Status))
		}
		if err := copyOutStruct(t, a[2], info); err != nil {
			return 0, err
		}
	}
	if a[4] != 0 {
		if err := copyOutStruct(t, a[4], linux.Rusage{}); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// pidfdWaitTarget is the process a waitid(P_PIDFD) names, and whether the
// pidfd was opened with PIDFD_NONBLOCK.
func pidfdWaitTarget(t *kernel.Task, fd uint64) (*kernel.Process, bool, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, false, err
	}
	defer d.DecRef()
	f, ok := d.File.(*kernel.PidFD)
	if !ok {
		return nil, false, unix.EBADF
	}
	return f.Process(), d.Nonblock(), nil
}
