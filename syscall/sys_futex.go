package syscall

import (
	"encoding/binary"
	"math"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Futex, sysFutex)
	register(sysno.FutexWaitv, sysFutexWaitv)
	register(sysno.SetRobustList, sysSetRobustList)
	register(sysno.GetRobustList, sysGetRobustList)
}

// futex(2) operations and flags (linux/futex.h).
const (
	futexWait          = 0
	futexWake          = 1
	futexRequeue       = 3
	futexCmpRequeue    = 4
	futexWakeOp        = 5
	futexWaitBitset    = 9
	futexWakeBitset    = 10
	futexWaitRequeuePI = 11
	futexLockPI2       = 13
	futexPrivateFlag   = 128
	futexClockRealtime = 256
	futexBitsetAny     = 0xffffffff
)

// sysFutex implements futex(2): WAIT, WAKE, their BITSET forms, REQUEUE,
// CMP_REQUEUE and WAKE_OP, private (keyed by address space) or not (in
// MAP_SHARED memory, keyed by that memory: across processes), with
// timeouts on CLOCK_MONOTONIC or CLOCK_REALTIME. The
// priority-inheritance operations are ENOSYS.
func sysFutex(t *kernel.Task, a Args) (uint64, error) {
	addr, op, val := uintptr(a[0]), a[1], uint32(a[2])
	cmd := op &^ (futexPrivateFlag | futexClockRealtime)
	realtime := op&futexClockRealtime != 0
	shared := op&futexPrivateFlag == 0
	// As Linux 6.x: FUTEX_CLOCK_REALTIME only with the absolute waits (not
	// FUTEX_WAIT, whose timeout is relative).
	if realtime && cmd != futexWaitBitset && cmd != futexWaitRequeuePI && cmd != futexLockPI2 {
		return 0, unix.ENOSYS
	}
	// A shared futex is keyed by its page, so Linux looks the page up:
	// EFAULT when nothing is mapped there. A private one is keyed by its
	// address alone.
	if shared {
		if err := probeFutex(t, addr); err != nil {
			return 0, err
		}
		if cmd == futexRequeue || cmd == futexCmpRequeue || cmd == futexWakeOp {
			if err := probeFutex(t, uintptr(a[4])); err != nil {
				return 0, err
			}
		}
	}
	// The fourth argument is a timeout for the waits and a count for the
	// others (val2).
	val2 := int(int32(uint32(a[3])))
	switch cmd {
	case futexWait, futexWaitBitset:
		bitset := uint32(futexBitsetAny)
		if cmd == futexWaitBitset {
			if bitset = uint32(a[5]); bitset == 0 {
				return 0, unix.EINVAL
			}
		}
		var deadline time.Time
		if a[3] != 0 {
			var err error
			if deadline, err = futexDeadline(t, a[3], cmd == futexWaitBitset, realtime); err != nil {
				return 0, err
			}
		}
		return 0, t.FutexWait(addr, shared, val, bitset, deadline)
	case futexWake, futexWakeBitset:
		bitset := uint32(futexBitsetAny)
		if cmd == futexWakeBitset {
			if bitset = uint32(a[5]); bitset == 0 {
				return 0, unix.EINVAL
			}
		}
		n, err := t.FutexWake(addr, shared, int(int32(val)), bitset)
		return uint64(n), err
	case futexRequeue, futexCmpRequeue:
		if int32(val) < 0 || val2 < 0 {
			return 0, unix.EINVAL
		}
		var cmp *uint32
		if cmd == futexCmpRequeue {
			v := uint32(a[5])
			cmp = &v
		}
		n, err := t.FutexRequeue(addr, uintptr(a[4]), shared, int(val), val2, cmp)
		return uint64(n), err
	case futexWakeOp:
		n, err := t.FutexWakeOp(addr, uintptr(a[4]), shared, int(int32(val)), val2, uint32(a[5]))
		return uint64(n), err
	}
	return 0, unix.ENOSYS
}

