package kernel

import (
	"sync"

	"golang.org/x/sys/unix"
)

// The NTP clock model adjtimex(2) reads and sets. The kernel's clock is
// not disciplined: the values are kept and read back (offset, frequency,
// error estimates, status, time constant, tick), with Linux's starting
// values, ranges and state codes, so that time daemons and LTP see a
// clock that is not synchronized (TIME_ERROR until STA_UNSYNC is
// cleared).
type NTP struct {
	mu                 sync.Mutex
	offset             int64 // ns
	freq               int64 // scaled ppm (2^-16), as timex.freq
	maxError, estError int64 // us
	status             int32
	constant           int64
	tick               int64 // us per clock tick (USER_HZ 100)
	adjust             int64 // adjtime(3)'s pending offset, us
	tai                int32
}

// Linux's NTP constants.
const (
	ntpPhaseLimit = 16000000  // NTP_PHASE_LIMIT, us
	ntpMaxTC      = 10        // MAXTC
	ntpMaxFreq    = 500 << 16 // MAXFREQ_SCALED / PPM_SCALE: 500 ppm
	ntpUserTickUs = 10000     // USER_TICK_USEC
	staReadOnly   = unix.STA_PPSSIGNAL | unix.STA_PPSJITTER | unix.STA_PPSWANDER | unix.STA_PPSERROR |
		unix.STA_CLOCKERR | unix.STA_NANO | unix.STA_MODE | unix.STA_CLK
	timeError = 5 // TIME_ERROR

	// The kernel's adjtime(3) modes, which x/sys/unix does not name.
	AdjAdjtime        = 0x8000
	AdjOffsetReadonly = 0x2000
	AdjOffsetSingle   = 0x0001
)

func newNTP() *NTP {
	return &NTP{maxError: ntpPhaseLimit, estError: ntpPhaseLimit, status: unix.STA_UNSYNC,
		constant: 2, tick: ntpUserTickUs}
}

// Adjust applies the modes of tx (checked by the caller) and fills tx
// with the model's state, as Linux's __do_adjtimex; it returns the clock
// state code (TIME_OK, or TIME_ERROR while unsynchronized).
func (n *NTP) Adjust(tx *NTPTimex) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := tx.Modes
	if m&AdjAdjtime != 0 {
		old := n.adjust
		if m&AdjOffsetReadonly == 0 {
			n.adjust = tx.Offset
		}
		tx.Offset = old
	} else {
		if m&unix.ADJ_STATUS != 0 {
			n.status = n.status&staReadOnly | tx.Status&^staReadOnly
		}
		if m&unix.ADJ_NANO != 0 {
			n.status |= unix.STA_NANO
		}
		if m&unix.ADJ_MICRO != 0 {
			n.status &^= unix.STA_NANO
		}
		if m&unix.ADJ_FREQUENCY != 0 {
			n.freq = min(max(tx.Freq, -ntpMaxFreq), ntpMaxFreq)
		}
		if m&unix.ADJ_MAXERROR != 0 {
			n.maxError = min(max(tx.MaxError, 0), ntpPhaseLimit)
		}
		if m&unix.ADJ_ESTERROR != 0 {
			n.estError = min(max(tx.EstError, 0), ntpPhaseLimit)
		}
		if m&unix.ADJ_TIMECONST != 0 {
			c := tx.Constant
			if n.status&unix.STA_NANO == 0 {
				c += 4
			}
			n.constant = min(max(c, 0), ntpMaxTC)
		}
		if m&unix.ADJ_TAI != 0 && tx.Constant >= 0 {
			n.tai = int32(tx.Constant)
		}
		if m&unix.ADJ_OFFSET != 0 {
			off := tx.Offset
			if n.status&unix.STA_NANO == 0 {
				off *= 1000
			}
			n.offset = off
		}
		if m&unix.ADJ_TICK != 0 {
			n.tick = tx.Tick
		}
		tx.Offset = n.offset
		if n.status&unix.STA_NANO == 0 {
			tx.Offset /= 1000
		}
	}
	tx.Freq, tx.MaxError, tx.EstError = n.freq, n.maxError, n.estError
	tx.Status, tx.Constant, tx.Tick, tx.Tai = n.status, n.constant, n.tick, n.tai
	tx.Precision, tx.Tolerance = 1, ntpMaxFreq
	if n.status&(unix.STA_UNSYNC|unix.STA_CLOCKERR) != 0 {
		return timeError
	}
	return 0
}

// NTPTimex is what Adjust takes and fills of a struct timex.
type NTPTimex struct {
	Modes                                uint32
	Offset, Freq, MaxError, EstError     int64
	Status                               int32
	Constant, Precision, Tolerance, Tick int64
	Tai                                  int32
}

// NTP returns the kernel's clock model.
func (k *Kernel) NTP() *NTP {
	k.wall.mu.Lock()
	defer k.wall.mu.Unlock()
	if k.wall.ntp == nil {
		k.wall.ntp = newNTP()
	}
	return k.wall.ntp
}
