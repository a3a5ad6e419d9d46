package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.TimerfdCreate, sysTimerfdCreate)
	register(sysno.TimerfdSettime, sysTimerfdSettime)
	register(sysno.TimerfdGettime, sysTimerfdGettime)
}

// timerClocks are the clocks a timerfd may follow; the kernel keeps the
// timer's clock to read absolute times against it.
var timerClocks = map[uint64]bool{unix.CLOCK_REALTIME: true, unix.CLOCK_MONOTONIC: true,
	unix.CLOCK_BOOTTIME: true, unix.CLOCK_REALTIME_ALARM: true, unix.CLOCK_BOOTTIME_ALARM: true}

// clockedTimer is a timerfd with the clock it follows.
type clockedTimer struct {
	*fs.TimerFD
	clock uint64
}

// sysTimerfdCreate implements timerfd_create(2).
func sysTimerfdCreate(t *kernel.Task, a Args) (uint64, error) {
	if !timerClocks[a[0]] {
		return 0, unix.EINVAL
	}
	if a[1]&^(unix.TFD_NONBLOCK|unix.TFD_CLOEXEC) != 0 {
		return 0, unix.EINVAL
	}
	timer, err := fs.NewTimerFD()
	if err != nil {
		return 0, err
	}
	f := &clockedTimer{TimerFD: timer, clock: a[0]}
	fd, err := t.Proc.Files.Open(f, unix.O_RDWR|uint32(a[1]&unix.TFD_NONBLOCK), a[1]&unix.TFD_CLOEXEC != 0)
	return uint64(fd), err
}

// timerfdOf returns the timer open on fd and its description, with the
// reference the caller drops: EINVAL for any other file.
func timerfdOf(t *kernel.Task, fd uint64) (*clockedTimer, *fs.Description, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, nil, err
	}
	f, ok := d.File.(*clockedTimer)
	if !ok {
		d.DecRef()
		return nil, nil, unix.EINVAL
	}
	return f, d, nil
}

// tfdIocSetTicks is TFD_IOC_SET_TICKS, _IOW('T', 0, __u64).
const tfdIocSetTicks = 0x40085400

// timerfdIoctl answers a timerfd's ioctls: TFD_IOC_SET_TICKS sets its
// count of unread expirations (EINVAL for 0).
func timerfdIoctl(t *kernel.Task, f *clockedTimer, cmd, arg uint64) (uint64, error) {
	if cmd != tfdIocSetTicks {
		return 0, unix.ENOTTY
	}
	var ticks uint64
	if err := copyInStruct(t, arg, &ticks); err != nil {
		return 0, err
	}
	if ticks == 0 {
		return 0, unix.EINVAL
	}
	f.SetTicks(ticks)
	return 0, nil
}

func itimerspec(left, interval time.Duration) linux.Itimerspec {
	return linux.Itimerspec{Interval: linux.DurationTimespec(interval), Value: linux.DurationTimespec(left)}
}

func specDuration(ts linux.Timespec) (time.Duration, error) {
	if ts.Sec < 0 || ts.Nsec < 0 || ts.Nsec >= 1e9 {
		return 0, unix.EINVAL
	}
	return time.Duration(min(ts.Sec, 100*365*24*3600))*time.Second + time.Duration(ts.Nsec), nil
}

// readItimerspec reads a struct itimerspec: its value and interval,
// EINVAL for either out of range.
func readItimerspec(t *kernel.Task, addr uint64) (value, interval time.Duration, err error) {
	var spec linux.Itimerspec
	if err := copyInStruct(t, addr, &spec); err != nil {
		return 0, 0, err
	}
	if value, err = specDuration(spec.Value); err != nil {
		return 0, 0, err
	}
	if interval, err = specDuration(spec.Interval); err != nil {
		return 0, 0, err
	}
	return value, interval, nil
}

// sysTimerfdSettime implements timerfd_settime(2).
func sysTimerfdSettime(t *kernel.Task, a Args) (uint64, error) {
	const abstime, cancelOnSet = 1, 2
	if a[1]&^(abstime|cancelOnSet) != 0 {
		return 0, unix.EINVAL
	}
	f, d, err := timerfdOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	value, interval, err := readItimerspec(t, a[2])
	if err != nil {
		return 0, err
	}
	var next time.Time
	if value != 0 {
		switch {
		case a[1]&abstime == 0:
			next = time.Now().Add(value)
		case f.clock == unix.CLOCK_REALTIME || f.clock == unix.CLOCK_REALTIME_ALARM:
			next = time.Now().Add(value - time.Duration(t.Kernel().Now().UnixNano()))
		default:
			now, _ := t.ClockTime(int32(f.clock)) // in t's time namespace
			next = time.Now().Add(value - now)
		}
	}
	left, oldInterval := f.Set(next, interval)
	if a[3] != 0 {
		return 0, copyOutStruct(t, a[3], itimerspec(left, oldInterval))
	}
	return 0, nil
}

// sysTimerfdGettime implements timerfd_gettime(2).
func sysTimerfdGettime(t *kernel.Task, a Args) (uint64, error) {
	f, d, err := timerfdOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	left, interval := f.Get()
	return 0, copyOutStruct(t, a[1], itimerspec(left, interval))
}
