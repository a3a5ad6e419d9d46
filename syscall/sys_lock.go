package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Flock, sysFlock)
}

// recordLock implements fcntl's F_GETLK, F_SETLK, F_SETLKW and their OFD
// forms: POSIX locks are the process's, OFD locks the description's.
func recordLock(t *kernel.Task, d *fs.Description, cmd, addr uint64) error {
	var fl linux.Flock
	if err := copyInStruct(t, addr, &fl); err != nil {
		return err
	}
	nf, ok := d.NodeFile()
	if !ok {
		return unix.EINVAL
	}
	var owner fs.LockOwner = t.Proc
	pid := t.Proc.PID
	ofd := cmd == unix.F_OFD_GETLK || cmd == unix.F_OFD_SETLK || cmd == unix.F_OFD_SETLKW
	if ofd {
		if fl.Pid != 0 {
			return unix.EINVAL
		}
		owner, pid = nf, -1
	}
	var base int64
	switch fl.Whence {
	case unix.SEEK_SET:
	case unix.SEEK_CUR:
		base = nf.Offset()
	case unix.SEEK_END:
		base = nf.Stat().Size
	default:
		return unix.EINVAL
	}
	start, end := base+fl.Start, int64(0)
	switch {
	case fl.Len > 0:
		end = start + fl.Len
		if end < start {
			return unix.EOVERFLOW
		}
	case fl.Len < 0:
		start, end = start+fl.Len, start
	}
	if start < 0 {
		return unix.EINVAL
	}
	want := fs.Lock{Owner: owner, PID: pid, Write: fl.Type == unix.F_WRLCK, Start: start, End: end}
	switch fl.Type {
	case unix.F_RDLCK:
		if !d.Readable() && cmd != unix.F_GETLK && cmd != unix.F_OFD_GETLK {
			return unix.EBADF
		}
	case unix.F_WRLCK:
		if !d.Writable() && cmd != unix.F_GETLK && cmd != unix.F_OFD_GETLK {
			return unix.EBADF
		}
	case unix.F_UNLCK:
		if cmd == unix.F_GETLK || cmd == unix.F_OFD_GETLK {
			return unix.EINVAL
		}
	default:
		return unix.EINVAL
	}
	node := nf.Node()
	switch cmd {
	case unix.F_GETLK, unix.F_OFD_GETLK:
		l, busy := t.Proc.Root.TestLock(node, want)
		if !busy {
			fl.Type = unix.F_UNLCK
		} else {
			fl.Type, fl.Whence, fl.Start, fl.Pid = unix.F_RDLCK, unix.SEEK_SET, l.Start, int32(t.Proc.NumberOf(l.PID))
			if l.Write {
				fl.Type = unix.F_WRLCK
			}
			fl.Len = 0
			if l.End != 0 {
				fl.Len = l.End - l.Start
			}
		}
		return copyOutStruct(t, addr, fl)
	}
	wait := cmd == unix.F_SETLKW || cmd == unix.F_OFD_SETLKW
	waiter := cmd == unix.F_SETLKW // OFD locks have no deadlock check, as on Linux
	if waiter {
		defer t.Proc.Root.StopWaiting(owner)
	}
	return lockWaiting(t, node, wait, func() error {
		return t.Proc.Root.SetLock(node, want, fl.Type == unix.F_UNLCK, waiter)
	})
}

// lockWaiting runs try, and while it finds the lock taken and the caller
// waits, tries again at each change of node's locks.
func lockWaiting(t *kernel.Task, node *fs.Node, wait bool, try func() error) error {
	err := try()
	if err != unix.EAGAIN || !wait {
		return err
	}
	changed := make(chan struct{}, 1)
	cancel := t.Proc.Root.WatchLocks(node, func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancel()
	for {
		if err = try(); err != unix.EAGAIN {
			return err
		}
		if err := t.Block(changed, time.Time{}); err != nil {
			return err
		}
	}
}

// sysFlock implements flock(2): EWOULDBLOCK with LOCK_NB while another
// description holds a conflicting lock.
func sysFlock(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	nf, ok := d.NodeFile()
	if !ok {
		return 0, unix.EINVAL
	}
	op := a[1] &^ unix.LOCK_NB
	if op != unix.LOCK_SH && op != unix.LOCK_EX && op != unix.LOCK_UN {
		return 0, unix.EINVAL
	}
	node := nf.Node()
	return 0, lockWaiting(t, node, a[1]&unix.LOCK_NB == 0, func() error {
		return t.Proc.Root.Flock(node, nf, op == unix.LOCK_EX, op == unix.LOCK_UN)
	})
}
