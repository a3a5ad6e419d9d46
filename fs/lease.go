package fs

import "golang.org/x/sys/unix"

// Leases (fcntl F_SETLEASE): a description's read or write lease on a
// regular file. A read lease needs the file open nowhere for writing, a
// write lease the file open by no other description, as Linux's
// check_conflicting_open. Leases are not broken yet: an open that would
// break one on Linux proceeds without notifying the holder.

// SetLease gives holder, a description's file opened with the given
// access, a read (write false) or write lease on n, or drops its lease
// (unlock): EAGAIN while another open or lease conflicts.
func (t *Tree) SetLease(n *Node, holder *NodeFile, write, unlock bool) error {
	if unlock && !n.inLockTable.Load() {
		return nil
	}
	t.locks.mu.Lock()
	defer t.locks.mu.Unlock()
	nl := t.locks.byNode[n]
	if unlock {
		if nl != nil {
			delete(nl.leases, holder)
			t.locks.forgetIdle(n, nl)
		}
		return nil
	}
	n.mu.RLock()
	writers, readers := n.writers, n.opens-n.writers
	n.mu.RUnlock()
	selfWriters, selfReaders := 0, 1
	if holder.writable {
		selfWriters, selfReaders = 1, 0
	}
	if !write && writers > 0 || write && (writers != selfWriters || readers != selfReaders) {
		return unix.EAGAIN
	}
	if nl != nil {
		for h, w := range nl.leases {
			if h != holder && (w || write) {
				return unix.EAGAIN
			}
		}
	}
	t.locks.of(n).leases[holder] = write // a refusal makes no entry
	return nil
}

// Lease returns holder's lease on n: F_RDLCK, F_WRLCK or F_UNLCK.
func (t *Tree) Lease(n *Node, holder *NodeFile) int {
	t.locks.mu.Lock()
	defer t.locks.mu.Unlock()
	nl := t.locks.byNode[n]
	if nl == nil {
		return unix.F_UNLCK
	}
	write, ok := nl.leases[holder]
	switch {
	case !ok:
		return unix.F_UNLCK
	case write:
		return unix.F_WRLCK
	}
	return unix.F_RDLCK
}
