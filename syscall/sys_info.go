package syscall

import (
	"encoding/binary"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

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
	register(sysno.RtSigaction, sysRtSigaction)
	register(sysno.RtSigprocmask, sysRtSigprocmask)
	register(sysno.Sigaltstack, sysSigaltstack)
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

// Resource limits reported: the stack is 8 MiB, descriptors 1024, else unlimited.
func rlimit(resource uint64) (cur, max uint64) {
	switch resource {
	case unix.RLIMIT_STACK:
		return 8 << 20, unix.RLIM_INFINITY
	case unix.RLIMIT_NOFILE:
		return 1024, 1024
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
	b := make([]byte, 16)
	if err := copyIn(t, a[0], b); err != nil {
		return 0, err
	}
	sec, nsec := int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	if sec < 0 || nsec < 0 || nsec >= 1e9 {
		return 0, unix.EINVAL
	}
	// Block, so that exit_group ends a sleeping thread at once.
	d := time.Duration(min(sec, 100*365*24*3600))*time.Second + time.Duration(nsec)
	if err := t.Block(nil, time.Now().Add(d)); err != unix.ETIMEDOUT {
		return 0, err
	}
	return 0, nil
}

// sysRtSigaction implements rt_sigaction(2) as bookkeeping only: signals
// are not delivered yet, so the old action reads as SIG_DFL.
func sysRtSigaction(t *kernel.Task, a Args) (uint64, error) {
	if a[0] == 0 || a[0] > 64 || a[0] == uint64(unix.SIGKILL) || a[0] == uint64(unix.SIGSTOP) || a[3] != 8 {
		return 0, unix.EINVAL
	}
	if a[2] != 0 {
		return 0, copyOut(t, a[2], make([]byte, 24))
	}
	return 0, nil
}

// sysRtSigprocmask implements rt_sigprocmask(2); the old mask reads empty.
func sysRtSigprocmask(t *kernel.Task, a Args) (uint64, error) {
	if a[3] != 8 || a[0] > unix.SIG_SETMASK {
		return 0, unix.EINVAL
	}
	if a[2] != 0 {
		return 0, copyOut(t, a[2], make([]byte, 8))
	}
	return 0, nil
}

// sysSigaltstack implements sigaltstack(2); the old stack reads disabled.
func sysSigaltstack(t *kernel.Task, a Args) (uint64, error) {
	if a[1] != 0 {
		return 0, copyOut(t, a[1], words(0, 2, 0)) // ss_sp, ss_flags = SS_DISABLE, ss_size
	}
	return 0, nil
}
