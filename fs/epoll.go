package fs

import (
	"cmp"
	"slices"
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
// As Linux's, it keeps a ready list: the items whose readiness changed,
// in the order the changes came, which a wait looks at instead of every
// item. A level-triggered item that was reported goes back to the list's
// end (a wait for fewer events than are ready takes turns); one found not
// ready leaves it until its next change.
//
// Lock order: mu, then a watched file's own locks (Ctl registers and drops
// watches under mu, collect asks for readiness). A watched file may call
// notify while holding its locks (netstack's waiter queues do), so notify
// never takes mu: it puts the item on the ready list under readyMu and
// signals under watchMu, both leaf locks; otherwise an epoll_ctl on one
// hart and a socket's notification on another deadlock.
type Epoll struct {
	NoopSeek
	mu    sync.Mutex
	items map[epollKey]*epollItem
	added uint64 // items ever added: an item's place in registration order
	// ready is the ready list, under readyMu; spare is the other of the
	// two arrays collect swaps, under mu.
	readyMu sync.Mutex
	ready   []*epollItem
	spare   []*epollItem
	wake    chan struct{}
	ino     uint64
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
	key    epollKey
	added  uint64 // Epoll.added when it was added
	file   Waitable
	events uint32
	data   uint64
	armed  bool // false once a one-shot item has fired; under mu
	cancel func()
	// queued: on the ready list; removed: out of the instance, never
	// queued again. Under readyMu (removed also under mu).
	queued, removed bool
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
		e.added++
		it = &epollItem{key: key, added: e.added, file: w, events: events, data: data, armed: true}
		if events&unix.EPOLLEXCLUSIVE != 0 {
			it.cancel = d.joinExclusive(w, e, it)
		} else {
			it.cancel = w.Watch(func() { e.notify(it) })
		}
		e.items[key] = it
		e.enqueueIfReady(it)
		d.watchedBy(e, fd)
	case unix.EPOLL_CTL_MOD:
		if !exists {
			return unix.ENOENT
		}
		it.events, it.data, it.armed = events, data, true
		e.enqueueIfReady(it)
	case unix.EPOLL_CTL_DEL:
		if !exists {
			return unix.ENOENT
		}
		e.remove(it)
		d.unwatchedBy(e, fd)
	default:
		return unix.EINVAL
	}
	return nil
}

// forget drops the watch added with fd on d: d's last reference went.
func (e *Epoll) forget(fd int, d *Description) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if it, ok := e.items[epollKey{fd, d}]; ok {
		e.remove(it)
	}
}

// remove drops it; e.mu is held. A copy of it may stay on the ready list
// until the next wait passes it by.
func (e *Epoll) remove(it *epollItem) {
	it.cancel()
	if child, ok := it.file.(*Epoll); ok {
		e.unlinkNested(child)
	}
	delete(e.items, it.key)
	mm.Charged.Uncharge(epollItemCharge)
	e.readyMu.Lock()
	defer e.readyMu.Unlock()
	it.removed = true
}

// Target returns the description of the n-th watch (from 0) added with
// descriptor number fd (kcmp's KCMP_EPOLL_TFD), counted in the order the
// watches were added (Linux counts in its tree's, by file address).
func (e *Epoll) Target(fd, n int) (*Description, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var matches []*epollItem
	for key, it := range e.items {
		if key.fd == fd {
			matches = append(matches, it)
		}
	}
	if n >= len(matches) {
		return nil, false
	}
	slices.SortFunc(matches, func(a, b *epollItem) int { return cmp.Compare(a.added, b.added) })
	return matches[n].key.desc, true
}

// notify records a change of it's readiness; the watched file may hold
// its own locks, so e.mu is not taken.
func (e *Epoll) notify(it *epollItem) {
	e.enqueue(it)
	e.signal()
}

// readyEvents returns the events of it that hold now; EPOLLERR and
// EPOLLHUP are always reported.
func (it *epollItem) readyEvents() uint32 {
	mask := it.events | unix.EPOLLERR | unix.EPOLLHUP
	return it.file.Readiness(mask) & mask
}

// copyReady appends the ready list to dst.
func (e *Epoll) copyReady(dst []*epollItem) []*epollItem {
	e.readyMu.Lock()
	defer e.readyMu.Unlock()
	return append(dst, e.ready...)
}

// enqueueIfReady queues it if it is ready now, as an add or a change of
// its events finds it; it is watched already, so a change after the look
// queues it too. e.mu is held.
func (e *Epoll) enqueueIfReady(it *epollItem) {
	if it.readyEvents() != 0 {
		e.enqueue(it)
	}
}

// enqueue puts it at the ready list's end unless it is on the list.
func (e *Epoll) enqueue(it *epollItem) {
	e.readyMu.Lock()
	defer e.readyMu.Unlock()
	e.enqueueLocked(it)
}

func (e *Epoll) enqueueLocked(it *epollItem) {
	if !it.queued && !it.removed {
		it.queued = true
		e.ready = append(e.ready, it)
	}
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

// takeReady takes the ready list, its items marked off it, before their
// readiness is read: a change after that queues an item again. e.mu is
// held.
func (e *Epoll) takeReady() []*epollItem {
	e.readyMu.Lock()
	defer e.readyMu.Unlock()
	batch := e.ready
	e.ready = e.spare[:0]
	for _, it := range batch {
		it.queued = false
	}
	return batch
}

// collect returns up to max ready events from the ready list. e.mu is
// held.
func (e *Epoll) collect(max int, w *Waiting) {
	batch := e.takeReady()
	i := 0
	for ; i < len(batch) && len(w.Events) < max; i++ {
		it := batch[i]
		if it.removed || !it.armed {
			continue
		}
		ready := it.readyEvents()
		if ready == 0 {
			continue
		}
		w.Events = append(w.Events, Event{Events: ready, Data: it.data})
		w.items = append(w.items, it)
		if it.events&unix.EPOLLONESHOT != 0 {
			it.armed = false
		}
	}

	// The list again: what this wait had no room for, first; then what
	// was queued meanwhile; then the level-triggered items it reported.
	e.readyMu.Lock()
	defer e.readyMu.Unlock()
	list := batch[:0]
	for _, it := range batch[i:] {
		if !it.queued && !it.removed {
			it.queued = true
			list = append(list, it)
		}
	}
	list = append(list, e.ready...)
	if len(list) < len(batch) {
		clear(batch[len(list):]) // no hold on removed items' files
	}
	clear(e.ready)
	e.spare, e.ready = e.ready[:0], list
	for _, it := range w.items {
		if it.events&(unix.EPOLLET|unix.EPOLLONESHOT) == 0 {
			e.enqueueLocked(it)
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
		it.armed = true
		e.enqueue(it)
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

// Readiness makes an epoll instance pollable itself: readable when an
// item on its ready list is ready.
func (e *Epoll) Readiness(mask uint32) uint32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	// The list is copied: a file's Readiness takes its locks, under
	// which it may notify, and so take readyMu.
	list := e.copyReady(e.spare[:0])
	var ready uint32
	for _, it := range list {
		if !it.removed && it.armed && it.file.Readiness(it.events)&it.events != 0 {
			ready = mask & unix.EPOLLIN
			break
		}
	}
	clear(list)
	e.spare = list[:0]
	return ready
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
	for key, it := range e.items {
		e.remove(it)
		key.desc.unwatchedBy(e, key.fd)
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
