package fs

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Advisory locks: POSIX record locks (fcntl F_SETLK, owned by a process, or
// by an open file description for the OFD kind) and flock locks (owned by
// an open file description), kept per node in the tree's lock table.
// Waiting for a lock is the caller's: a conflict is EAGAIN, and Changed
// tells when to try again.

// LockOwner identifies who holds a lock: a process, or a description.
type LockOwner any

// Lock is one locked range; End is exclusive, 0 meaning to the end of
// the file.
type Lock struct {
	Owner      LockOwner
	PID        int // reported by F_GETLK
	Write      bool
	Start, End int64
}

func (l Lock) overlaps(start, end int64) bool {
	return (l.End == 0 || start < l.End) && (end == 0 || l.Start < end)
}

// nodeLocks are the locks on one node.
type nodeLocks struct {
	posix    []Lock
	flocks   map[LockOwner]bool // owner → exclusive
	notifier Notifier
}

// lockTable is a tree's locks, by node: only the nodes locked or waited
// for have an entry.
type lockTable struct {
	mu     sync.Mutex
	byNode map[*Node]*nodeLocks
}

// of returns n's locks, making the entry; l.mu is held.
func (l *lockTable) of(n *Node) *nodeLocks {
	nl := l.byNode[n]
	if nl == nil {
		nl = &nodeLocks{flocks: map[LockOwner]bool{}}
		l.byNode[n] = nl
	}
	return nl
}

// TestLock returns the first lock on n that conflicts with want (F_GETLK).
func (t *Tree) TestLock(n *Node, want Lock) (Lock, bool) {
	t.locks.mu.Lock()
	defer t.locks.mu.Unlock()
	return conflict(t.locks.of(n), want)
}

func conflict(nl *nodeLocks, want Lock) (Lock, bool) {
	for _, l := range nl.posix {
		if l.Owner != want.Owner && (l.Write || want.Write) && l.overlaps(want.Start, want.End) {
			return l, true
		}
	}
	return Lock{}, false
}

// SetLock locks (or, with unlock, unlocks) a range of n for its owner,
// splitting and replacing the owner's locks there: EAGAIN on a conflict.
func (t *Tree) SetLock(n *Node, want Lock, unlock bool) error {
	t.locks.mu.Lock()
	nl := t.locks.of(n)
	if !unlock {
		if _, busy := conflict(nl, want); busy {
			t.locks.mu.Unlock()
			return unix.EAGAIN
		}
	}
	var kept []Lock
	for _, l := range nl.posix {
		if l.Owner != want.Owner || !l.overlaps(want.Start, want.End) {
			kept = append(kept, l)
			continue
		}
		if l.Start < want.Start { // the part before the range stays
			before := l
			before.End = want.Start
			kept = append(kept, before)
		}
		if want.End != 0 && (l.End == 0 || l.End > want.End) { // and the part after
			after := l
			after.Start = want.End
			kept = append(kept, after)
		}
	}
	if !unlock {
		kept = append(kept, want)
	}
	nl.posix = kept
	fns := nl.notifier.Changed()
	t.locks.forgetIdle(n, nl)
	t.locks.mu.Unlock()
	Notify(fns)
	return nil
}

// forgetIdle drops n's entry once it holds no lock and has no waiter.
// l.mu is held.
func (l *lockTable) forgetIdle(n *Node, nl *nodeLocks) {
	if len(nl.posix) == 0 && len(nl.flocks) == 0 && len(nl.notifier.watchers) == 0 {
		delete(l.byNode, n)
	}
}

// ReleaseLocks drops every POSIX lock owner holds on n (a close by the
// owning process).
func (t *Tree) ReleaseLocks(n *Node, owner LockOwner) {
	t.SetLock(n, Lock{Owner: owner}, true)
}

// ReleaseOwner drops every lock owner holds on any node of t (its exit,
// or the last close of a description).
func (t *Tree) ReleaseOwner(owner LockOwner) {
	t.locks.mu.Lock()
	var nodes []*Node
	for n, nl := range t.locks.byNode {
		for _, l := range nl.posix {
			if l.Owner == owner {
				nodes = append(nodes, n)
				break
			}
		}
		if _, ok := nl.flocks[owner]; ok {
			nodes = append(nodes, n)
		}
	}
	t.locks.mu.Unlock()
	for _, n := range nodes {
		t.ReleaseLocks(n, owner)
		t.Flock(n, owner, false, true)
	}
}

// Flock takes (exclusive or shared) or, with unlock, drops owner's flock
// lock on n: EAGAIN (EWOULDBLOCK) while another owner's lock conflicts.
func (t *Tree) Flock(n *Node, owner LockOwner, exclusive, unlock bool) error {
	t.locks.mu.Lock()
	nl := t.locks.of(n)
	if unlock {
		delete(nl.flocks, owner)
	} else {
		for o, ex := range nl.flocks {
			if o != owner && (ex || exclusive) {
				t.locks.mu.Unlock()
				return unix.EAGAIN
			}
		}
		nl.flocks[owner] = exclusive
	}
	fns := nl.notifier.Changed()
	t.locks.forgetIdle(n, nl)
	t.locks.mu.Unlock()
	Notify(fns)
	return nil
}

// WatchLocks calls notify at every change of n's locks until cancelled: a
// waiting F_SETLKW or flock tries again.
func (t *Tree) WatchLocks(n *Node, notify func()) func() {
	t.locks.mu.Lock()
	nl := t.locks.of(n)
	t.locks.mu.Unlock()
	return nl.notifier.Watch(&t.locks.mu, notify)
}
