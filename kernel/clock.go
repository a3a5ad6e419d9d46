package kernel

import (
	"sync"
	"time"
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
