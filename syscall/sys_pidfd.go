package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs/procfs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.PidfdOpen, sysPidfdOpen)
	register(sysno.PidfdSendSignal, sysPidfdSendSignal)
	register(sysno.PidfdGetfd, sysPidfdGetfd)
}

// sysPidfdOpen implements pidfd_open(2): the descriptor is always
// close-on-exec, and PIDFD_NONBLOCK (O_NONBLOCK) makes waitid on it
// EAGAIN while the process runs.
func sysPidfdOpen(t *kernel.Task, a Args) (uint64, error) {
	pid, flags := int(int32(a[0])), a[1]
	if flags&^unix.PIDFD_NONBLOCK != 0 || pid <= 0 {
		return 0, unix.EINVAL
	}
	f, err := t.OpenPidFD(pid)
	if err != nil {
		return 0, err
	}
	fd, err := t.Proc.Files.Open(f, unix.O_RDWR|uint32(flags), true)
	return uint64(fd), err
}

// pidfdProcess is the process a pidfd names: EBADF for a descriptor that
// is not one (nor, when dirOK, an open /proc/PID directory), ESRCH for a
// /proc/PID whose process is gone.
func pidfdProcess(t *kernel.Task, fd uint64, dirOK bool) (*kernel.Process, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, err
	}
	defer d.DecRef()
	if f, ok := d.File.(*kernel.PidFD); ok {
		return f.Process(), nil
	}
	if n := d.Node(); dirOK && n != nil {
		if dir, ok := n.Bound.(procfs.PIDDir); ok {
			if p := t.Kernel().ProcessByID(dir.PID); p != nil && p.Started() == dir.Start {
				return p, nil
			}
			return nil, unix.ESRCH // gone, its pid perhaps another's now
		}
	}
	return nil, unix.EBADF
}

// pidfd_send_signal's flags (Linux 6.9): whom the signal goes to; a
// pidfd names a process, so by default its thread group.
const (
	pidfdSignalThread       = 1 << 0
	pidfdSignalThreadGroup  = 1 << 1
	pidfdSignalProcessGroup = 1 << 2
)

// sysPidfdSendSignal implements pidfd_send_signal(2): kill(2) through a
// pidfd or a /proc/PID directory, or with a siginfo as rt_sigqueueinfo(2).
// PIDFD_SIGNAL_THREAD sends to the process's main thread, and
// PIDFD_SIGNAL_PROCESS_GROUP to its process group as kill(-pgid).
func sysPidfdSendSignal(t *kernel.Task, a Args) (uint64, error) {
	flags := a[3]
	if flags&^(pidfdSignalThread|pidfdSignalThreadGroup|pidfdSignalProcessGroup) != 0 || flags&(flags-1) != 0 {
		return 0, unix.EINVAL
	}
	q, err := pidfdProcess(t, a[0], true)
	if err != nil {
		return 0, err
	}
	sig := unix.Signal(int32(a[1]))
	var info *kernel.SigInfo
	if a[2] != 0 {
		var si linux.Siginfo
		if err := copyInStruct(t, a[2], &si); err != nil {
			return 0, err
		}
		if unix.Signal(si.Signo) != sig {
			return 0, unix.EINVAL
		}
		info = &kernel.SigInfo{Signo: sig, Code: si.Code, Pid: si.Pid, UID: si.UID, Value: si.Value}
	}
	switch flags {
	case pidfdSignalThread, pidfdSignalProcessGroup:
		// By the numbers the caller's namespace gives them.
		id := t.Proc.NumberOf(q.PID)
		if id == 0 {
			return 0, unix.ESRCH
		}
		if flags == pidfdSignalProcessGroup {
			pgid := q.PGID()
			if pgid != 0 && t.Proc.NumberOf(pgid) == 0 {
				return 0, unix.ESRCH
			}
			return 0, t.Kill(-t.Proc.NumberOf(pgid), sig)
		}
		if info != nil {
			return 0, t.Queue(id, id, *info)
		}
		return 0, t.Tgkill(id, id, sig)
	}
	return 0, t.SignalPidFD(q, sig, info)
}

// sysPidfdGetfd implements pidfd_getfd(2): a new close-on-exec descriptor
// of the same description as the process's targetfd, for a caller that
// may ptrace it.
func sysPidfdGetfd(t *kernel.Task, a Args) (uint64, error) {
	if a[2] != 0 {
		return 0, unix.EINVAL
	}
	q, err := pidfdProcess(t, a[0], false)
	if err != nil {
		return 0, err
	}
	if q.Gone() {
		return 0, unix.ESRCH
	}
	if !t.MayPtrace(q) {
		return 0, unix.EPERM
	}
	d, err := q.Files.Get(int(int32(a[1])))
	if err != nil {
		return 0, unix.EBADF
	}
	defer d.DecRef()
	fd, err := t.Proc.Files.Install(d, true, 0)
	return uint64(fd), err
}
