package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Prlimit64, sysPrlimit64)
	register(sysno.Getrlimit, sysGetrlimit)
	register(sysno.Setrlimit, sysSetrlimit)
	register(sysno.Getrusage, sysGetrusage)
	register(sysno.Times, sysTimes)
}

// sysPrlimit64 implements prlimit64(2): the old limit goes to old (when
// not null), then the new one from new (when not null) is set. Another
// process's limits need root or the same real ids as all of its ids.
// Errors come in Linux's order: EFAULT for new, ESRCH, EPERM, EINVAL.
func sysPrlimit64(t *kernel.Task, a Args) (uint64, error) {
	var set *kernel.Rlimit
	if a[2] != 0 {
		var l linux.Rlimit
		if err := copyInStruct(t, a[2], &l); err != nil {
			return 0, err
		}
		set = &kernel.Rlimit{Cur: l.Cur, Max: l.Max}
	}
	p := t.Proc
	if pid := int32(a[0]); pid != 0 {
		target := t.FindTask(int(pid)) // any thread names its process
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
		return 0, copyOutStruct(t, a[3], linux.Rlimit{Cur: old.Cur, Max: old.Max})
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
	return 0, copyOutStruct(t, a[1], linux.Rusage{Utime: linux.DurationTimeval(u.User), Stime: linux.DurationTimeval(u.System), Minflt: int64(u.MinorFaults)})
}

// clockTicks is USER_HZ, the unit of times(2).
const clockTicks = 100

func ticksOf(d time.Duration) int64 { return int64(d / (time.Second / clockTicks)) }

// sysTimes implements times(2): the CPU times of the process and of its
// waited-for children, and the clock ticks since boot.
func sysTimes(t *kernel.Task, a Args) (uint64, error) {
	if a[0] != 0 {
		u, c := t.Proc.Usage(), t.Proc.ChildUsage()
		tms := linux.Tms{Utime: ticksOf(u.User), Stime: ticksOf(u.System), Cutime: ticksOf(c.User), Cstime: ticksOf(c.System)}
		if err := copyOutStruct(t, a[0], tms); err != nil {
			return 0, err
		}
	}
	return uint64(ticksOf(t.Kernel().Uptime())), nil
}
