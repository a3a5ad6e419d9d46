package fs

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The tree's file data is kernel memory: it is charged against a limit, as
// tmpfs's size= is (half of RAM by default), so that no user program can
// exhaust the kernel by writing files. Files are not sparse here: a write
// or truncate past the limit fails with ENOSPC where Linux's tmpfs would
// allocate pages lazily.
var (
	dataLimit atomic.Int64 // bytes; 0: unlimited
	dataUsed  atomic.Int64
)

// SetSizeLimit sets the most file data the tree may hold.
func SetSizeLimit(bytes int64) { dataLimit.Store(bytes) }

// Usage returns the bytes of file data held and the limit.
func Usage() (used, limit int64) { return dataUsed.Load(), dataLimit.Load() }

// growthStep bounds how far ahead of its size a growing file allocates.
const growthStep = 4 << 20

// resize sets n's data to size bytes, zero-filling growth, allocating in
// whole pages and charging the allocation. n.mu is held.
func (n *Node) resize(size int64) error {
	if size < 0 {
		return unix.EINVAL
	}
	if size <= int64(cap(n.Data)) && n.charged > 0 {
		old := len(n.Data)
		n.Data = n.Data[:size]
		if size > int64(old) {
			clear(n.Data[old:])
		}
		if size < int64(cap(n.Data))/2 { // give memory back
			return n.reallocate(size, size)
		}
		return nil
	}
	if size <= int64(len(n.Data)) { // shrinking data the image still holds
		n.Data = n.Data[:size:size]
		return nil
	}
	capacity := max(size, min(2*int64(cap(n.Data)), size+growthStep))
	return n.reallocate(size, capacity)
}

// reallocate moves n's data to a new buffer of size bytes and the given
// capacity (rounded up to a page), charging the difference.
func (n *Node) reallocate(size, capacity int64) error {
	capacity = (capacity + 4095) &^ 4095
	mnt := tmpfsOf(n.Dev)
	var mntLimit int64
	if mnt != nil {
		mntLimit = mnt.size.Load()
	}
	if mntLimit > 0 {
		// Room to grow ahead stops at the mount's size.
		room := mntLimit - mnt.used.Load() + n.charged
		capacity = max(min(capacity, room), (size+4095)&^4095)
	}
	delta := capacity - n.charged
	if limit := dataLimit.Load(); limit > 0 && delta > 0 && dataUsed.Load()+delta > limit {
		return unix.ENOSPC
	}
	if mntLimit > 0 && delta > 0 && mnt.used.Load()+delta > mntLimit {
		return unix.ENOSPC
	}
	if mnt != nil {
		mnt.used.Add(delta)
	}
	dataUsed.Add(delta)
	n.charged = capacity
	grown := make([]byte, size, capacity)
	copy(grown, n.Data)
	n.Data = grown
	return nil
}

// uncharge returns n's data to the budget: its last name is gone.
func (n *Node) uncharge() {
	n.mu.Lock()
	if mnt := tmpfsOf(n.Dev); mnt != nil {
		mnt.used.Add(-n.charged)
	}
	dataUsed.Add(-n.charged)
	n.charged = 0
	n.mu.Unlock()
}
