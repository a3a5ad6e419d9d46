package syscall

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/syscall/sysno"
)

func init() {
	register(sysno.Uname, sysUname)
	register(sysno.Prlimit64, sysPrlimit64)
	register(sysno.Getrlimit, sysGetrlimit)
	register(sysno.Getrandom, sysGetrandom)
	register(sysno.ClockGettime, sysClockGettime)
	register(sysno.Gettimeofday, sysGettimeofday)
	register(sysno.Nanosleep, sysNanosleep)
	register(sysno.ClockNanosleep, sysClockNanosleep)
	register(sysno.RestartSyscall, sysRestartSyscall)
}

// yield lets other goroutines run; a variable so that tests can count calls.
var yield = runtime.Gosched

// Uname fields; the release names the Linux ABI level the layer follows.
var uname = [6]string{"Linux", "jiege", "6.12.0-jiege", "#1 Jiege-Go", "riscv64", "(none)"}

// sysUname implements uname(2).
func sysUname(t *kernel.Task, a Args) (uint64, error) {
	b := make([]byte, 6*65)
	for i, s := range uname {
		copy(b[65*i:65*i+64], s)
	}
	return 0, copyOut(t, a[0], b)
}

// rlimNLimits is RLIM_NLIMITS, the number of resources.
const rlimNLimits = 16

// Resource limits reported: Linux's for init (INIT_RLIMITS), except that
// descriptors stop at the table's size and processes and pending signals
// are unlimited.
func rlimit(resource uint64) (cur, max uint64) {
	switch resource {
	case unix.RLIMIT_STACK:
		return 8 << 20, unix.RLIM_INFINITY
	case unix.RLIMIT_NOFILE:
		return fs.MaxFDs, fs.MaxFDs
	case unix.RLIMIT_CORE:
		return 0, unix.RLIM_INFINITY
	case unix.RLIMIT_MEMLOCK:
		return 8 << 20, 8 << 20
	case unix.RLIMIT_MSGQUEUE:
		return 819200, 819200 // MQ_BYTES_MAX
	case unix.RLIMIT_NICE, unix.RLIMIT_RTPRIO:
		return 0, 0
	}
	return unix.RLIM_INFINITY, unix.RLIM_INFINITY
}

// sysPrlimit64 implements prlimit64(2) for the calling process; new limits
// are accepted and not enforced.
func sysPrlimit64(t *kernel.Task, a Args) (uint64, error) {
	if a[0] != 0 && int(a[0]) != t.Proc.PID {
		return 0, unix.ESRCH
	}
	if a[1] >= rlimNLimits {
		return 0, unix.EINVAL
	}
	if a[3] != 0 {
		cur, max := rlimit(a[1])
		return 0, copyOut(t, a[3], words(cur, max))
	}
	return 0, nil
}

// sysGetrlimit implements getrlimit(2).
func sysGetrlimit(t *kernel.Task, a Args) (uint64, error) {
	return sysPrlimit64(t, Args{0, a[0], 0, a[1]})
}

// sysGetrandom implements getrandom(2) from the kernel's generator.
func sysGetrandom(t *kernel.Task, a Args) (uint64, error) {
	if a[2]&^(unix.GRND_NONBLOCK|unix.GRND_RANDOM|unix.GRND_INSECURE) != 0 {
		return 0, unix.EINVAL
	}
	buf := make([]byte, min(a[1], 1<<20))
	kernel.Random(buf)
	return uint64(len(buf)), copyOut(t, a[0], buf)
}

// sysClockGettime implements clock_gettime(2).
func sysClockGettime(t *kernel.Task, a Args) (uint64, error) {
	var d time.Duration
	switch a[0] {
	case unix.CLOCK_REALTIME, unix.CLOCK_REALTIME_COARSE:
		d = time.Duration(time.Now().UnixNano())
	case unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_COARSE, unix.CLOCK_MONOTONIC_RAW, unix.CLOCK_BOOTTIME,
		unix.CLOCK_PROCESS_CPUTIME_ID, unix.CLOCK_THREAD_CPUTIME_ID:
		d = kernel.Uptime()
	default:
		return 0, unix.EINVAL
	}
	return 0, copyOutStruct(t, a[1], durationTimespec(d))
}

// sysGettimeofday implements gettimeofday(2).
func sysGettimeofday(t *kernel.Task, a Args) (uint64, error) {
	if a[0] == 0 {
		return 0, nil
	}
	now := time.Now()
	return 0, copyOut(t, a[0], words(uint64(now.Unix()), uint64(now.Nanosecond()/1000)))
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
			deadline = time.Unix(0, int64(d))
		case unix.CLOCK_MONOTONIC, unix.CLOCK_BOOTTIME:
			deadline = time.Now().Add(d - kernel.Uptime())
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
		if err := copyOutStruct(t, rem, durationTimespec(max(time.Until(deadline), 0))); err != nil {
			return 0, err
		}
	}
	t.SetRestartBlock(func(t *kernel.Task) (uint64, error) { return sleepUntil(t, deadline, rem) })
	return 0, unix.EINTR
}

// sysRestartSyscall implements restart_syscall(2): it continues the call
// a signal without a handler interrupted.
func sysRestartSyscall(t *kernel.Task, a Args) (uint64, error) {
	fn := t.TakeRestartBlock()
	if fn == nil {
		return 0, unix.EINTR
	}
	return fn(t)
}
