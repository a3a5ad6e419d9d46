package linux

import "time"

// Timespec is struct timespec.
type Timespec struct{ Sec, Nsec int64 }

// Timeval is struct timeval.
type Timeval struct{ Sec, Usec int64 }

// Itimerspec is struct itimerspec.
type Itimerspec struct{ Interval, Value Timespec }

// Itimerval is struct itimerval.
type Itimerval struct{ Interval, Value Timeval }

// Tms is struct tms, in clock ticks.
type Tms struct{ Utime, Stime, Cutime, Cstime int64 }

// TimespecOf is the timespec of an instant; the zero time is zero.
func TimespecOf(t time.Time) Timespec {
	if t.IsZero() {
		return Timespec{}
	}
	return Timespec{t.Unix(), int64(t.Nanosecond())}
}

// DurationTimespec is the timespec of a duration.
func DurationTimespec(d time.Duration) Timespec {
	return Timespec{int64(d / time.Second), int64(d % time.Second)}
}

// DurationTimeval is the timeval of a duration, truncated to microseconds.
func DurationTimeval(d time.Duration) Timeval {
	return Timeval{int64(d / time.Second), int64(d % time.Second / time.Microsecond)}
}

// Duration is the timeval as a duration; it does not check its range.
func (tv Timeval) Duration() time.Duration {
	return time.Duration(tv.Sec)*time.Second + time.Duration(tv.Usec)*time.Microsecond
}

// Timex is struct timex (adjtimex(2), clock_adjtime(2)).
type Timex struct {
	Modes     uint32
	_         [4]byte
	Offset    int64
	Freq      int64
	Maxerror  int64
	Esterror  int64
	Status    int32
	_         [4]byte
	Constant  int64
	Precision int64
	Tolerance int64
	Time      Timeval
	Tick      int64
	Ppsfreq   int64
	Jitter    int64
	Shift     int32
	_         [4]byte
	Stabil    int64
	Jitcnt    int64
	Calcnt    int64
	Errcnt    int64
	Stbcnt    int64
	Tai       int32
	_         [44]byte
}
