package syscall

import (
	"math"
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
	register(sysno.Adjtimex, sysAdjtimex)
	register(sysno.ClockAdjtime, sysClockAdjtime)
	register(sysno.Nanosleep, sysNanosleep)
	register(sysno.ClockNanosleep, sysClockNanosleep)
	register(sysno.Setitimer, sysSetitimer)
	register(sysno.Getitimer, sysGetitimer)
}

// sysClockGettime implements clock_gettime(2).
func sysClockGettime(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.ClockTime(int32(a[0]))
	if err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[1], linux.DurationTimespec(d))
}

// sysClockGetres implements clock_getres(2): every clock the kernel has
// reports 1 ns, as Linux's high-resolution clocks do, but the coarse
// ones a tick.
func sysClockGetres(t *kernel.Task, a Args) (uint64, error) {
	switch a[0] {
	case unix.CLOCK_REALTIME, unix.CLOCK_REALTIME_COARSE, unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_COARSE,
		unix.CLOCK_MONOTONIC_RAW, unix.CLOCK_BOOTTIME, unix.CLOCK_PROCESS_CPUTIME_ID, unix.CLOCK_THREAD_CPUTIME_ID,
		unix.CLOCK_REALTIME_ALARM, unix.CLOCK_BOOTTIME_ALARM, unix.CLOCK_TAI:
	default:
		// A process's or thread's CPU clock, if it names one.
		if _, err := t.ClockTime(int32(a[0])); int32(a[0]) >= 0 || err != nil {
			return 0, unix.EINVAL
		}
	}
	if a[1] == 0 {
		return 0, nil
	}
	res := time.Nanosecond
	if a[0] == unix.CLOCK_REALTIME_COARSE || a[0] == unix.CLOCK_MONOTONIC_COARSE {
		// Linux's LOW_RES_NSEC, a tick: 4 ms at Debian riscv64's HZ=250.
		// Programs (LTP's itimer tests) take it for the tick's length.
		res = 4 * time.Millisecond
	}
	return 0, copyOutStruct(t, a[1], linux.DurationTimespec(res))
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

// sysClockNanosleep implements clock_nanosleep(2), relative or absolute
// (TIMER_ABSTIME), on the clocks Linux sleeps on: the wall and monotonic
// ones, the alarm clocks with CAP_WAKE_ALARM, and the process's CPU time;
// EOPNOTSUPP on the others it knows (the thread's CPU time: a thread
// cannot sleep until it has run). Interrupted, a relative sleep stores
// the time left in rem.
func sysClockNanosleep(t *kernel.Task, a Args) (uint64, error) {
	const timerAbstime = 1
	clock := int32(a[0])
	switch clock {
	case unix.CLOCK_REALTIME, unix.CLOCK_MONOTONIC, unix.CLOCK_BOOTTIME, unix.CLOCK_TAI, unix.CLOCK_PROCESS_CPUTIME_ID:
	case unix.CLOCK_REALTIME_ALARM, unix.CLOCK_BOOTTIME_ALARM:
		if a[1]&^timerAbstime != 0 {
			return 0, unix.EINVAL
		}
		if t.Proc.Caps.Effective&(1<<kernel.CapWakeAlarm) == 0 {
			return 0, unix.EPERM
		}
	case unix.CLOCK_THREAD_CPUTIME_ID, unix.CLOCK_MONOTONIC_RAW, unix.CLOCK_REALTIME_COARSE, unix.CLOCK_MONOTONIC_COARSE:
		return 0, unix.EOPNOTSUPP
	default:
		return 0, unix.EINVAL
	}
	if a[1]&^timerAbstime != 0 {
		return 0, unix.EINVAL
	}
	d, err := copyInTimespec(t, a[2])
	if err != nil {
		return 0, err
	}
	abs := a[1]&timerAbstime != 0
	if clock == unix.CLOCK_PROCESS_CPUTIME_ID {
		now, _ := t.ClockTime(clock)
		if !abs {
			d += now
		}
		return sleepOnCPU(t, d, abs, a[3])
	}
	deadline := time.Now().Add(d)
	if abs {
		now, _ := t.ClockTime(clock)
		deadline = time.Now().Add(d - now)
		if err := t.Block(nil, deadline); err != unix.EINTR {
			return 0, nil
		}
		return 0, unix.EINTR
	}
	return sleepUntil(t, deadline, a[3])
}

// sleepOnCPU sleeps until the process's CPU time (its other threads')
// reaches target, looking every 4 ms as the CPU-time timers do;
// interrupted, a relative sleep stores the CPU time left in rem and
// continues from where it was through restart_syscall.
func sleepOnCPU(t *kernel.Task, target time.Duration, abs bool, rem uint64) (uint64, error) {
	for {
		now, _ := t.ClockTime(unix.CLOCK_PROCESS_CPUTIME_ID)
		if now >= target {
			return 0, nil
		}
		if err := t.Block(nil, time.Now().Add(4*time.Millisecond)); err == unix.EINTR {
			if abs {
				return 0, unix.EINTR
			}
			if rem != 0 {
				if err := copyOutStruct(t, rem, linux.DurationTimespec(target-now)); err != nil {
					return 0, err
				}
			}
			t.SetRestartBlock(func(t *kernel.Task) (uint64, error) { return sleepOnCPU(t, target, false, rem) })
			return 0, unix.EINTR
		}
	}
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

// adjtimex is do_adjtimex: timekeeping_validate_timex's checks (EPERM
// without CAP_SYS_TIME for any change, EINVAL for a tick more than 10%
// off or an adjtime(3) call without its single-shot bit), then the clock
// model; the struct is written back whatever the result code.
func adjtimex(t *kernel.Task, addr uint64) (uint64, error) {
	var tx linux.Timex
	if err := copyInStruct(t, addr, &tx); err != nil {
		return 0, err
	}
	privileged := t.Proc.Caps.Effective&(1<<capSysTime) != 0
	m := tx.Modes
	if m&kernel.AdjAdjtime != 0 {
		if m&kernel.AdjOffsetSingle == 0 {
			return 0, unix.EINVAL
		}
		if m&kernel.AdjOffsetReadonly == 0 && !privileged {
			return 0, unix.EPERM
		}
	} else {
		if m != 0 && !privileged {
			return 0, unix.EPERM
		}
		if m&unix.ADJ_TICK != 0 && (tx.Tick < 900000/100 || tx.Tick > 1100000/100) {
			return 0, unix.EINVAL
		}
	}
	if m&unix.ADJ_SETOFFSET != 0 {
		if !privileged {
			return 0, unix.EPERM
		}
		limit := int64(1e6)
		if m&unix.ADJ_NANO != 0 {
			limit = 1e9
		}
		if tx.Time.Usec < 0 || tx.Time.Usec >= limit {
			return 0, unix.EINVAL
		}
	}
	if m&unix.ADJ_FREQUENCY != 0 && (tx.Freq < math.MinInt64/ppmScale || tx.Freq > math.MaxInt64/ppmScale) {
		return 0, unix.EINVAL
	}
	if m&unix.ADJ_SETOFFSET != 0 {
		d := time.Duration(tx.Time.Sec)*time.Second + time.Duration(tx.Time.Usec)
		if m&unix.ADJ_NANO == 0 {
			d = time.Duration(tx.Time.Sec)*time.Second + time.Duration(tx.Time.Usec)*time.Microsecond
		}
		t.Kernel().SetRealtime(t.Kernel().Now().Add(d))
	}
	n := kernel.NTPTimex{Modes: m, Offset: tx.Offset, Freq: tx.Freq, MaxError: tx.Maxerror, EstError: tx.Esterror,
		Status: tx.Status, Constant: tx.Constant, Tick: tx.Tick}
	state := t.Kernel().NTP().Adjust(&n)
	now := t.Kernel().Now()
	out := linux.Timex{Modes: tx.Modes, Offset: n.Offset, Freq: n.Freq, Maxerror: n.MaxError, Esterror: n.EstError,
		Status: n.Status, Constant: n.Constant, Precision: n.Precision, Tolerance: n.Tolerance,
		Time: linux.Timeval{Sec: now.Unix(), Usec: int64(now.Nanosecond() / 1000)}, Tick: n.Tick, Tai: n.Tai}
	if n.Status&unix.STA_NANO != 0 {
		out.Time.Usec = int64(now.Nanosecond())
	}
	if err := copyOutStruct(t, addr, out); err != nil {
		return 0, err
	}
	return uint64(state), nil
}

// ppmScale is Linux's PPM_SCALE: a ppm in the clock's 2^-32 ns units.
const ppmScale = 1000 << 16

// sysAdjtimex implements adjtimex(2).
func sysAdjtimex(t *kernel.Task, a Args) (uint64, error) { return adjtimex(t, a[0]) }

// sysClockAdjtime implements clock_adjtime(2): CLOCK_REALTIME is the one
// clock that adjusts; another known clock is EOPNOTSUPP.
func sysClockAdjtime(t *kernel.Task, a Args) (uint64, error) {
	switch a[0] {
	case unix.CLOCK_REALTIME:
		return adjtimex(t, a[1])
	case unix.CLOCK_MONOTONIC, unix.CLOCK_PROCESS_CPUTIME_ID, unix.CLOCK_THREAD_CPUTIME_ID, unix.CLOCK_MONOTONIC_RAW,
		unix.CLOCK_REALTIME_COARSE, unix.CLOCK_MONOTONIC_COARSE, unix.CLOCK_BOOTTIME:
		return 0, unix.EOPNOTSUPP
	}
	return 0, unix.EINVAL
}
