package kernel

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The wall clock user programs see: the machine's (the Go runtime's
// time.Now, from the RTC at boot) moved by what clock_settime and
// settimeofday set, here and in the vDSO's data page alike. The kernel's
// own timers keep the monotonic clock and are not moved.
type wallClock struct {
	mu     sync.Mutex
	adjust time.Duration // added to time.Now
	// minutesWest and dstTime are settimeofday's time zone, which
	// gettimeofday gives back.
	minutesWest, dstTime int32
	ntp                  *NTP // ntp.go, made at first use
}

// Now is CLOCK_REALTIME.
func (k *Kernel) Now() time.Time {
	k.wall.mu.Lock()
	defer k.wall.mu.Unlock()
	return time.Now().Add(k.wall.adjust)
}

// SetRealtime sets CLOCK_REALTIME to now.
func (k *Kernel) SetRealtime(now time.Time) {
	k.wall.mu.Lock()
	defer k.wall.mu.Unlock()
	delta := now.Sub(time.Now().Add(k.wall.adjust))
	k.wall.adjust += delta
	k.vdso.AdjustRealtime(int64(delta))
}

// TimeZone returns settimeofday's time zone.
func (k *Kernel) TimeZone() (minutesWest, dstTime int32) {
	k.wall.mu.Lock()
	defer k.wall.mu.Unlock()
	return k.wall.minutesWest, k.wall.dstTime
}

// SetTimeZone records settimeofday's time zone.
func (k *Kernel) SetTimeZone(minutesWest, dstTime int32) {
	k.wall.mu.Lock()
	k.wall.minutesWest, k.wall.dstTime = minutesWest, dstTime
	k.wall.mu.Unlock()
}

// ClockTime reads a clock as clock_gettime(2) does: the wall clock
// (CLOCK_REALTIME, its coarse and alarm forms, and CLOCK_TAI, which
// counts no leap seconds here: the TAI offset is 0, as Linux's until
// adjtimex sets one), the monotonic clocks (the machine is never
// suspended, so CLOCK_BOOTTIME is CLOCK_MONOTONIC but for a time
// namespace's offsets, timens.go), or the caller's
// process's or thread's CPU time; EINVAL for any other.
func (t *Task) ClockTime(clock int32) (time.Duration, error) {
	switch clock {
	case unix.CLOCK_REALTIME, unix.CLOCK_REALTIME_COARSE, unix.CLOCK_REALTIME_ALARM, unix.CLOCK_TAI:
		return time.Duration(t.Proc.k.Now().UnixNano()), nil
	case unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_COARSE, unix.CLOCK_MONOTONIC_RAW:
		return t.Proc.k.Uptime() + t.MonotonicOffset(), nil
	case unix.CLOCK_BOOTTIME, unix.CLOCK_BOOTTIME_ALARM:
		return t.Proc.k.Uptime() + t.BoottimeOffset(), nil
	case unix.CLOCK_PROCESS_CPUTIME_ID:
		u := t.Proc.Usage()
		return u.User + u.System, nil
	case unix.CLOCK_THREAD_CPUTIME_ID:
		u := t.Usage()
		return u.User + u.System, nil
	}
	if clock < 0 {
		return t.cpuClockTime(clock)
	}
	return 0, unix.EINVAL
}

// The fields of a CPU clock's id (clock_getcpuclockid(3),
// pthread_getcpuclockid(3)): ^pid << 3 | perThread | its kind.
const (
	cpuClockProf      = 0 // user and system time
	cpuClockVirt      = 1 // user time
	cpuClockSched     = 2 // run time, here user and system time
	cpuClockKindMask  = 3
	cpuClockPerThread = 4
)

// cpuClockTime reads the CPU clock of another process, or of a thread of
// t's own process (Linux's posix_cpu_clock_get); EINVAL for one that does
// not exist.
func (t *Task) cpuClockTime(clock int32) (time.Duration, error) {
	kind := clock & cpuClockKindMask
	id := int(^(clock >> 3))
	if kind > cpuClockSched {
		return 0, unix.EINVAL
	}
	var u Usage
	switch {
	case clock&cpuClockPerThread != 0:
		o := t
		if id != 0 {
			if o = t.FindTask(id); o == nil || o.Proc != t.Proc {
				return 0, unix.EINVAL
			}
		}
		u = o.Usage()
	default:
		p := t.Proc
		if id != 0 {
			if p = t.FindProcess(id); p == nil {
				return 0, unix.EINVAL
			}
		}
		u = p.Usage()
	}
	if kind == cpuClockVirt {
		return u.User, nil
	}
	return u.User + u.System, nil
}
