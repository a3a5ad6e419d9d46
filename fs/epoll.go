package fs

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
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
//
// Lock order: mu, then a watched file's own locks (Ctl registers and drops
// watches under mu, collect asks for readiness). A watched file may call
// notify while holding its locks (netstack's waiter queues do), so notify
// never takes mu: it sets the item's pending flag atomically and signals
// under watchMu, a leaf lock; otherwise an epoll_ctl on one hart and a
// socket's notification on another deadlock.
type Epoll struct {
	mu    sync.Mutex
	items map[epollKey]*epollItem
	order []epollKey // registration order, for fair reporting
	wake  chan struct{}
	ino   uint64
	// waiting counts the Wait calls blocked now: an EPOLLEXCLUSIVE
	// event goes to an instance someone waits on.
	waiting atomic.Int32
	// watchers are those watching this instance itself, guarded by watchMu.
	watchMu  sync.Mutex
	watchers Notifier
	// nest is where the instance sits among instances watching
	// instances (fs/epollnest.go), under epollNestMu.
	nest epollNest
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
	pending atomic.Bool // a change of readiness not yet reported (edge-triggered)
	armed   bool        // false once a one-shot item has fired
	cancel  func()
}

// Event is one ready file, as epoll_wait reports it: struct
// epoll_event, so that the events are copied out as they are.
type Event = linux.EpollEvent

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
	// An instance added to an instance is linked first, so that two
	// adds that would together close a loop see each other; the link
	// is undone if the add fails.
	child, nested := d.File.(*Epoll)
	if nested && op == unix.EPOLL_CTL_ADD {
		if events&unix.EPOLLEXCLUSIVE != 0 {
			return unix.EINVAL
		}
		if err := e.linkNested(child); err != nil {
			return err
		}
	}
	e.mu.Lock()
	err := e.ctl(op, fd, d, w, events, data)
	e.mu.Unlock()
	if err != nil && nested && op == unix.EPOLL_CTL_ADD {
		e.unlinkNested(child)
	}
	if err == nil {
		e.signal()
	}
	return err
}

// epollItemCharge is what an item costs the kernel-wide budget: the item,
// its watch, its map and order entries (Linux's epitem and eppoll_entry
// are about as much).
const epollItemCharge = 192