// futexDeadline reads a wait's struct timespec: a deadline on CLOCK_REALTIME
// or CLOCK_MONOTONIC when absolute (the BITSET form), else an interval
// from now.
func futexDeadline(t *kernel.Task, addr uint64, absolute, realtime bool) (time.Time, error) {
	var ts linux.Timespec
	if err := copyInStruct(t, addr, &ts); err != nil {
		return time.Time{}, err
	}
	sec, nsec := ts.Sec, ts.Nsec
	if sec < 0 || nsec < 0 || nsec >= int64(time.Second) {
		return time.Time{}, unix.EINVAL
	}
	if absolute {
		base := t.Kernel().Uptime() + t.MonotonicOffset()
		if realtime {
			base = time.Duration(t.Kernel().Now().UnixNano()) // set by settimeofday too
		}
		sec, nsec = sec-int64(base/time.Second), nsec-int64(base%time.Second)
	}
	const forever = 100 * 365 * 24 * 3600 // seconds; longer would overflow a Duration
	return time.Now().Add(time.Duration(min(sec, forever))*time.Second + time.Duration(nsec)), nil
}

// futex_waitv(2)'s limits and flags (linux/futex.h).
const (
	futexWaitvMax   = 128
	futex2SizeU32   = 0x02
	futex2SizeMask  = 0x03
	futex2Private   = 128
	futexWaitvBytes = 24 // struct futex_waitv: val, uaddr, flags, __reserved
)

// sysFutexWaitv implements futex_waitv(2): a wait on up to 128 32-bit
// words at once until one is woken; it returns that word's index. The
// timeout is absolute on CLOCK_MONOTONIC or CLOCK_REALTIME.
func sysFutexWaitv(t *kernel.Task, a Args) (uint64, error) {
	addr, nr, flags, timeout, clock := a[0], a[1], a[2], a[3], int32(a[4])
	if flags != 0 || nr == 0 || nr > futexWaitvMax || addr == 0 {
		return 0, unix.EINVAL
	}
	var deadline time.Time
	if timeout != 0 {
		if clock != unix.CLOCK_MONOTONIC && clock != unix.CLOCK_REALTIME {
			return 0, unix.EINVAL
		}
		var err error
		if deadline, err = futexDeadline(t, timeout, true, clock == unix.CLOCK_REALTIME); err != nil {
			return 0, err
		}
	}
	raw := make([]byte, nr*futexWaitvBytes)
	if err := copyIn(t, addr, raw); err != nil {
		return 0, err
	}
	words := make([]kernel.FutexWord, nr)
	for i := range words {
		e := raw[i*futexWaitvBytes:]
		val, uaddr := binary.LittleEndian.Uint64(e), binary.LittleEndian.Uint64(e[8:])
		wflags, reserved := binary.LittleEndian.Uint32(e[16:]), binary.LittleEndian.Uint32(e[20:])
		if wflags&^(futex2SizeMask|futex2Private) != 0 || reserved != 0 ||
			wflags&futex2SizeMask != futex2SizeU32 || val > math.MaxUint32 {
			return 0, unix.EINVAL // only 32-bit words, as Linux 6.12
		}
		words[i] = kernel.FutexWord{Addr: uintptr(uaddr), Val: uint32(val), Shared: wflags&futex2Private == 0}
		if words[i].Shared {
			if err := probeFutex(t, uintptr(uaddr)); err != nil {
				return 0, err
			}
		}
	}
	i, err := t.FutexWaitv(words, deadline)
	return uint64(i), err
}

// probeFutex fails with EFAULT when nothing is mapped at an aligned futex
// address (a misaligned one is EINVAL later).
func probeFutex(t *kernel.Task, addr uintptr) error {
	if addr%4 != 0 {
		return nil
	}
	return copyIn(t, uint64(addr), make([]byte, 4))
}

// robustListHeadSize is sizeof(struct robust_list_head).
const robustListHeadSize = 24

// sysSetRobustList implements set_robust_list(2); the list is walked when
// the thread exits.
func sysSetRobustList(t *kernel.Task, a Args) (uint64, error) {
	if a[1] != robustListHeadSize {
		return 0, unix.EINVAL
	}
	t.RobustList = uintptr(a[0])
	return 0, nil
}

// sysGetRobustList implements get_robust_list(2) (tid 0: the caller).
func sysGetRobustList(t *kernel.Task, a Args) (uint64, error) {
	target := t
	if tid := int(int32(a[0])); tid != 0 {
		if target = t.FindTask(tid); target == nil {
			return 0, unix.ESRCH
		}
		if !t.MayPtrace(target.Proc) { // Linux's PTRACE_MODE_READ_REALCREDS
			return 0, unix.EPERM
		}
	}
	if err := copyOutStruct(t, a[1], uint64(target.RobustList)); err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[2], uint64(robustListHeadSize))
}
