package mm

import "errors"

// Memory locks (mlock(2) and its family). Nothing is ever swapped out
// here, so a lock changes no page's fate: it is the VMA's mark, counted
// against RLIMIT_MEMLOCK by the caller and shown in /proc (VmLck,
// Locked), and locking populates the pages, as Linux faults them in.

// LockedBytes is the size of the locked mappings (Linux's locked_vm).
func (as *AddressSpace) LockedBytes() uintptr {
	n := uintptr(0)
	as.vmas.each(func(v *VMA) bool {
		if v.Locked {
			n += v.End - v.Start
		}
		return true
	})
	return n
}

// LockedIn is how much of [start, end) is locked already.
func (as *AddressSpace) LockedIn(start, end uintptr) uintptr {
	n := uintptr(0)
	as.eachIn(start, end, func(v *VMA) {
		if v.Locked {
			n += min(v.End, end) - max(v.Start, start)
		}
	})
	return n
}

// SetLocked locks or unlocks the page-aligned range [start, end), as
// mlock(2)'s apply_vma_lock_flags: the mapped VMAs up to the first hole
// change, and a hole is ErrNoMemory. Locking populates the pages.
func (as *AddressSpace) SetLocked(start, end uintptr, locked, populate bool) error {
	if end < start || end > MaxUserVA {
		return ErrInvalid
	}
	if start == end {
		return nil
	}
	mapped := start
	for v := as.vmas.find(start); v != nil && mapped < end; v = as.vmas.find(mapped) {
		mapped = v.End
	}
	if mapped == start {
		return ErrNoMemory
	}
	stop := min(mapped, end)
	if as.vmas.count+as.splits(start, stop) > MaxMapCount {
		return ErrNoMemory
	}
	as.splitAt(start)
	as.splitAt(stop)
	for _, v := range as.vmas.cut(start, stop) {
		v.Locked = locked
		as.vmas.insert(v)
		as.mergeAt(v.Start)
	}
	as.mergeAt(stop)
	if locked && populate {
		if err := as.populate(start, stop); err != nil {
			return err
		}
	}
	if stop < end {
		return ErrNoMemory
	}
	return nil
}

// LockAll is mlockall(2): every mapping now (current) and every later
// one (future) locked; all false is munlockall(2), which unlocks every
// mapping. Future alone leaves the mappings as they are.
func (as *AddressSpace) LockAll(current, future, populate bool) error {
	as.lockFuture = future
	if future && !current {
		return nil
	}
	var vmas []VMA
	as.vmas.each(func(v *VMA) bool {
		if v.Locked != current && (v.Shared == nil || !v.Shared.kernelOwned) {
			vmas = append(vmas, *v)
		}
		return true
	})
	for _, v := range vmas {
		if err := as.SetLocked(v.Start, v.End, current, populate); err != nil && !errors.Is(err, ErrNoMemory) {
			return err
		}
	}
	return nil
}

// populate faults in the absent pages of [start, end) that the mapping
// lets the program reach: written for a writable mapping (as Linux's
// populate, so copy-on-write happens now), else read.
func (as *AddressSpace) populate(start, end uintptr) error {
	for va := start; va < end; va += PageSize {
		v := as.vmas.find(va)
		if v == nil || as.pte(va) != nil || v.Perm&(PTERead|PTEWrite|PTEExec) == 0 {
			continue
		}
		access := Read
		if v.Perm&PTEWrite != 0 {
			access = Write
		}
		if err := as.Fault(va, access); errors.Is(err, ErrNoMemory) {
			return err
		}
	}
	return nil
}

// LocksFuture reports mlockall(MCL_FUTURE): new mappings come locked.
func (as *AddressSpace) LocksFuture() bool { return as.lockFuture }

// PopulateRange faults in the pages of [start, end) as locking does
// (MAP_LOCKED, MAP_POPULATE).
func (as *AddressSpace) PopulateRange(start, end uintptr) error { return as.populate(start, end) }

// IsShared reports a MAP_SHARED mapping of the program's (anonymous or
// of a file), not the kernel's pages it maps read-only (the vDSO's).
func (v *VMA) IsShared() bool {
	return v.Shared != nil && !v.Shared.kernelOwned && !v.Shared.hugePrivate()
}