// ctl does Ctl's work; e.mu is held.
func (e *Epoll) ctl(op, fd int, d *Description, w Waitable, events uint32, data uint64) error {
	key := epollKey{fd, d}
	it, exists := e.items[key]
	switch op {
	case unix.EPOLL_CTL_ADD:
		if exists {
			return unix.EEXIST
		}
		if mm.Charged.Charge(epollItemCharge) != nil {
			return unix.ENOMEM // as Linux when it cannot allocate the epitem
		}
		it = &epollItem{file: w, events: events, data: data, armed: true}
		it.pending.Store(true)
		if events&unix.EPOLLEXCLUSIVE != 0 {
			it.cancel = d.joinExclusive(w, e, it)
		} else {
			it.cancel = w.Watch(func() { e.notify(it) })
		}
		e.items[key] = it
		e.order = append(e.order, key)
		d.watchedBy(e)
	case unix.EPOLL_CTL_MOD:
		if !exists {
			return unix.ENOENT
		}
		it.events, it.data, it.armed = events, data, true
		it.pending.Store(true)
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
	it := e.items[key]
	it.cancel()
	if child, ok := it.file.(*Epoll); ok {
		e.unlinkNested(child)
	}
	delete(e.items, key)
	mm.Charged.Uncharge(epollItemCharge)
	for i, o := range e.order {
		if o == key {
			e.order = append(e.order[:i], e.order[i+1:]...)
			break
		}
	}
}

// Target returns the description of the n-th watch (from 0) added with
// descriptor number fd (kcmp's KCMP_EPOLL_TFD), counted in the order the
// watches were added (Linux counts in its tree's, by file address).
func (e *Epoll) Target(fd, n int) (*Description, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range e.order {
		if k.fd != fd {
			continue
		}
		if n == 0 {
			return k.desc, true
		}
		n--
	}
	return nil, false
}

// notify records a change of it's readiness; the watched file may hold
// its own locks, so e.mu is not taken.
func (e *Epoll) notify(it *epollItem) {
	it.pending.Store(true)
	e.signal()
}

func (e *Epoll) signal() {
	e.watchMu.Lock()
	fns := e.watchers.Changed()
	e.watchMu.Unlock()
	Notify(fns)
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// collect returns up to max ready events. e.mu is held.
func (e *Epoll) collect(max int, w *Waiting) {
	for i := 0; i < len(e.order) && len(w.Events) < max; i++ {
		it := e.items[e.order[i]]
		if !it.armed {
			continue
		}
		// The flag is cleared before readiness is read: a change after
		// that sets it again and is reported next time.
		if pending := it.pending.Swap(false); !pending && it.events&unix.EPOLLET != 0 {
			continue
		}
		// EPOLLERR and EPOLLHUP are always reported.
		ready := it.file.Readiness(it.events|unix.EPOLLERR|unix.EPOLLHUP) & (it.events | unix.EPOLLERR | unix.EPOLLHUP)
		if ready == 0 {
			continue
		}
		w.Events = append(w.Events, Event{Events: ready, Data: it.data})
		w.items = append(w.items, it)
		if it.events&unix.EPOLLONESHOT != 0 {
			it.armed = false
		}
	}
}

// Waiting is one wait's events and the items they came from, kept by
// the caller between waits so that a wait allocates none.
type Waiting struct {
	Events []Event
	items  []*epollItem
}

// Wait sets w.Events to up to max ready events. While there are none it
// calls block with a channel that receives at each change, and returns
// block's error when it fails (a timeout, an interruption; nil block: no
// waiting).
func (e *Epoll) Wait(max int, block func(<-chan struct{}) error, w *Waiting) error {
	for {
		w.Events, w.items = w.Events[:0], w.items[:0]
		e.mu.Lock()
		e.collect(max, w)
		e.mu.Unlock()
		if len(w.Events) > 0 || block == nil {
			return nil
		}
		e.waiting.Add(1)
		err := block(e.wake)
		e.waiting.Add(-1)
		if err != nil {
			return err
		}
	}
}

// Undelivered takes back the events of w from the k-th on, which did not
// reach the caller (its buffer faulted), as Linux's ep_send_events puts
// back an item it could not copy: an edge-triggered item is pending again
// and a one-shot one armed, so that the next wait reports them.
func (e *Epoll) Undelivered(w *Waiting, k int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, it := range w.items[k:] {
		it.pending.Store(true)
		it.armed = true
	}
}

// Forget drops w's hold on the items it reported (before w is pooled).
func (w *Waiting) Forget() {
	clear(w.items)
	w.Events, w.items = w.Events[:0], w.items[:0]
}

// Watch calls notify at every change of the watched files (an epoll
// instance inside another, or polled).
func (e *Epoll) Watch(notify func()) func() {
	return e.watchers.Watch(&e.watchMu, notify)
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

func (e *Epoll) ReadTo(dst UserIO) (int64, error) {
	return ReadStaged(dst, func([]byte) (int, error) { return 0, unix.EINVAL })
}
func (e *Epoll) WriteFrom(src UserIO) (int64, error) {
	return WriteStaged(src, func([]byte) (int, error) { return 0, unix.EINVAL })
}
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

// EPOLLEXCLUSIVE: the instances that watch one file exclusively share
// one watch on it, and a change of its readiness wakes one of them that
// has a waiter (in turn), not all: nginx's workers each watch the
// listening socket so, and each new connection wakes one worker, as on
// Linux. When none has a waiter every one is told, as Linux queues the
// event on each instance it visits. The group belongs to the file's
// description (Description.exclusive), under its exclusiveMu.

type exclusiveGroup struct {
	mu      *sync.Mutex // the description's exclusiveMu
	members []exclusiveMember
	next    int // where the next notification starts looking
	cancel  func()
}

type exclusiveMember struct {
	e  *Epoll
	it *epollItem
}

// joinExclusive adds it, of e, to the exclusive watchers of w, the file
// of d, and returns what takes it out.
func (d *Description) joinExclusive(w Waitable, e *Epoll, it *epollItem) func() {
	d.exclusiveMu.Lock()
	g := d.exclusive
	if g == nil {
		g = &exclusiveGroup{mu: &d.exclusiveMu}
		d.exclusive = g
	}
	g.members = append(g.members, exclusiveMember{e, it})
	first := len(g.members) == 1
	d.exclusiveMu.Unlock()
	if first {
		// Watch takes the file's locks, which a notification holds when
		// it takes exclusiveMu: not under exclusiveMu.
		cancel := w.Watch(func() { g.notify() })
		d.exclusiveMu.Lock()
		abandoned := len(g.members) == 0 // every member left meanwhile
		if !abandoned {
			g.cancel = cancel
		}
		d.exclusiveMu.Unlock()
		if abandoned {
			cancel()
		}
	}
	return func() {
		d.exclusiveMu.Lock()
		for i, m := range g.members {
			if m.it == it {
				g.members = append(g.members[:i], g.members[i+1:]...)
				break
			}
		}
		var cancel func()
		if len(g.members) == 0 {
			if d.exclusive == g {
				d.exclusive = nil
			}
			cancel, g.cancel = g.cancel, nil
		}
		d.exclusiveMu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
}

// notify tells the first member, from g.next on, whose instance has a
// waiter; every member when none has.
func (g *exclusiveGroup) notify() {
	g.mu.Lock()
	var chosen []exclusiveMember
	for k := range g.members {
		i := (g.next + k) % len(g.members)
		if m := g.members[i]; m.e.waiting.Load() > 0 {
			chosen, g.next = []exclusiveMember{m}, i+1
			break
		}
	}
	if chosen == nil {
		chosen = append(chosen, g.members...)
	}
	g.mu.Unlock()
	for _, m := range chosen {
		m.e.notify(m.it)
	}
}
