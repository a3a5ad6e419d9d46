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
// suspended, so CLOCK_BOOTTIME is CLOCK_MONOTONIC), or the caller's
// process's or thread's CPU time; EINVAL for any other.
func (t *Task) ClockTime(clock int32) (time.Duration, error) {
	switch clock {
	case unix.CLOCK_REALTIME, unix.CLOCK_REALTIME_COARSE, unix.CLOCK_REALTIME_ALARM, unix.CLOCK_TAI:
		return time.Duration(t.Proc.k.Now().UnixNano()), nil
	case unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_COARSE, unix.CLOCK_MONOTONIC_RAW, unix.CLOCK_BOOTTIME,
		unix.CLOCK_BOOTTIME_ALARM:
		return t.Proc.k.Uptime(), nil
	case unix.CLOCK_PROCESS_CPUTIME_ID:
		u := t.Proc.Usage()
		return u.User + u.System, nil
	case unix.CLOCK_THREAD_CPUTIME_ID:
		u := t.Usage()
		return u.User + u.System, nil
	}
	return 0, unix.EINVAL
}
