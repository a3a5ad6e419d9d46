package fs

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Waitable is a file whose readiness epoll can watch: sockets, eventfds.
type Waitable interface {
	File
	// Readiness returns which of the poll events in mask hold now.
	Readiness(mask uint32) uint32
	// Watch calls notify on every change of readiness until cancelled.
	Watch(notify func()) (cancel func())
}

// Epoll is an epoll instance. Level-triggered items are reported while
// ready; edge-triggered ones (EPOLLET) only after a change of readiness since
// they were last reported, and EPOLLONESHOT items once until re-armed.
type Epoll struct {
	mu    sync.Mutex
	items map[int]*epollItem
	order []int // registration order, for fair reporting
	wake  chan struct{}
	ino   uint64
}

type epollItem struct {
	file    Waitable
	events  uint32
	data    uint64
	pending bool // a change of readiness not yet reported (edge-triggered)
	armed   bool // false once a one-shot item has fired
	cancel  func()
}

// Event is one ready file, as epoll_wait reports it.
type Event struct {
	Events uint32
	Data   uint64
}

const epollUserFlags = unix.EPOLLET | unix.EPOLLONESHOT | unix.EPOLLEXCLUSIVE | unix.EPOLLWAKEUP

// NewEpoll returns an empty epoll instance.
func NewEpoll() *Epoll {
	return &Epoll{items: map[int]*epollItem{}, wake: make(chan struct{}, 1), ino: nextIno.Add(1)}
}

// Ctl adds, modifies or removes the watch on fd (open on f).
func (e *Epoll) Ctl(op, fd int, f File, events uint32, data uint64) error {
	w, ok := f.(Waitable)
	if !ok {
		return unix.EPERM
	}
	if f == File(e) {
		return unix.EINVAL
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	it, exists := e.items[fd]
	switch op {
	case unix.EPOLL_CTL_ADD:
		if exists {
			return unix.EEXIST
		}
		it = &epollItem{file: w, events: events, data: data, pending: true, armed: true}
		it.cancel = w.Watch(func() { e.notify(it) })
		e.items[fd] = it
		e.order = append(e.order, fd)
	case unix.EPOLL_CTL_MOD:
		if !exists {
			return unix.ENOENT
		}
		it.events, it.data, it.pending, it.armed = events, data, true, true
	case unix.EPOLL_CTL_DEL:
		if !exists {
			return unix.ENOENT
		}
		e.remove(fd)
	default:
		return unix.EINVAL
	}
	e.signal()
	return nil
}

// Forget drops fd from the instance: its descriptor was closed.
func (e *Epoll) Forget(fd int, f File) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if it, ok := e.items[fd]; ok && File(it.file) == f {
		e.remove(fd)
	}
}

func (e *Epoll) remove(fd int) {
	e.items[fd].cancel()
	delete(e.items, fd)
	for i, o := range e.order {
		if o == fd {
			e.order = append(e.order[:i], e.order[i+1:]...)
			break
		}
	}
}

func (e *Epoll) notify(it *epollItem) {
	e.mu.Lock()
	it.pending = true
	e.mu.Unlock()
	e.signal()
}

func (e *Epoll) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// collect returns up to max ready events. e.mu is held.
func (e *Epoll) collect(max int) []Event {
	var out []Event
	for i := 0; i < len(e.order) && len(out) < max; i++ {
		it := e.items[e.order[i]]
		if !it.armed {
			continue
		}
		et := it.events&unix.EPOLLET != 0
		if et && !it.pending {
			continue
		}
		// EPOLLERR and EPOLLHUP are always reported.
		ready := it.file.Readiness(it.events|unix.EPOLLERR|unix.EPOLLHUP) & (it.events | unix.EPOLLERR | unix.EPOLLHUP)
		it.pending = false
		if ready == 0 {
			continue
		}
		out = append(out, Event{Events: ready, Data: it.data})
		if it.events&unix.EPOLLONESHOT != 0 {
			it.armed = false
		}
	}
	return out
}

// Wait returns ready events, waiting up to timeout (forever when negative).
func (e *Epoll) Wait(max int, timeout time.Duration) []Event {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	for {
		e.mu.Lock()
		out := e.collect(max)
		e.mu.Unlock()
		if len(out) > 0 || timeout == 0 {
			return out
		}
		select {
		case <-e.wake:
		case <-expired:
			return nil
		}
	}
}

// Readiness makes an epoll instance pollable itself: readable when ready.
func (e *Epoll) Readiness(mask uint32) uint32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, it := range e.items {
		if it.armed && it.file.Readiness(it.events)&it.events != 0 {
			return mask & unix.EPOLLIN
		}
	}
	return 0
}

func (e *Epoll) Read([]byte) (int, error)  { return 0, unix.EINVAL }
func (e *Epoll) Write([]byte) (int, error) { return 0, unix.EINVAL }
func (e *Epoll) Stat() Stat {
	return Stat{Dev: devAnon, Ino: e.ino, Mode: 0o600, Nlink: 1, Blksize: 4096}
}

// Close drops every watch.
func (e *Epoll) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for fd := range e.items {
		e.remove(fd)
	}
	return nil
}
