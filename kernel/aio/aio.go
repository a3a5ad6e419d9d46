// Package aio owns Linux's native asynchronous I/O contexts (io_setup(2)):
// an address space's table of them, each one's completions waiting to be
// reaped, and the system-wide count against fs.aio-max-nr. The system
// calls (syscall/sys_aio.go) perform each request when it is submitted,
// as Linux does for buffered I/O, and post its completion here.
package aio

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// MaxNr is fs.aio-max-nr, Linux's default: the events all contexts may ask for.
const MaxNr = 65536

// Event is struct io_event.
type Event struct {
	Data uint64 // the iocb's aio_data
	Obj  uint64 // the iocb's user address
	Res  int64  // the result: a count or -errno
	Res2 int64
}

// Limit is the system-wide count of events asked for (fs.aio-nr).
type Limit struct {
	mu sync.Mutex
	nr uint64
}

// Nr is fs.aio-nr.
func (l *Limit) Nr() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nr
}

func (l *Limit) take(n uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nr+n > MaxNr {
		return false
	}
	l.nr += n
	return true
}

func (l *Limit) give(n uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nr -= n
}

// Context is one io_setup context: its id (the address of its ring
// mapping in the address space), the completions waiting, and how many
// requests may be outstanding.
type Context struct {
	ID     uint64
	Ring   uintptr // length of the ring mapping
	Events int     // the ring's size in events: io_submit takes no more at once
	lim    *Limit
	asks   uint64 // nr_events as io_setup was given it, counted in lim

	mu     sync.Mutex
	slots  int // requests that may still be submitted
	events []Event
	wake   chan struct{} // closed and replaced when an event arrives or the context dies
	dead   bool
}

// Table is an address space's contexts (Linux's mm->ioctx_table).
type Table struct {
	mu   sync.Mutex
	ctxs map[uint64]*Context
}

// RingSize is what Linux's ioctx_alloc and aio_setup_ring make of
// io_setup's nr_events on a machine of cpus harts: the ring's length in
// bytes and the events it holds. EINVAL for zero or too many; EAGAIN past
// fs.aio-max-nr.
func RingSize(nrEvents uint32, cpus int) (length uintptr, events int, err error) {
	if nrEvents == 0 {
		return 0, 0, unix.EINVAL
	}
	const ringHeader, eventSize, page = 32, 32, 4096
	n := max(nrEvents, uint32(cpus)*4) * 2 // as Linux, in 32 bits
	if n > 0x10000000/eventSize {
		return 0, 0, unix.EINVAL
	}
	if nrEvents > MaxNr {
		return 0, 0, unix.EAGAIN
	}
	size := ringHeader + eventSize*(uintptr(n)+2)
	pages := (size + page - 1) / page
	return pages * page, int((pages*page - ringHeader) / eventSize), nil
}

// Setup makes a context with id (the ring mapping's address) whose ring
// holds events, asked for with nrEvents: EAGAIN when that would pass
// fs.aio-max-nr.
func (t *Table) Setup(lim *Limit, id uint64, ring uintptr, nrEvents uint32, events int) (*Context, error) {
	if !lim.take(uint64(nrEvents)) {
		return nil, unix.EAGAIN
	}
	if err := mm.Charged.Charge(contextCharge(events)); err != nil {
		lim.give(uint64(nrEvents))
		return nil, unix.ENOMEM // as ioctx_alloc's failed allocation
	}
	c := &Context{ID: id, Ring: ring, Events: events, lim: lim, asks: uint64(nrEvents), slots: events - 1, wake: make(chan struct{})}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ctxs == nil {
		t.ctxs = map[uint64]*Context{}
	}
	t.ctxs[id] = c
	return c, nil
}

// Get is the context with id.
func (t *Table) Get(id uint64) (*Context, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.ctxs[id]
	return c, ok
}

// Destroy removes the context with id (io_destroy) and kills it.
func (t *Table) Destroy(id uint64) (*Context, bool) {
	c, ok := t.remove(id)
	if ok {
		c.kill()
	}
	return c, ok
}

func (t *Table) remove(id uint64) (*Context, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.ctxs[id]
	delete(t.ctxs, id)
	return c, ok
}

// DestroyAll kills every context: the address space is gone.
func (t *Table) DestroyAll() {
	for _, c := range t.removeAll() {
		c.kill()
	}
}

func (t *Table) removeAll() map[uint64]*Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	ctxs := t.ctxs
	t.ctxs = nil
	return ctxs
}

func (c *Context) kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return
	}
	c.dead = true
	close(c.wake)
	c.lim.give(c.asks)
	c.events = nil
	mm.Charged.Uncharge(contextCharge(c.Events))
}

// contextCharge is what a context of events may hold in the kernel's
// heap, charged to the kernel-wide budget for its life: its completions
// queued at most, and the context itself.
func contextCharge(events int) int { return events*eventSize + 256 }

// eventSize is an Event's size in the queue.
const eventSize = 32

// Reserve takes a slot for one request; false when the ring could not
// hold its completion (EAGAIN) or the context is gone.
func (c *Context) Reserve() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead || c.slots == 0 {
		return false
	}
	c.slots--
	return true
}

// Unreserve gives back a slot whose request was not submitted.
func (c *Context) Unreserve() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slots++
}

// Complete posts a reserved request's completion.
func (c *Context) Complete(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return
	}
	c.events = append(c.events, e)
	close(c.wake)
	c.wake = make(chan struct{})
}

// Take removes and returns the oldest completions, at most max, with a
// channel closed when more arrive and whether the context is gone.
func (c *Context) Take(max int) ([]Event, <-chan struct{}, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(max, len(c.events))
	got := append([]Event(nil), c.events[:n]...)
	c.events = append(c.events[:0], c.events[n:]...)
	c.slots += n
	return got, c.wake, c.dead
}

// Untake puts back completions that Take returned and that could not be
// copied out, so that the next reader gets them, as Linux leaves a ring's
// head where it was.
func (c *Context) Untake(es []Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return
	}
	c.events = append(append([]Event(nil), es...), c.events...)
	c.slots -= len(es)
}
