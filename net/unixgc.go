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

// scmRights are the descriptions one message passes with SCM_RIGHTS and
// the user charged for them while they are in flight: the sender's real
// uid, as Linux's scm_fp_list keeps its user.
type scmRights struct {
	rights []*fs.Description
	user   uint32
}

// inflightGCEvery is how many descriptions may be put in flight between
// two collections that a send runs (Linux collects on every release of a
// Unix socket while any is in flight, and before a send once 16,000 are).
const inflightGCEvery = 1000

// inflight counts, per description, the messages in Unix sockets'
// queues that carry it, and per user the descriptions those messages
// carry that it sent. Counts are updated after the queue's lock is
// released, so a receive may take a message away before its send counted
// it: a count goes below zero for that moment, and an entry is deleted at
// zero only.
type inflight struct {
	mu         sync.Mutex
	count      map[*fs.Description]int
	sinceGC    int // descriptions put in flight since the last collection
	collecting bool
	// byUser is Linux's user_struct.unix_inflight, under its own lock,
	// taken last: a send reads it under its queue's lock, which a
	// collection takes under mu.
	userMu sync.Mutex
	byUser map[uint32]int
}

// add records m's descriptions as put in flight; it reports whether
// enough were since the last collection that the sender should run one.
func (f *inflight) add(m scmRights) bool {
	if len(m.rights) == 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count == nil {
		f.count = map[*fs.Description]int{}
	}
	for _, d := range m.rights {
		countAdd(f.count, d, 1)
	}
	f.chargeUser(m.user, len(m.rights))
	f.sinceGC += len(m.rights)
	return f.sinceGC >= inflightGCEvery
}

// remove records m's descriptions as received or dropped.
func (f *inflight) remove(m scmRights) {
	if len(m.rights) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forget(m)
}

// forget is remove with f.mu held.
func (f *inflight) forget(m scmRights) {
	for _, d := range m.rights {
		countAdd(f.count, d, -1)
	}
	f.chargeUser(m.user, -len(m.rights))
}

// countAdd adds n to m[k], deleting the entry at zero.
func countAdd[K comparable](m map[K]int, k K, n int) {
	if m[k] += n; m[k] == 0 {
		delete(m, k)
	}
}

func (f *inflight) chargeUser(user uint32, n int) {
	f.userMu.Lock()
	defer f.userMu.Unlock()
	if f.byUser == nil {
		f.byUser = map[uint32]int{}
	}
	countAdd(f.byUser, user, n)
}

// over reports whether c's user has more descriptions in flight than c
// may have when it passes more (ETOOMANYREFS).
func (f *inflight) over(c Caller) bool {
	f.userMu.Lock()
	defer f.userMu.Unlock()
	n := f.byUser[c.UID]
	return n > 0 && uint64(n) > c.InflightLimit
}

// collectIfOver runs a collection before a send of c's that passes
// descriptions while its user is over its bound, so that closed cycles do
// not keep the user's budget: Linux collects whenever a Unix socket is
// closed while any is in flight.
func (s *Stack) collectIfOver(c Caller) {
	if s.inflight.over(c) {
		s.CollectUnixCycles()
	}
}

// queued returns the descriptions the receive queue of d's socket holds
// (and, for a listening socket, its connections' not yet accepted), and
// whether d is a Unix socket at all.
func queued(d *fs.Description) ([]*fs.Description, bool) {
	var msgs []scmRights
	switch s := d.File.(type) {
	case *UnixSocket:
		msgs = s.queuedRights(false)
	case *UnixDgramSocket:
		msgs = s.queuedRights(false)
	default:
		return nil, false
	}
	var out []*fs.Description
	for _, m := range msgs {
		out = append(out, m.rights...)
	}
	return out, true
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
		var msgs []scmRights
		switch sock := d.File.(type) {
		case *UnixSocket:
			msgs = sock.queuedRights(true)
		case *UnixDgramSocket:
			msgs = sock.queuedRights(true)
		}
		for _, m := range msgs {
			f.forget(m)
			drop = append(drop, m.rights...)
		}
	}
	return drop, found
}

// queuedRights returns what the messages in s's receive queue pass, with
// those of the connections waiting in its backlog; with purge it also
// empties those queues, giving back their charge, and the caller drops
// what they carried.
func (s *UnixSocket) queuedRights(purge bool) []scmRights {
	p, end, backlog := s.queues()
	var out []scmRights
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
func (p *unixPair) queuedRights(end int, purge bool) ([]scmRights, []func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []scmRights
	for _, seg := range p.in[end] {
		if len(seg.rights) > 0 {
			out = append(out, seg.scmRights)
		}
	}
	if !purge {
		return out, nil
	}
	p.dropQueueLocked(end)
	return out, p.notifier.Changed()
}

// queuedRights returns what s's queued datagrams pass; with purge it
// also drops the datagrams, giving back each one's charge to its sender,
// and the caller drops what they carried.
func (s *UnixDgramSocket) queuedRights(purge bool) []scmRights {
	queue, fns := s.takeQueue(purge)
	fs.Notify(fns)
	var out []scmRights
	for _, d := range queue {
		if purge {
			d.from.uncharge(d.charge)
		}
		if len(d.rights) > 0 {
			out = append(out, d.scmRights)
		}
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
