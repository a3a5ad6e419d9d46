package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/ipc"
	jnet "github.com/jiege-go/jiege/net"
)

// POSIX message queues; kernel/ipc/mqueue.go keeps them.
func init() {
	register(sysno.MqOpen, sysMqOpen)
	register(sysno.MqUnlink, sysMqUnlink)
	register(sysno.MqTimedsend, sysMqTimedsend)
	register(sysno.MqTimedreceive, sysMqTimedreceive)
	register(sysno.MqNotify, sysMqNotify)
	register(sysno.MqGetsetattr, sysMqGetsetattr)
}

// sysMqOpen implements mq_open(2): the attributes are read first, the
// descriptor is always close-on-exec, and one must be free (EMFILE)
// before the name is looked at.
func sysMqOpen(t *kernel.Task, a Args) (uint64, error) {
	var attr *ipc.MQAttr
	if a[3] != 0 {
		attr = new(ipc.MQAttr)
		if err := copyInStruct(t, a[3], attr); err != nil {
			return 0, err
		}
	}
	name, err := copyInString(t, a[0])
	if err != nil {
		return 0, err
	}
	flags := uint32(a[1])
	if !fdAvailable(t.Proc.Files) {
		return 0, unix.EMFILE
	}
	p := t.Proc
	cred := p.Cred()
	f, err := t.IPC().MQOpen(ipc.MQOpen{Name: name, Flags: flags, Mode: uint32(a[2]) &^ p.Umask(), Attr: attr,
		RealUID: p.UID, Limit: p.Limit(unix.RLIMIT_MSGQUEUE).Cur, CanExceed: cred.Privileged()}, t.IPCCaller())
	if err != nil {
		return 0, err
	}
	fd, err := p.Files.Open(f, flags&(unix.O_ACCMODE|unix.O_NONBLOCK), true)
	return uint64(fd), err
}

// fdAvailable reports whether a descriptor below the table's limit is free.
func fdAvailable(files *fs.FDTable) bool {
	used, limit := 0, files.Limit()
	for _, fd := range files.Numbers() {
		if fd < limit {
			used++
		}
	}
	return used < limit
}

// sysMqUnlink implements mq_unlink(2).
func sysMqUnlink(t *kernel.Task, a Args) (uint64, error) {
	name, err := copyInString(t, a[0])
	if err != nil {
		return 0, err
	}
	return 0, t.IPC().MQUnlink(name, t.IPCCaller())
}

// mqOf returns the queue open on fd and its description, with the
// reference the caller drops: EBADF for any other file.
func mqOf(t *kernel.Task, fd uint64) (*ipc.MQFile, *fs.Description, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, nil, err
	}
	f, ok := d.File.(*ipc.MQFile)
	if !ok {
		d.DecRef()
		return nil, nil, unix.EBADF
	}
	return f, d, nil
}

// mqDeadline reads a send's or receive's absolute CLOCK_REALTIME timeout
// (0: none) as a time on the machine's clock: EINVAL for a bad timespec.
func mqDeadline(t *kernel.Task, addr uint64) (time.Time, error) {
	if addr == 0 {
		return time.Time{}, nil
	}
	d, err := copyInTimespec(t, addr)
	if err != nil {
		return time.Time{}, err
	}
	return time.Now().Add(d - time.Duration(t.Kernel().Now().UnixNano())), nil
}

// sysMqTimedsend implements mq_timedsend(2): EINVAL for a bad timeout or
// priority, EBADF unless fd is a queue open for writing, EMSGSIZE for a
// message longer than the queue's; the message is charged to the
// kernel-wide budget (ENOMEM past it) until received.
func sysMqTimedsend(t *kernel.Task, a Args) (uint64, error) {
	deadline, err := mqDeadline(t, a[4])
	if err != nil {
		return 0, err
	}
	prio := a[3]
	if prio >= ipc.MQPrioMax {
		return 0, unix.EINVAL
	}
	f, d, err := mqOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if !d.Writable() {
		return 0, unix.EBADF
	}
	size := a[2]
	if size > uint64(f.Attr().MsgSize) {
		return 0, unix.EMSGSIZE
	}
	if err := ipc.ChargeMessage(int(size)); err != nil {
		return 0, err
	}
	queued := false
	defer func() {
		if !queued {
			ipc.UnchargeMessage(int(size))
		}
	}()
	text := make([]byte, size)
	if err := copyIn(t, a[1], text); err != nil {
		return 0, err
	}
	for {
		changed, err := f.Send(text, uint32(prio), d.Nonblock(), t.IPCCaller(), t.Proc.UID)
		if err != ipc.ErrWouldBlock {
			queued = err == nil
			return 0, err
		}
		if err := t.Block(changed, deadline); err != nil {
			return 0, err
		}
	}
}

