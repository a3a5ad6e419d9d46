package fs

import (
	"cmp"
	"math"
	"slices"
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

// nodeLocks are the locks on one node. posix keeps Linux's list order,
// which F_GETLK reports from: each owner's locks together, by start, the
// owners in the order they first locked; an owner's ranges never overlap,
// and adjacent ranges of one type are one lock.
type nodeLocks struct {
	posix    []Lock
	flocks   map[LockOwner]bool // owner → exclusive
	leases   map[*NodeFile]bool // holder → write lease (lease.go)
	notifier Notifier
}

// lockTable is a tree's locks, by node: only the nodes locked or waited
// for have an entry. waitsFor maps a POSIX owner blocked in F_SETLKW to
// the owner of the lock it waits for, for the deadlock check.
type lockTable struct {
	mu       sync.Mutex
	byNode   map[*Node]*nodeLocks
	waitsFor map[LockOwner]LockOwner
}

// of returns n's locks, making the entry; l.mu is held.
func (l *lockTable) of(n *Node) *nodeLocks {
	nl := l.byNode[n]
	if nl == nil {
		nl = &nodeLocks{flocks: map[LockOwner]bool{}, leases: map[*NodeFile]bool{}}
		l.byNode[n] = nl
		n.inLockTable.Store(true)
	}
	return nl
}

// TestLock returns the first lock on n that conflicts with want (F_GETLK).
func (t *Tree) TestLock(n *Node, want Lock) (Lock, bool) {
	t.locks.mu.Lock()
	defer t.locks.mu.Unlock()
	nl := t.locks.byNode[n]
	if nl == nil { // asking makes no entry: it would stay
		return Lock{}, false
	}
	return conflict(nl, want)
}

func conflict(nl *nodeLocks, want Lock) (Lock, bool) {
	for _, l := range nl.posix {
		if l.Owner != want.Owner && (l.Write || want.Write) && l.overlaps(want.Start, want.End) {
			return l, true
		}
	}
	return Lock{}, false
}

// maxDeadlockSteps bounds the walk along waiting owners, as Linux's
// MAX_DEADLK_ITERATIONS.
const maxDeadlockSteps = 10

// SetLock locks (or, with unlock, unlocks) a range of n for its owner,
// splitting and replacing the owner's locks there: EAGAIN on a conflict.
// A waiter (F_SETLKW of a POSIX lock) that meets a conflict is recorded
// as waiting for the conflicting lock's owner until StopWaiting, and gets
// EDEADLK instead when that owner waits, directly or through others, for
// the waiter (Linux's posix_locks_deadlock).
func (t *Tree) SetLock(n *Node, want Lock, unlock, waiter bool) error {
	t.locks.mu.Lock()
	nl := t.locks.of(n)
	if !unlock {
		if l, busy := conflict(nl, want); busy {
			err := unix.EAGAIN
			if waiter {
				if t.locks.leadsTo(l.Owner, want.Owner) {
					err = unix.EDEADLK
				} else {
					t.locks.waitsFor[want.Owner] = l.Owner
				}
			}
			t.locks.mu.Unlock()
			return err
		}
	}
	delete(t.locks.waitsFor, want.Owner)
	nl.posix = replaceRange(nl.posix, want, unlock)
	fns := nl.notifier.Changed()
	t.locks.forgetIdle(n, nl)
	t.locks.mu.Unlock()
	Notify(fns)
	return nil
}

// leadsTo reports whether owner is target or waits, through at most
// maxDeadlockSteps owners, for target. l.mu is held.
func (l *lockTable) leadsTo(owner, target LockOwner) bool {
	for range maxDeadlockSteps {
		if owner == target {
			return true
		}
		next, ok := l.waitsFor[owner]
		if !ok {
			return false
		}
		owner = next
	}
	return false
}

// StopWaiting forgets that owner waits for a lock (its F_SETLKW ended).
func (t *Tree) StopWaiting(owner LockOwner) {
	t.locks.mu.Lock()
	delete(t.locks.waitsFor, owner)
	t.locks.mu.Unlock()
}

// lockEnd is a lock's exclusive end with "to the end of the file" as the
// largest offset, so ranges compare as numbers.
func lockEnd(l Lock) int64 {
	if l.End == 0 {
		return math.MaxInt64
	}
	return l.End
}

// replaceRange returns posix with want's owner's locks over want's range
// replaced by want (or removed, with unlock), keeping the list's order:
// the owner's locks stay where its first one was (or go last), sorted by
// start, and a lock adjacent to or overlapping one of its type merges.
func replaceRange(posix []Lock, want Lock, unlock bool) []Lock {
	at := -1
	var rest, mine []Lock
	for _, l := range posix {
		if l.Owner != want.Owner {
			rest = append(rest, l)
			continue
		}
		if at < 0 {
			at = len(rest)
		}
		mine = append(mine, l)
	}
	if at < 0 {
		at = len(rest)
	}
	start, end := want.Start, lockEnd(want)
	var kept []Lock
	for _, l := range mine {
		if !l.overlaps(want.Start, want.End) {
			kept = append(kept, l)
			continue
		}
		if l.Start < start { // the part before the range stays
			before := l
			before.End = start
			kept = append(kept, before)
		}
		if lockEnd(l) > end { // and the part after
			after := l
			after.Start = end
			kept = append(kept, after)
		}
	}
	if !unlock {
		merged := want
		var others []Lock
		for _, l := range kept {
			if l.Write == want.Write && (lockEnd(l) == start || l.Start == end) {
				merged.Start = min(merged.Start, l.Start)
				if lockEnd(l) > lockEnd(merged) {
					merged.End = l.End
				}
				continue
			}
			others = append(others, l)
		}
		kept = append(others, merged)
	}
	slices.SortFunc(kept, func(a, b Lock) int { return cmp.Compare(a.Start, b.Start) })
	out := make([]Lock, 0, len(rest)+len(kept))
	out = append(out, rest[:at]...)
	out = append(out, kept...)
	return append(out, rest[at:]...)
}

// forgetIdle drops n's entry once it holds no lock and has no waiter.
// l.mu is held.
func (l *lockTable) forgetIdle(n *Node, nl *nodeLocks) {
	if len(nl.posix) == 0 && len(nl.flocks) == 0 && len(nl.leases) == 0 && len(nl.notifier.watchers) == 0 {
		delete(l.byNode, n)
		n.inLockTable.Store(false)
	}
}

// ReleaseLocks drops every POSIX lock owner holds on n (a close by the
// owning process).
func (t *Tree) ReleaseLocks(n *Node, owner LockOwner) {
	if !n.inLockTable.Load() {
		return
	}
	t.SetLock(n, Lock{Owner: owner}, true, false)
}

// ReleaseOwner drops every lock owner holds on any node of t (a
// process's exit).
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

// ReleaseOwnerOn drops every lock owner holds on n: a description's
// flock and OFD locks at its last close, which can be on its own file
// only (ReleaseOwner searches every node, for a process's exit).
func (t *Tree) ReleaseOwnerOn(n *Node, owner LockOwner) {
	if !n.inLockTable.Load() {
		return
	}
	t.ReleaseLocks(n, owner)
	t.Flock(n, owner, false, true)
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
