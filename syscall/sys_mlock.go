package syscall

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

// Memory locks: mm marks the mappings (mm/mlock.go); here they are
// counted against RLIMIT_MEMLOCK as Linux counts them, unless the caller
// has CAP_IPC_LOCK.

func init() {
	register(sysno.Mlock, func(t *kernel.Task, a Args) (uint64, error) { return 0, mlock(t, a[0], a[1], true, true) })
	register(sysno.Mlock2, sysMlock2)
	register(sysno.Munlock, func(t *kernel.Task, a Args) (uint64, error) { return 0, mlock(t, a[0], a[1], false, false) })
	register(sysno.Mlockall, sysMlockall)
	register(sysno.Munlockall, sysMunlockall)
}

// capIPCLock is CAP_IPC_LOCK.
const capIPCLock = 14

// mlockExempt reports CAP_IPC_LOCK in the effective set.
func mlockExempt(t *kernel.Task) bool { return t.Proc.Caps.Effective&(1<<capIPCLock) != 0 }

// memlockLimit is RLIMIT_MEMLOCK in bytes; EPERM when it is 0 and the
// caller may not lock anyway (can_do_mlock).
func memlockLimit(t *kernel.Task) (uint64, error) {
	limit := t.Proc.Limit(unix.RLIMIT_MEMLOCK).Cur
	if limit == 0 && !mlockExempt(t) {
		return 0, unix.EPERM
	}
	return limit &^ (mm.PageSize - 1), nil
}

// mlock is mlock(2), mlock2(2) (lock; populate unless MLOCK_ONFAULT) and
// munlock(2): the range rounded out to pages; locking more than
// RLIMIT_MEMLOCK allows, counting what is locked already once, is ENOMEM.
func mlock(t *kernel.Task, addr, length uint64, lock, populate bool) error {
	limit := uint64(0)
	if lock {
		var err error
		if limit, err = memlockLimit(t); err != nil {
			return err
		}
	}
	// Linux's arithmetic, wrapping: a length that rounds past 2^64 is 0.
	start := addr &^ (mm.PageSize - 1)
	end := start + (length+addr&(mm.PageSize-1)+mm.PageSize-1)&^(mm.PageSize-1)
	if end < start {
		return unix.EINVAL
	}
	p := t.Proc
	p.Lock()
	defer p.Unlock()
	if lock && !mlockExempt(t) {
		as := p.AS
		locked := uint64(as.LockedBytes()) + (end - start)
		if locked > limit {
			locked -= uint64(as.LockedIn(uintptr(start), uintptr(end)))
		}
		if locked > limit {
			return unix.ENOMEM
		}
	}
	return lockError(p.AS.SetLocked(uintptr(start), uintptr(end), lock, populate))
}

// lockError is Linux's errno of a lock change: ENOMEM for a hole or too
// many mappings, EAGAIN for pages that could not be populated.
func lockError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mm.ErrInvalid):
		return unix.EINVAL
	case errors.Is(err, mm.ErrNoMemory):
		return unix.ENOMEM
	}
	return unix.EAGAIN
}

// sysMlock2 implements mlock2(2): MLOCK_ONFAULT is the one flag.
func sysMlock2(t *kernel.Task, a Args) (uint64, error) {
	if a[2]&^unix.MLOCK_ONFAULT != 0 {
		return 0, unix.EINVAL
	}
	return 0, mlock(t, a[0], a[1], true, a[2]&unix.MLOCK_ONFAULT == 0)
}

// sysMlockall implements mlockall(2): MCL_CURRENT needs the whole
// address space within RLIMIT_MEMLOCK (ENOMEM); MCL_FUTURE locks every
// later mapping; MCL_ONFAULT alone is EINVAL.
func sysMlockall(t *kernel.Task, a Args) (uint64, error) {
	flags := a[0]
	if flags == 0 || flags&^(unix.MCL_CURRENT|unix.MCL_FUTURE|unix.MCL_ONFAULT) != 0 || flags == unix.MCL_ONFAULT {
		return 0, unix.EINVAL
	}
	limit, err := memlockLimit(t)
	if err != nil {
		return 0, err
	}
	p := t.Proc
	p.Lock()
	defer p.Unlock()
	current := flags&unix.MCL_CURRENT != 0
	if current && !mlockExempt(t) {
		size := uint64(0)
		for _, v := range p.AS.VMAs() {
			size += uint64(v.End - v.Start)
		}
		if size > limit {
			return 0, unix.ENOMEM
		}
	}
	return 0, lockError(p.AS.LockAll(current, flags&unix.MCL_FUTURE != 0, flags&unix.MCL_ONFAULT == 0))
}

// sysMunlockall implements munlockall(2).
func sysMunlockall(t *kernel.Task, a Args) (uint64, error) {
	p := t.Proc
	p.Lock()
	defer p.Unlock()
	return 0, lockError(p.AS.LockAll(false, false, false))
}

// mapLockCheck is mmap's check of a mapping that comes locked
// (MAP_LOCKED, or after mlockall(MCL_FUTURE)): EPERM when the caller may
// not lock, EAGAIN past RLIMIT_MEMLOCK (mlock_future_ok). The caller
// holds the process's lock.
func mapLockCheck(t *kernel.Task, explicit bool, size uint64) error {
	if !explicit && !t.Proc.AS.LocksFuture() || mlockExempt(t) {
		return nil
	}
	limit := t.Proc.Limit(unix.RLIMIT_MEMLOCK).Cur
	if explicit && limit == 0 {
		return unix.EPERM
	}
	if uint64(t.Proc.AS.LockedBytes())+size > limit {
		return unix.EAGAIN
	}
	return nil
}
