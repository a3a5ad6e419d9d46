package net

import (
	"slices"
	"sync"

	"github.com/jiege-go/jiege/fs"
)

// Descriptions in flight: an SCM_RIGHTS message holds a reference to each
// description it carries until it is received or its queue dropped. A
// Unix socket sent over itself, or two sent over each other, and then
// closed by their owner, hold each other for ever: no descriptor refers
// to them and no one can receive what they hold. A program that makes
// such cycles in a loop would keep the kernel's memory, and its budget,
// for good. Linux collects them (net/unix/garbage.c); so does this, by the
// same rule: a Unix socket in flight that only messages in flight refer
// to, and that no such message in a reachable queue carries, is garbage,
// and its receive queue is dropped, which breaks the cycle.

// inflightGCEvery is how many descriptions may be put in flight between
// two collections that a send runs (Linux collects on every release of a
// Unix socket while any is in flight, and before a send once 16,000 are).
const inflightGCEvery = 1000

// inflight counts, per description, the messages in Unix sockets'
// queues that carry it.
type inflight struct {
	mu         sync.Mutex
	count      map[*fs.Description]int
	sinceGC    int // descriptions put in flight since the last collection
	collecting bool
}

// add records ds as put in flight; it reports whether enough were since
// the last collection that the sender should run one.
func (f *inflight) add(ds []*fs.Description) bool {
	if len(ds) == 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count == nil {
		f.count = map[*fs.Description]int{}
	}
	for _, d := range ds {
		f.count[d]++
	}
	f.sinceGC += len(ds)
	return f.sinceGC >= inflightGCEvery
}

// remove records ds as received or dropped.
func (f *inflight) remove(ds []*fs.Description) {
	if len(ds) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forget(ds)
}

// forget is remove with f.mu held.
func (f *inflight) forget(ds []*fs.Description) {
	for _, d := range ds {
		if f.count[d]--; f.count[d] <= 0 {
			delete(f.count, d)
		}
	}
}

// queued returns the descriptions the receive queue of d's socket holds
// (and, for a listening socket, its connections' not yet accepted), and
// whether d is a Unix socket at all.
func queued(d *fs.Description) ([]*fs.Description, bool) {
	switch s := d.File.(type) {
	case *UnixSocket:
		return s.queuedRights(false), true
	case *UnixDgramSocket:
		return s.queuedRights(false), true
	}
	return nil, false
}

// CollectUnixCycles drops the receive queues of the Unix sockets in flight
// that no one can reach, and returns how many it found. The counts and
// references it reads can only err towards keeping a socket: a
// description is a candidate only while every reference to it is a
// message's, and one carried by a queue outside the candidates, or by a
// reachable one, is reachable.
func (s *Stack) CollectUnixCycles() int {
	drop, found := s.inflight.collect()
	// Dropping the last references closes the sockets, whose own queues
	// (emptied by collect) then hold nothing.
	dropRights(drop)
	return found
}

// collect finds the unreachable sockets in flight and empties their
// queues: it returns what those carried, for the caller to drop once the
// lock is released, and how many sockets it found.
func (f *inflight) collect() ([]*fs.Description, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.collecting {
		return nil, 0
	}
	f.collecting, f.sinceGC = true, 0
	defer func() { f.collecting = false }()
	holds := map[*fs.Description][]*fs.Description{}
	for d, n := range f.count {
		if d.Refs() != int64(n) {
			continue // a descriptor or a call in progress holds it
		}
		if q, ok := queued(d); ok {
			holds[d] = q
		}
	}
	// A candidate carried more often than the candidates' queues carry it
	// is in some other queue: reachable, and so is what it holds.
	carried := map[*fs.Description]int{}
	for _, q := range holds {
		for _, d := range q {
			carried[d]++
		}
	}
	reachable := map[*fs.Description]bool{}
	var work []*fs.Description
	for d := range holds {
		if f.count[d] > carried[d] {
			reachable[d] = true
			work = append(work, d)
		}
	}
	for len(work) > 0 {
		d := work[len(work)-1]
		work = work[:len(work)-1]
		for _, c := range holds[d] {
			if _, candidate := holds[c]; candidate && !reachable[c] {
				reachable[c] = true
				work = append(work, c)
			}
		}
	}
	var drop []*fs.Description
	found := 0
	for d := range holds {
		if reachable[d] {
			continue
		}
		found++
		var rights []*fs.Description
		switch sock := d.File.(type) {
		case *UnixSocket:
			rights = sock.queuedRights(true)
		case *UnixDgramSocket:
			rights = sock.queuedRights(true)
		}
		f.forget(rights)
		drop = append(drop, rights...)
	}
	return drop, found
}

// queuedRights returns the descriptions s's receive queue carries, with
// those of the connections waiting in its backlog; with purge it also
// empties those queues, giving back their charge, and the caller drops
// what they carried.
func (s *UnixSocket) queuedRights(purge bool) []*fs.Description {
	p, end, backlog := s.queues()
	var out []*fs.Description
	if p != nil {
		var fns []func()
		out, fns = p.queuedRights(end, purge)
		fs.Notify(fns)
	}
	for _, c := range backlog {
		out = append(out, c.queuedRights(purge)...)
	}
	return out
}

// queues returns s's connection, its end, and the connections waiting in
// its backlog.
func (s *UnixSocket) queues() (*unixPair, int, []*UnixSocket) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pair, s.end, s.backlog
}

// queuedRights is UnixSocket.queuedRights for end's queue of p; it
// returns the pollers to tell once p's lock is released.
func (p *unixPair) queuedRights(end int, purge bool) ([]*fs.Description, []func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*fs.Description
	for _, seg := range p.in[end] {
		out = append(out, seg.rights...)
	}
	if !purge {
		return out, nil
	}
	p.dropQueueLocked(end)
	return out, p.notifier.Changed()
}

// queuedRights returns the descriptions s's queued datagrams carry; with
// purge it also drops the datagrams, giving back each one's charge to its
// sender, and the caller drops what they carried.
func (s *UnixDgramSocket) queuedRights(purge bool) []*fs.Description {
	queue, fns := s.takeQueue(purge)
	fs.Notify(fns)
	var out []*fs.Description
	for _, d := range queue {
		if purge {
			d.from.uncharge(d.charge)
		}
		out = append(out, d.rights...)
	}
	return out
}

// takeQueue returns s's queued datagrams, leaving the queue empty when
// purge is set, and the pollers to tell once s's lock is released.
func (s *UnixDgramSocket) takeQueue(purge bool) ([]unixDatagram, []func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	queue := s.queue
	if !purge {
		return slices.Clone(queue), nil // read after the lock is released
	}
	s.queue = nil
	return queue, s.notifier.Changed()
}
