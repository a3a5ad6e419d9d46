package syscall

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.EpollCreate1, sysEpollCreate1)
	register(sysno.EpollCtl, sysEpollCtl)
	register(sysno.EpollPwait, sysEpollPwait)
	register(sysno.EpollPwait2, sysEpollPwait2)
	register(sysno.Eventfd2, sysEventfd2)
}

// sysEpollCreate1 implements epoll_create1(2).
func sysEpollCreate1(t *kernel.Task, a Args) (uint64, error) {
	if a[0]&^unix.EPOLL_CLOEXEC != 0 {
		return 0, unix.EINVAL
	}
	fd, err := t.Proc.Files.Open(fs.NewEpoll(), unix.O_RDWR, a[0]&unix.EPOLL_CLOEXEC != 0)
	return uint64(fd), err
}

// epollOf returns the epoll instance open on fd and its description,
// with the reference the caller drops: EINVAL for any other file.
func epollOf(t *kernel.Task, fd uint64) (*fs.Epoll, *fs.Description, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, nil, err
	}
	e, ok := d.Epoll()
	if !ok {
		d.DecRef()
		return nil, nil, unix.EINVAL
	}
	return e, d, nil
}

// sysEpollCtl implements epoll_ctl(2).
func sysEpollCtl(t *kernel.Task, a Args) (uint64, error) {
	e, ed, err := epollOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer ed.DecRef()
	fd := int(int32(a[2]))
	d, err := t.Proc.Files.Get(fd)
	if err != nil {
		return 0, err
	}
	defer d.DecRef() // a watch holds none: the last close removes it
	var events uint32
	var data uint64
	if a[1] != unix.EPOLL_CTL_DEL {
		var ev linux.EpollEvent
		if err := copyInStruct(t, a[3], &ev); err != nil {
			return 0, err
		}
		events, data = ev.Events, ev.Data
	}
	return 0, e.Ctl(int(a[1]), fd, d, events, data)
}

// sysEpollPwait implements epoll_pwait(2), with its signal mask in force
// while it waits. A timeout in milliseconds: negative waits forever, 0 not
// at all; a signal interrupts it (EINTR, never restarted).
func sysEpollPwait(t *kernel.Task, a Args) (uint64, error) {
	ms := int32(a[3])
	var deadline time.Time
	if ms > 0 {
		deadline = time.Now().Add(time.Duration(ms) * time.Millisecond)
	}
	return epollWait(t, a, deadline, ms != 0)
}

// sysEpollPwait2 implements epoll_pwait2(2): epoll_pwait with a struct
// timespec for its timeout (null: wait forever), checked first (EFAULT,
// EINVAL).
func sysEpollPwait2(t *kernel.Task, a Args) (uint64, error) {
	if a[3] == 0 {
		return epollWait(t, a, time.Time{}, true)
	}
	d, err := copyInTimespec(t, a[3])
	if err != nil {
		return 0, err
	}
	if d == 0 {
		return epollWait(t, a, time.Time{}, false)
	}
	return epollWait(t, a, time.Now().Add(d), true)
}

// epollWait is epoll_pwait and epoll_pwait2 once their timeout is known:
// no wait unless wait, else until deadline (zero: forever).
func epollWait(t *kernel.Task, a Args, deadline time.Time, wait bool) (uint64, error) {
	e, ed, err := epollOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer ed.DecRef()
	max := int(int32(a[2]))
	if max <= 0 || max > 1<<16 {
		return 0, unix.EINVAL
	}
	var block func(<-chan struct{}) error
	if wait {
		block = func(ready <-chan struct{}) error { return t.Block(ready, deadline) }
	}
	sigmask, err := sigmaskArg(t, a[4], a[5])
	if err != nil {
		return 0, err
	}
	if sigmask != nil {
		t.BeginMaskedWait(*sigmask)
	}
	w := epollWaits.Get().(*fs.Waiting)
	defer func() {
		if cap(w.Events) <= maxPooledEvents {
			w.Forget()
			epollWaits.Put(w)
		}
	}()
	err = e.Wait(max, block, w)
	if sigmask != nil {
		t.EndMaskedWait(err)
	}
	if err == unix.ETIMEDOUT {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if err := copyOutStructs(t, a[1], w.Events); err != nil {
		// Nothing reached the caller (events are copied at once): every
		// one is taken back, and the caller gets EFAULT, as on Linux.
		e.Undelivered(w, 0)
		return 0, err
	}
	return uint64(len(w.Events)), nil
}

// epollWaits keep epoll_wait's events between calls, so that a wait
// allocates none; one of more than maxPooledEvents is not kept.
var epollWaits = sync.Pool{New: func() any { return new(fs.Waiting) }}

const maxPooledEvents = 1024

// sysEventfd2 implements eventfd2(2).
func sysEventfd2(t *kernel.Task, a Args) (uint64, error) {
	if a[1]&^(unix.EFD_CLOEXEC|unix.EFD_NONBLOCK|unix.EFD_SEMAPHORE) != 0 {
		return 0, unix.EINVAL
	}
	e := fs.NewEventFD(uint64(uint32(a[0])), a[1]&unix.EFD_SEMAPHORE != 0)
	fd, err := t.Proc.Files.Open(e, unix.O_RDWR|uint32(a[1]&unix.EFD_NONBLOCK), a[1]&unix.EFD_CLOEXEC != 0)
	return uint64(fd), err
}
