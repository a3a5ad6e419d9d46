package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.ClockGettime, sysClockGettime)
	register(sysno.ClockGetres, sysClockGetres)
	register(sysno.Gettimeofday, sysGettimeofday)
	register(sysno.ClockSettime, sysClockSettime)
	register(sysno.Settimeofday, sysSettimeofday)
	register(sysno.Nanosleep, sysNanosleep)
	register(sysno.ClockNanosleep, sysClockNanosleep)
	register(sysno.Setitimer, sysSetitimer)
	register(sysno.Getitimer, sysGetitimer)
}

// sysClockGettime implements clock_gettime(2).
func sysClockGettime(t *kernel.Task, a Args) (uint64, error) {
	var d time.Duration
	switch a[0] {
	case unix.CLOCK_REALTIME, unix.CLOCK_REALTIME_COARSE:
		d = time.Duration(t.Kernel().Now().UnixNano())
	case unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_COARSE, unix.CLOCK_MONOTONIC_RAW, unix.CLOCK_BOOTTIME:
		d = t.Kernel().Uptime()
	case unix.CLOCK_PROCESS_CPUTIME_ID:
		u := t.Proc.Usage()
		d = u.User + u.System
	case unix.CLOCK_THREAD_CPUTIME_ID:
		u := t.Usage()
		d = u.User + u.System
	default:
		return 0, unix.EINVAL
	}
	return 0, copyOutStruct(t, a[1], linux.DurationTimespec(d))
}

// sysClockGetres implements clock_getres(2): every clock the kernel has
// reports 1 ns, as Linux's high-resolution clocks do.
func sysClockGetres(t *kernel.Task, a Args) (uint64, error) {
	switch a[0] {
	case unix.CLOCK_REALTIME, unix.CLOCK_REALTIME_COARSE, unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_COARSE,
		unix.CLOCK_MONOTONIC_RAW, unix.CLOCK_BOOTTIME, unix.CLOCK_PROCESS_CPUTIME_ID, unix.CLOCK_THREAD_CPUTIME_ID:
	default:
		return 0, unix.EINVAL
	}
	if a[1] == 0 {
		return 0, nil
	}
	return 0, copyOutStruct(t, a[1], linux.DurationTimespec(time.Nanosecond))
}

// sysGettimeofday implements gettimeofday(2), with settimeofday's time
// zone (the vDSO's __vdso_gettimeofday answers the same).
func sysGettimeofday(t *kernel.Task, a Args) (uint64, error) {
	if a[0] != 0 {
		now := t.Kernel().Now()
		if err := copyOutStruct(t, a[0], linux.Timeval{Sec: now.Unix(), Usec: int64(now.Nanosecond() / 1000)}); err != nil {
			return 0, err
		}
	}
	if a[1] != 0 {
		west, dst := t.Kernel().TimeZone()
		return 0, copyOutStruct(t, a[1], [2]int32{west, dst})
	}
	return 0, nil
}

// settodSecMax is Linux's TIME_SETTOD_SEC_MAX: KTIME_SEC_MAX less 30
// years of uptime.
const settodSecMax = (1<<63-1)/1_000_000_000 - 30*365*86400

// setRealtime is do_sys_settimeofday64: EINVAL for a time out of range,
// then EPERM without CAP_SYS_TIME.
func setRealtime(t *kernel.Task, ts *linux.Timespec, tz *[2]int32) error {
	if ts != nil && (ts.Sec < 0 || ts.Nsec < 0 || ts.Nsec >= 1e9 || ts.Sec >= settodSecMax) {
		return unix.EINVAL
	}
	if t.Proc.Caps.Effective&(1<<capSysTime) == 0 {
		return unix.EPERM
	}
	if tz != nil {
		if tz[0] > 15*60 || tz[0] < -15*60 {
			return unix.EINVAL
		}
		t.Kernel().SetTimeZone(tz[0], tz[1])
	}
	if ts != nil {
		t.Kernel().SetRealtime(time.Unix(ts.Sec, ts.Nsec))
	}
	return nil
}

// capSysTime is CAP_SYS_TIME.
const capSysTime = 25

// sysClockSettime implements clock_settime(2): CLOCK_REALTIME is the one
// clock that may be set.
func sysClockSettime(t *kernel.Task, a Args) (uint64, error) {
	if a[0] != unix.CLOCK_REALTIME {
		return 0, unix.EINVAL
	}
	var ts linux.Timespec
	if err := copyInStruct(t, a[1], &ts); err != nil {
		return 0, err
	}
	return 0, setRealtime(t, &ts, nil)
}

// sysSettimeofday implements settimeofday(2).
func sysSettimeofday(t *kernel.Task, a Args) (uint64, error) {
	var ts *linux.Timespec
	if a[0] != 0 {
		var tv linux.Timeval
		if err := copyInStruct(t, a[0], &tv); err != nil {
			return 0, err
		}
		if tv.Usec < 0 || tv.Usec > 1e6 {
			return 0, unix.EINVAL
		}
		ts = &linux.Timespec{Sec: tv.Sec, Nsec: tv.Usec * 1000}
	}
	var tz *[2]int32
	if a[1] != 0 {
		tz = new([2]int32)
		if err := copyInStruct(t, a[1], tz); err != nil {
			return 0, err
		}
	}
	return 0, setRealtime(t, ts, tz)
}

