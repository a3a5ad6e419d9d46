package fs

import (
	"sync"

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
	items map[epollKey]*epollItem
	order []epollKey // registration order, for fair reporting
	wake  chan struct{}
	ino   uint64
	// watchers are those watching this instance itself.
	watchers Notifier
}

// epollKey names a watch as Linux does: the descriptor number it was added
// with and the description that number referred to then.
type epollKey struct {
	fd   int
	desc *Description
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
	return &Epoll{items: map[epollKey]*epollItem{}, wake: make(chan struct{}, 1), ino: nextIno.Add(1)}
}

// Ctl adds, modifies or removes the watch on fd, open on d.
func (e *Epoll) Ctl(op, fd int, d *Description, events uint32, data uint64) error {
	w, ok := d.File.(Waitable)
	if !ok {
		return unix.EPERM
	}
	if d.File == File(e) {
		return unix.EINVAL
	}
	e.mu.Lock()
	err := e.ctl(op, fd, d, w, events, data)
	e.mu.Unlock()
	if err == nil {
		e.signal()
	}
	return err
}

// ctl does Ctl's work; e.mu is held.
func (e *Epoll) ctl(op, fd int, d *Description, w Waitable, events uint32, data uint64) error {
	key := epollKey{fd, d}
	it, exists := e.items[key]
	switch op {
	case unix.EPOLL_CTL_ADD:
		if exists {
			return unix.EEXIST
		}
		it = &epollItem{file: w, events: events, data: data, pending: true, armed: true}
		it.cancel = w.Watch(func() { e.notify(it) })
		e.items[key] = it
		e.order = append(e.order, key)
		d.watchedBy(e)
	case unix.EPOLL_CTL_MOD:
		if !exists {
			return unix.ENOENT
		}
		it.events, it.data, it.pending, it.armed = events, data, true, true
	case unix.EPOLL_CTL_DEL:
		if !exists {
			return unix.ENOENT
		}
		e.remove(key)
		d.unwatchedBy(e)
	default:
		return unix.EINVAL
	}
	return nil
}

// forget drops every watch on d: its last reference went.
func (e *Epoll) forget(d *Description) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for key := range e.items {
		if key.desc == d {
			e.remove(key)
		}
	}
}

func (e *Epoll) remove(key epollKey) {
	e.items[key].cancel()
	delete(e.items, key)
	for i, o := range e.order {
		if o == key {
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
	e.mu.Lock()
	fns := e.watchers.Changed()
	e.mu.Unlock()
	Notify(fns)
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

// Wait returns up to max ready events. While there are none it calls
// block with a channel that receives at each change, and returns block's
// error when it fails (a timeout, an interruption; nil block: no waiting).
func (e *Epoll) Wait(max int, block func(<-chan struct{}) error) ([]Event, error) {
	for {
		e.mu.Lock()
		out := e.collect(max)
		e.mu.Unlock()
		if len(out) > 0 || block == nil {
			return out, nil
		}
		if err := block(e.wake); err != nil {
			return nil, err
		}
	}
}

// Watch calls notify at every change of the watched files (an epoll
// instance inside another, or polled).
func (e *Epoll) Watch(notify func()) func() {
	return e.watchers.Watch(&e.mu, notify)
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
	for key := range e.items {
		e.remove(key)
		key.desc.unwatchedBy(e)
	}
	return nil
}
