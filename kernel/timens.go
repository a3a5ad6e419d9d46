package kernel

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel/loader"
	"github.com/jiege-go/jiege/mm"
)

// Time namespaces (Linux's kernel/time/namespace.c). A time namespace
// adds its offsets to CLOCK_MONOTONIC (and its raw and coarse forms) and
// to CLOCK_BOOTTIME for the processes in it: to what they read (through
// the system call, the vDSO, sysinfo and /proc/uptime) and, taken back,
// to the absolute times they give (clock_nanosleep, POSIX timers,
// timerfds, futex waits). Root writes the offsets to
// /proc/PID/timens_offsets after unshare(CLONE_NEWTIME) and before any
// process enters the namespace (fork, execve or setns), which freezes
// them. A namespace with offsets has its own vDSO data page
// (loader.VDSO.Shifted), which the address spaces of its processes map in
// place of the kernel's.

// TimeOffsets are a time namespace's offsets.
type TimeOffsets struct{ Monotonic, Boottime time.Duration }

type timeNamespace struct {
	mu      sync.Mutex
	offsets TimeOffsets
	frozen  bool // a process entered it: the offsets stay
	// vdso holds the data pages its processes map: the kernel's while
	// the offsets are 0, else its own (own), made when it froze.
	vdso *loader.VDSO
	own  bool
}

// offsetsNow returns n's offsets.
func (n *timeNamespace) offsetsNow() TimeOffsets {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.offsets
}

// enter freezes n's offsets, as a process enters it, and maps its vDSO
// data page into that process's address space as, in place of the one
// there (Linux's timens_commit).
func (n *timeNamespace) enter(k *Kernel, as *mm.AddressSpace) error {
	v := n.freeze(k)
	return v.JoinTimeNamespace(k.userMemory, as)
}

// freeze fixes n's offsets and returns the vDSO data its processes map.
func (n *timeNamespace) freeze(k *Kernel) *loader.VDSO {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.frozen {
		n.frozen = true
		if n.offsets != (TimeOffsets{}) {
			n.vdso, n.own = k.vdso.Shifted(int64(n.offsets.Monotonic), int64(n.offsets.Boottime)), true
		}
	}
	return n.vdso
}

// release gives back n's own data pages once no process or file keeps n.
func (n *timeNamespace) release() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.own {
		n.vdso.Release()
		n.own = false
	}
}

// timeOffsets returns the offsets of the time namespace t's process
// reads its clocks in.
func (t *Task) timeOffsets() TimeOffsets {
	n := t.Proc.ns.Load().time
	if n.Ino == timeInitIno {
		return TimeOffsets{}
	}
	return n.time.offsetsNow()
}

// MonotonicOffset and BoottimeOffset are what t's time namespace adds to
// CLOCK_MONOTONIC and to CLOCK_BOOTTIME.
func (t *Task) MonotonicOffset() time.Duration { return t.timeOffsets().Monotonic }
func (t *Task) BoottimeOffset() time.Duration  { return t.timeOffsets().Boottime }

// execTimeNamespace freezes the time namespace t's process enters at
// execve (its children's) and returns its vDSO data.
func (t *Task) execTimeNamespace() *loader.VDSO {
	return t.Proc.ns.Load().timeForChildren.time.freeze(t.Proc.k)
}

// enterTimeForChildren moves p, whose execve succeeded, into the time
// namespace of its children, if it is not there (exec_task_namespaces).
func (p *Process) enterTimeForChildren() {
	old := p.ns.Load()
	if old.time == old.timeForChildren {
		return
	}
	s := *old
	s.time = s.timeForChildren
	s.join()
	p.replaceNamespaces(&s)
}

// TimensOffsets is /proc/PID/timens_offsets of p: the offsets of the
// time namespace its children enter, in Linux's format.
func (p *Process) TimensOffsets() []byte {
	o := p.ns.Load().timeForChildren.time.offsetsNow()
	var b bytes.Buffer
	for _, c := range []struct {
		name string
		d    time.Duration
	}{{"monotonic", o.Monotonic}, {"boottime", o.Boottime}} {
		sec, nsec := int64(c.d/time.Second), int64(c.d%time.Second)
		if nsec < 0 {
			sec, nsec = sec-1, nsec+int64(time.Second)
		}
		fmt.Fprintf(&b, "%-10s %10d %9d\n", c.name, sec, nsec)
	}
	return b.Bytes()
}

// ktimeSecMax is Linux's KTIME_SEC_MAX, the most seconds a clock holds.
const ktimeSecMax = 9223372036

// SetTimensOffsets writes /proc/PID/timens_offsets of p, as Linux's
// timens_offsets_write: lines "CLOCK SECONDS NANOSECONDS", the clock
// monotonic or boottime (by name or id), the first two lines taken;
// EINVAL for a bad line or another clock, EPERM without CAP_SYS_TIME,
// ERANGE for an offset that would take its clock below 0 or past half of
// KTIME_SEC_MAX, and EACCES once a process has entered the namespace.
func (p *Process) SetTimensOffsets(writer *Process, b []byte) error {
	type entry struct {
		clock     int
		sec, nsec int64
	}
	var entries []entry
	for line := range bytes.Lines(b) {
		if len(entries) == 2 {
			break
		}
		f := bytes.Fields(line)
		if len(f) < 3 {
			return unix.EINVAL
		}
		var e entry
		switch string(f[0]) {
		case "monotonic", "1":
			e.clock = unix.CLOCK_MONOTONIC
		case "boottime", "7":
			e.clock = unix.CLOCK_BOOTTIME
		default:
			return unix.EINVAL
		}
		var err error
		if e.sec, err = strconv.ParseInt(string(f[1]), 10, 64); err != nil {
			return unix.EINVAL
		}
		nsec, err := strconv.ParseUint(string(f[2]), 10, 64)
		if err != nil || nsec >= uint64(time.Second) {
			return unix.EINVAL
		}
		e.nsec = int64(nsec)
		entries = append(entries, e)
	}
	if writer.Caps.Effective&(1<<unix.CAP_SYS_TIME) == 0 {
		return unix.EPERM
	}
	now := p.k.Uptime()
	var o TimeOffsets
	n := p.ns.Load().timeForChildren.time
	n.mu.Lock()
	defer n.mu.Unlock()
	o = n.offsets
	for _, e := range entries {
		if e.sec > ktimeSecMax || e.sec < -ktimeSecMax {
			return unix.ERANGE
		}
		if sec := int64(now/time.Second) + e.sec + (int64(now%time.Second)+e.nsec)/int64(time.Second); sec < 0 || sec > ktimeSecMax/2 {
			return unix.ERANGE
		}
		d := time.Duration(e.sec)*time.Second + time.Duration(e.nsec)
		if e.clock == unix.CLOCK_MONOTONIC {
			o.Monotonic = d
		} else {
			o.Boottime = d
		}
	}
	if n.frozen {
		return unix.EACCES
	}
	n.offsets = o
	return nil
}