// sysNanosleep implements nanosleep(2).
func sysNanosleep(t *kernel.Task, a Args) (uint64, error) {
	return sysClockNanosleep(t, Args{unix.CLOCK_MONOTONIC, 0, a[0], a[1]})
}

// sysClockNanosleep implements clock_nanosleep(2) on the real-time and
// monotonic clocks, relative or absolute (TIMER_ABSTIME); interrupted, a
// relative sleep stores the time left in rem.
func sysClockNanosleep(t *kernel.Task, a Args) (uint64, error) {
	const timerAbstime = 1
	if a[1]&^timerAbstime != 0 {
		return 0, unix.EINVAL
	}
	d, err := copyInTimespec(t, a[2])
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(d)
	if a[1]&timerAbstime != 0 {
		switch a[0] {
		case unix.CLOCK_REALTIME:
			deadline = time.Now().Add(d - time.Duration(t.Kernel().Now().UnixNano()))
		case unix.CLOCK_MONOTONIC, unix.CLOCK_BOOTTIME:
			deadline = time.Now().Add(d - t.Kernel().Uptime())
		default:
			return 0, unix.EINVAL
		}
	} else if a[0] != unix.CLOCK_REALTIME && a[0] != unix.CLOCK_MONOTONIC && a[0] != unix.CLOCK_BOOTTIME {
		return 0, unix.EINVAL
	}
	if a[1]&timerAbstime != 0 {
		if err := t.Block(nil, deadline); err != unix.EINTR {
			return 0, nil
		}
		return 0, unix.EINTR
	}
	return sleepUntil(t, deadline, a[3])
}

// sleepUntil sleeps until deadline; interrupted, it stores the time left
// in rem and leaves itself as the continuation that restart_syscall runs
// when no handler does.
func sleepUntil(t *kernel.Task, deadline time.Time, rem uint64) (uint64, error) {
	if err := t.Block(nil, deadline); err != unix.EINTR {
		return 0, nil
	}
	if rem != 0 {
		if err := copyOutStruct(t, rem, linux.DurationTimespec(max(time.Until(deadline), 0))); err != nil {
			return 0, err
		}
	}
	t.SetRestartBlock(func(t *kernel.Task) (uint64, error) { return sleepUntil(t, deadline, rem) })
	return 0, unix.EINTR
}

// encodeItimerval rounds up to microseconds, as Linux reports a timer.
func encodeItimerval(value, interval time.Duration) linux.Itimerval {
	us := func(d time.Duration) linux.Timeval {
		return linux.DurationTimeval((d + time.Microsecond - 1) / time.Microsecond * time.Microsecond)
	}
	return linux.Itimerval{Interval: us(interval), Value: us(value)}
}

// sysSetitimer implements setitimer(2): ITIMER_REAL on the wall clock,
// ITIMER_VIRTUAL and ITIMER_PROF on the process's CPU time.
func sysSetitimer(t *kernel.Task, a Args) (uint64, error) {
	which := int(int32(a[0]))
	if which != unix.ITIMER_REAL && which != unix.ITIMER_VIRTUAL && which != unix.ITIMER_PROF {
		return 0, unix.EINVAL
	}
	var value, interval time.Duration
	if a[1] != 0 {
		var it linux.Itimerval
		if err := copyInStruct(t, a[1], &it); err != nil {
			return 0, err
		}
		for _, tv := range []linux.Timeval{it.Interval, it.Value} {
			if tv.Sec < 0 || tv.Usec < 0 || tv.Usec >= 1e6 {
				return 0, unix.EINVAL
			}
		}
		interval, value = it.Interval.Duration(), it.Value.Duration()
	}
	var oldValue, oldInterval time.Duration
	if which == unix.ITIMER_REAL {
		oldValue, oldInterval = t.Proc.SetRealTimer(value, interval)
	} else {
		oldValue, oldInterval = t.Proc.SetCPUTimer(which, value, interval)
	}
	if a[2] != 0 {
		return 0, copyOutStruct(t, a[2], encodeItimerval(oldValue, oldInterval))
	}
	return 0, nil
}

// sysGetitimer implements getitimer(2).
func sysGetitimer(t *kernel.Task, a Args) (uint64, error) {
	var value, interval time.Duration
	switch which := int(int32(a[0])); which {
	case unix.ITIMER_REAL:
		value, interval = t.Proc.RealTimer()
	case unix.ITIMER_VIRTUAL, unix.ITIMER_PROF:
		value, interval = t.Proc.CPUTimer(which)
	default:
		return 0, unix.EINVAL
	}
	return 0, copyOutStruct(t, a[1], encodeItimerval(value, interval))
}
