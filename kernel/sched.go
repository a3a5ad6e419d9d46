package kernel

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Scheduling attributes. The Go runtime schedules every thread alike; a
// thread's policy, real-time priority and nice value are kept as Linux
// keeps them, with Linux's rules for who may set what, so that programs
// read back what they set and are refused what Linux refuses.

// Linux's policies (uapi/linux/sched.h).
const (
	SchedNormal   = 0
	SchedFIFO     = 1
	SchedRR       = 2
	SchedBatch    = 3
	SchedIdle     = 5
	SchedDeadline = 6

	SchedResetOnFork     = 0x40000000 // or'ed into a policy
	SchedFlagResetOnFork = 0x01       // sched_attr's sched_flags
)

// MaxRTPriority is the highest real-time priority (MAX_RT_PRIO - 1).
const MaxRTPriority = 99

// SchedAttr is a thread's scheduling policy and parameters, as
// sched_setattr(2) gives them.
type SchedAttr struct {
	Policy      uint32
	ResetOnFork bool
	Nice        int32  // -20..19, for the fair policies
	Priority    uint32 // 1..99 for FIFO and RR, else 0
	// SCHED_DEADLINE's parameters, in ns.
	Runtime, Deadline, Period uint64
}

// IsRealTime reports a FIFO or RR policy.
func (a SchedAttr) IsRealTime() bool { return a.Policy == SchedFIFO || a.Policy == SchedRR }

// taskSched is a Task's scheduling state; another thread may set it.
type taskSched struct {
	mu   sync.Mutex
	attr SchedAttr
	// affinity is the harts it may run on, one bit each (0: every hart).
	affinity uint64
	// ioprio is the I/O priority ioprio_set gave it (class << 13 | data;
	// 0: none set), kept for ioprio_get: memory is the only medium.
	ioprio uint16
}

// I/O priority classes (include/uapi/linux/ioprio.h).
const (
	IOPrioClassNone = 0
	IOPrioClassRT   = 1
	IOPrioClassBE   = 2
	IOPrioClassIdle = 3

	ioprioClassShift = 13
)

// IOPrio returns the I/O priority set on t, 0 when none was.
func (t *Task) IOPrio() uint16 {
	t.sched.mu.Lock()
	defer t.sched.mu.Unlock()
	return t.sched.ioprio
}

// SetIOPrio sets t's I/O priority.
func (t *Task) SetIOPrio(prio uint16) {
	t.sched.mu.Lock()
	defer t.sched.mu.Unlock()
	t.sched.ioprio = prio
}

// EffectiveIOPrio is the priority t's I/O would get: the one set, or with
// none, the class of its policy and a level from its nice value (Linux's
// __get_task_ioprio).
func (t *Task) EffectiveIOPrio() uint16 {
	t.sched.mu.Lock()
	defer t.sched.mu.Unlock()
	if t.sched.ioprio>>ioprioClassShift != IOPrioClassNone {
		return t.sched.ioprio
	}
	a := t.sched.attr
	class := uint16(IOPrioClassBE)
	switch {
	case a.Policy == SchedIdle:
		class = IOPrioClassIdle
	case a.IsRealTime():
		class = IOPrioClassRT
	}
	return class<<ioprioClassShift | uint16((a.Nice+20)/5)
}

// Affinity returns the harts t may run on, one bit each, within the
// machine's.
func (t *Task) Affinity() uint64 {
	all := uint64(1)<<t.Kernel().CPUs() - 1
	t.sched.mu.Lock()
	defer t.sched.mu.Unlock()
	if t.sched.affinity == 0 {
		return all
	}
	return t.sched.affinity & all
}

// SetAffinity sets the harts t may run on: EINVAL when mask names none
// of the machine's.
func (t *Task) SetAffinity(mask uint64) error {
	mask &= uint64(1)<<t.Kernel().CPUs() - 1
	if mask == 0 {
		return unix.EINVAL
	}
	t.sched.mu.Lock()
	t.sched.affinity = mask
	t.sched.mu.Unlock()
	return nil
}

// Sched returns t's scheduling attributes.
func (t *Task) Sched() SchedAttr {
	t.sched.mu.Lock()
	defer t.sched.mu.Unlock()
	return t.sched.attr
}

// SetSched replaces t's scheduling attributes when check, run under the
// lock with the old ones, allows it.
func (t *Task) SetSched(check func(old SchedAttr) (SchedAttr, error)) error {
	t.sched.mu.Lock()
	defer t.sched.mu.Unlock()
	a, err := check(t.sched.attr)
	if err == nil {
		t.sched.attr = a
	}
	return err
}

// inheritSched gives a new thread its creator's attributes; with
// reset-on-fork, a real-time or deadline policy becomes SCHED_NORMAL at
// nice 0 and a negative nice 0 (sched_fork).
func (t *Task) inheritSched(parent *Task) {
	a := parent.Sched()
	t.sched.affinity = parent.Affinity()
	t.sched.ioprio = parent.IOPrio()
	if a.ResetOnFork {
		if a.IsRealTime() || a.Policy == SchedDeadline {
			a = SchedAttr{}
		}
		a.Nice = max(a.Nice, 0)
		a.ResetOnFork = false
	}
	t.sched.attr = a
}

// SameOwner reports whether the caller may change t's scheduling as an
// unprivileged user: its effective uid is t's real or effective uid
// (Linux's check_same_owner and set_one_prio_perm).
func (t *Task) SameOwner(caller *Process) bool {
	return caller.EUID == 0 || caller.EUID == t.Proc.EUID || caller.EUID == t.Proc.UID
}

// CanNice reports whether p may lower a nice value to nice: privileged,
// or within its RLIMIT_NICE (20 - nice, Linux's can_nice).
func (p *Process) CanNice(nice int32) bool {
	return p.EUID == 0 || p.Limit(unix.RLIMIT_NICE).Cur >= uint64(20-nice)
}