// sysMqTimedreceive implements mq_timedreceive(2): it returns the
// message's length, and stores its priority when asked.
func sysMqTimedreceive(t *kernel.Task, a Args) (uint64, error) {
	deadline, err := mqDeadline(t, a[4])
	if err != nil {
		return 0, err
	}
	f, d, err := mqOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if !d.Readable() {
		return 0, unix.EBADF
	}
	waiting := false
	defer f.StopWaiting(&waiting)
	for {
		text, prio, changed, err := f.Receive(int64(a[2]), d.Nonblock(), &waiting)
		if err == nil {
			ipc.UnchargeMessage(len(text)) // out of the queue: only this call holds it
			if err := copyOut(t, a[1], text); err != nil {
				return 0, err
			}
			if a[3] != 0 {
				if err := copyOutStruct(t, a[3], prio); err != nil {
					return 0, err
				}
			}
			return uint64(len(text)), nil
		}
		if err != ipc.ErrWouldBlock {
			return 0, err
		}
		if err := t.Block(changed, deadline); err != nil {
			return 0, err
		}
	}
}

// notifyCookieLen is NOTIFY_COOKIE_LEN: what SIGEV_THREAD's sigev_value
// points at, sent back on its netlink socket (glibc's helper thread reads it).
const notifyCookieLen = 32

// sysMqNotify implements mq_notify(2): the sigevent is checked before the
// descriptor (EINVAL, and for SIGEV_THREAD EFAULT for the cookie, EBADF or
// ENOTSOCK for its socket, EINVAL for a socket that is not netlink).
func sysMqNotify(t *kernel.Task, a Args) (uint64, error) {
	var n *ipc.MQNotify
	if a[1] != 0 {
		var ev linux.Sigevent
		if err := copyInStruct(t, a[1], &ev); err != nil {
			return 0, err
		}
		n = &ipc.MQNotify{PID: t.Proc.PID, Gone: t.Proc.Exited(), Notify: ev.Notify, Signo: ev.Signo}
		switch ev.Notify {
		case linux.SigevNone:
		case linux.SigevSignal:
			if ev.Signo < 0 || ev.Signo > kernel.NumSignals {
				return 0, unix.EINVAL
			}
			owner, value := t.Proc, ev.Value
			n.Signal = func(pid int, uid uint32) {
				owner.Signal(unix.Signal(ev.Signo), &kernel.SigInfo{Code: kernel.SIMesgq, Pid: int32(pid), UID: uid, Value: value})
			}
		case linux.SigevThread:
			n.Cookie = make([]byte, notifyCookieLen)
			if err := copyIn(t, ev.Value, n.Cookie); err != nil {
				return 0, err
			}
			so, sd, err := sockFile(t, uint64(uint32(ev.Signo)))
			if err != nil {
				return 0, err
			}
			sd.DecRef() // the registration holds the socket itself, as Linux's
			nl, ok := so.(*jnet.NetlinkSocket)
			if !ok {
				return 0, unix.EINVAL
			}
			n.Socket = nl
		default:
			return 0, unix.EINVAL
		}
	}
	f, d, err := mqOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return 0, f.SetNotify(n, t.Proc.PID)
}

// sysMqGetsetattr implements mq_getsetattr(2): only O_NONBLOCK may be
// set, on the description.
func sysMqGetsetattr(t *kernel.Task, a Args) (uint64, error) {
	var set *ipc.MQAttr
	if a[1] != 0 {
		set = new(ipc.MQAttr)
		if err := copyInStruct(t, a[1], set); err != nil {
			return 0, err
		}
		if set.Flags&^unix.O_NONBLOCK != 0 {
			return 0, unix.EINVAL
		}
	}
	f, d, err := mqOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	old := f.Attr()
	if d.Nonblock() {
		old.Flags = unix.O_NONBLOCK
	}
	if set != nil {
		d.SetNonblock(set.Flags&unix.O_NONBLOCK != 0)
	}
	if a[2] != 0 {
		return 0, copyOutStruct(t, a[2], old)
	}
	return 0, nil
}
