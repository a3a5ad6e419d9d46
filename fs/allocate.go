package fs

import (
	"math"
	"time"

	"golang.org/x/sys/unix"
)

// fallocate(2) on a file of the tree, as Linux's tmpfs (shmem_fallocate)
// does it: allocation gives the range pages (charged, all or nothing) and
// grows the file unless FALLOC_FL_KEEP_SIZE; FALLOC_FL_PUNCH_HOLE frees
// the range's pages, its partial pages zeroed; any other mode is
// EOPNOTSUPP.

// Modes tmpfs takes.
const (
	FallocKeepSize  = 0x01
	FallocPunchHole = 0x02
)

// Allocate implements fallocate(2) on the file; the caller checked the
// mode, the range and that the description writes.
func (f *NodeFile) Allocate(mode uint32, off, length int64) error {
	n := f.node
	switch {
	case n.Mode.IsDir():
		return unix.EISDIR
	case !n.Mode.IsRegular():
		return unix.ENODEV
	case mode&^(FallocKeepSize|FallocPunchHole) != 0:
		return unix.EOPNOTSUPP
	}
	end := off + length
	n.mu.Lock()
	defer n.mu.Unlock()
	// A memfd's seals: no hole under F_SEAL_WRITE, no growth under
	// F_SEAL_GROW (shmem_fallocate's EPERM).
	if mode&FallocPunchHole != 0 && n.seals&writeSeals != 0 ||
		mode&FallocKeepSize == 0 && end > n.sizeLocked() && n.seals&unix.F_SEAL_GROW != 0 {
		return unix.EPERM
	}
	n.pullMapped()
	if err := n.ownPagesLocked(math.MaxInt64); err != nil {
		return err
	}
	if mode&FallocPunchHole != 0 {
		n.punchLocked(off, min(end, n.written.size))
	} else if err := n.allocateLocked(off, end, mode&FallocKeepSize == 0); err != nil {
		return err
	}
	if n.mapped != nil {
		n.mapped.Push(off, end)
	}
	n.MTime = time.Now()
	n.CTime = n.MTime
	return nil
}

// allocateLocked gives [off, end) pages, charged together (ENOSPC, with
// nothing allocated, past the limits), and the file that size when grow.
// n.mu is held.
func (n *Node) allocateLocked(off, end int64, grow bool) error {
	w := n.written
	first, last := off/pageSize, (end-1)/pageSize
	fresh := last - first + 1 - w.residentIn(first, last)
	if fresh > math.MaxInt64/pageSize {
		return unix.ENOSPC
	}
	if err := n.chargeLocked(fresh * pageSize); err != nil {
		return err
	}
	// Charged: the range is no longer than the pages the file holds.
	for i := first; i <= last; i++ {
		if w.pages[i] == nil {
			w.pages[i] = new(page)
		}
	}
	if grow {
		w.size = max(w.size, end)
	}
	return nil
}

// punchLocked makes [off, end) a hole: whole pages freed, the parts of
// the pages at either edge zeroed; an empty or backwards range (a hole
// that starts past the end of the file) changes nothing. n.mu is held.
func (n *Node) punchLocked(off, end int64) {
	if off >= end {
		return
	}
	w := n.written
	freed := int64(0)
	w.eachResident(off/pageSize, (end-1)/pageSize, func(i int64, pg *page) {
		lo, hi := max(off, i*pageSize), min(end, (i+1)*pageSize)
		if lo == i*pageSize && hi == (i+1)*pageSize {
			delete(w.pages, i)
			freed++
		} else {
			clear(pg[lo-i*pageSize : hi-i*pageSize])
		}
	})
	n.chargeLocked(-freed * pageSize)
}

// eachResident calls fn for each page of first to last (inclusive) that
// holds data, going through the range or through the pages held,
// whichever is shorter: a sparse file's range may span 2^50 pages. fn
// may delete its page.
func (w *filePages) eachResident(first, last int64, fn func(i int64, pg *page)) {
	if last-first < int64(len(w.pages)) {
		for i := first; i <= last; i++ {
			if pg := w.pages[i]; pg != nil {
				fn(i, pg)
			}
		}
		return
	}
	for i, pg := range w.pages {
		if i >= first && i <= last {
			fn(i, pg)
		}
	}
}

// residentIn counts the pages of first to last (inclusive) that hold
// data.
func (w *filePages) residentIn(first, last int64) int64 {
	n := int64(0)
	w.eachResident(first, last, func(int64, *page) { n++ })
	return n
}
