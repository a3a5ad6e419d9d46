package syscall

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/syscall/sysno"
)

func init() {
	register(sysno.Uname, sysUname)
	register(sysno.Sysinfo, sysSysinfo)
	register(sysno.Prlimit64, sysPrlimit64)
	register(sysno.Getrlimit, sysGetrlimit)
	register(sysno.Setrlimit, sysSetrlimit)
	register(sysno.Getrusage, sysGetrusage)
	register(sysno.Times, sysTimes)
	register(sysno.Getrandom, sysGetrandom)
	register(sysno.ClockGettime, sysClockGettime)
	register(sysno.ClockGetres, sysClockGetres)
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

// sysPrlimit64 implements prlimit64(2): the old limit goes to old (when
// not null), then the new one from new (when not null) is set. Another
// process's limits need root or the same real ids as all of its ids.
// Errors come in Linux's order: EFAULT for new, ESRCH, EPERM, EINVAL.
func sysPrlimit64(t *kernel.Task, a Args) (uint64, error) {
	var set *kernel.Rlimit
	if a[2] != 0 {
		var l [2]uint64
		if err := copyInStruct(t, a[2], &l); err != nil {
			return 0, err
		}
		set = &kernel.Rlimit{Cur: l[0], Max: l[1]}
	}
	p := t.Proc
	if pid := int32(a[0]); pid != 0 {
		target := kernel.TaskByID(int(pid)) // any thread names its process
		if pid < 0 || target == nil {
			return 0, unix.ESRCH
		}
		p = target.Proc
	}
	if p != t.Proc && !t.Proc.MayChangeLimits(p) {
		return 0, unix.EPERM
	}
	if a[1] >= kernel.RlimitCount {
		return 0, unix.EINVAL
	}
	old := p.Limit(int(a[1]))
	if set != nil {
		var err error
		if old, err = p.SetLimit(t.Proc, int(a[1]), *set); err != nil {
			return 0, err
		}
	}
	if a[3] != 0 {
		return 0, copyOut(t, a[3], words(old.Cur, old.Max))
	}
	return 0, nil
}

// sysGetrlimit implements getrlimit(2).
func sysGetrlimit(t *kernel.Task, a Args) (uint64, error) {
	return sysPrlimit64(t, Args{0, a[0], 0, a[1]})
}

// sysSetrlimit implements setrlimit(2).
func sysSetrlimit(t *kernel.Task, a Args) (uint64, error) {
	return sysPrlimit64(t, Args{0, a[0], a[1], 0})
}

// getrusage's who.
const (
	rusageSelf     = 0
	rusageChildren = ^uint64(0) // -1
	rusageThread   = 1
)

// sysGetrusage implements getrusage(2): the user and system CPU time and
// the page faults of the process, of its waited-for children, or of the
// thread; the other counters are not kept and read 0.
func sysGetrusage(t *kernel.Task, a Args) (uint64, error) {
	var u kernel.Usage
	switch a[0] {
	case rusageSelf:
		u = t.Proc.Usage()
	case rusageChildren:
		u = t.Proc.ChildUsage()
	case rusageThread:
		u = t.Usage()
	default:
		return 0, unix.EINVAL
	}
	return 0, copyOutStruct(t, a[1], linuxRusage{Utime: durationTimeval(u.User), Stime: durationTimeval(u.System), Minflt: int64(u.MinorFaults)})
}

// clockTicks is USER_HZ, the unit of times(2).
const clockTicks = 100

func ticksOf(d time.Duration) int64 { return int64(d / (time.Second / clockTicks)) }

// sysTimes implements times(2): the CPU times of the process and of its
// waited-for children, and the clock ticks since boot.
func sysTimes(t *kernel.Task, a Args) (uint64, error) {
	if a[0] != 0 {
		u, c := t.Proc.Usage(), t.Proc.ChildUsage()
		tms := linuxTms{Utime: ticksOf(u.User), Stime: ticksOf(u.System), Cutime: ticksOf(c.User), Cstime: ticksOf(c.System)}
		if err := copyOutStruct(t, a[0], tms); err != nil {
			return 0, err
		}
	}
	return uint64(ticksOf(kernel.Uptime())), nil
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
	case unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_COARSE, unix.CLOCK_MONOTONIC_RAW, unix.CLOCK_BOOTTIME:
		d = kernel.Uptime()
	case unix.CLOCK_PROCESS_CPUTIME_ID:
		u := t.Proc.Usage()
		d = u.User + u.System
	case unix.CLOCK_THREAD_CPUTIME_ID:
		u := t.Usage()
		d = u.User + u.System
	default:
		return 0, unix.EINVAL
	}
	return 0, copyOutStruct(t, a[1], durationTimespec(d))
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
	return 0, copyOutStruct(t, a[1], durationTimespec(time.Nanosecond))
}

// sysGettimeofday implements gettimeofday(2); the time zone is UTC (the
// vDSO's __vdso_gettimeofday answers the same).
func sysGettimeofday(t *kernel.Task, a Args) (uint64, error) {
	if a[0] != 0 {
		now := time.Now()
		if err := copyOut(t, a[0], words(uint64(now.Unix()), uint64(now.Nanosecond()/1000))); err != nil {
			return 0, err
		}
	}
	if a[1] != 0 {
		return 0, copyOut(t, a[1], make([]byte, 8))
	}
	return 0, nil
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

// linuxSysinfo is struct sysinfo (64-bit: no padding at the end).
type linuxSysinfo struct {
	Uptime    int64
	Loads     [3]uint64
	TotalRAM  uint64
	FreeRAM   uint64
	SharedRAM uint64
	BufferRAM uint64
	TotalSwap uint64
	FreeSwap  uint64
	Procs     uint16
	_         [6]byte
	TotalHigh uint64
	FreeHigh  uint64
	MemUnit   uint32
	_         uint32
}

// sysSysinfo implements sysinfo(2): uptime, RAM (the frames the kernel
// manages), no swap, the number of tasks.
func sysSysinfo(t *kernel.Task, a Args) (uint64, error) {
	inUse, total := kernel.MemoryStats()
	return 0, copyOutStruct(t, a[0], linuxSysinfo{
		Uptime: int64(kernel.Uptime() / time.Second), TotalRAM: total, FreeRAM: total - inUse,
		Procs: uint16(min(len(kernel.Processes()), 65535)), MemUnit: 1,
	})
}
