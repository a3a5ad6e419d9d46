package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

// Scheduling policies, priorities and nice values: kept per thread with
// Linux's checks (kernel/sched.go); the Go runtime's scheduler runs every
// thread alike.

func init() {
	register(sysno.SchedSetscheduler, sysSchedSetscheduler)
	register(sysno.SchedSetparam, sysSchedSetparam)
	register(sysno.SchedGetscheduler, sysSchedGetscheduler)
	register(sysno.SchedGetparam, sysSchedGetparam)
	register(sysno.SchedSetattr, sysSchedSetattr)
	register(sysno.SchedGetattr, sysSchedGetattr)
	register(sysno.SchedGetPriorityMax, sysSchedGetPriorityMax)
	register(sysno.SchedGetPriorityMin, sysSchedGetPriorityMin)
	register(sysno.SchedRrGetInterval, sysSchedRrGetInterval)
	register(sysno.Setpriority, sysSetpriority)
	register(sysno.Getpriority, sysGetpriority)
	register(sysno.Getcpu, sysGetcpu)
	register(sysno.IoprioSet, sysIoprioSet)
	register(sysno.IoprioGet, sysIoprioGet)
}

// sysGetcpu implements getcpu(2): the hart the thread ran on when it
// asked, on NUMA node 0 (the virt machine has one). Affinity is recorded,
// not enforced, so at two harts or more the hart may be outside it.
func sysGetcpu(t *kernel.Task, a Args) (uint64, error) {
	if a[0] != 0 {
		if err := copyOutStruct(t, a[0], uint32(t.Kernel().CurrentCPU())); err != nil {
			return 0, err
		}
	}
	if a[1] != 0 {
		return 0, copyOutStruct(t, a[1], uint32(0))
	}
	return 0, nil
}

// rrTimeslice is SCHED_RR's quantum, Linux's RR_TIMESLICE
// (/proc/sys/kernel/sched_rr_timeslice_ms).
const rrTimeslice = 100 * time.Millisecond

// keepPolicy stands for sched_setparam's "the policy it has".
const keepPolicy = ^uint32(0)

// schedFlagKeepPolicy and the other sched_attr flags Linux accepts
// (SCHED_FLAG_ALL).
const (
	schedFlagKeepPolicy = 0x08
	schedFlagKeepParams = 0x10
	schedFlagsAll       = 0x7f
)

// schedTarget is the thread a pid names, 0 for the caller, an exited
// process not yet reaped included: EINVAL for a negative pid, ESRCH when
// there is none (find_process_by_pid).
func schedTarget(t *kernel.Task, pid uint64) (*kernel.Task, error) {
	switch id := int32(pid); {
	case id < 0:
		return nil, unix.EINVAL
	case id == 0:
		return t, nil
	default:
		if target := t.FindTaskOrZombie(int(id)); target != nil {
			return target, nil
		}
		return nil, unix.ESRCH
	}
}

func validPolicy(p uint32) bool {
	switch p {
	case kernel.SchedNormal, kernel.SchedFIFO, kernel.SchedRR, kernel.SchedBatch, kernel.SchedIdle, kernel.SchedDeadline:
		return true
	}
	return false
}

// deadlineParamsValid is Linux's __checkparam_dl: 1024 ns <= runtime <=
// deadline <= period (0: the deadline), the period between 100 us and
// 2^22 us (sched_deadline_period_min_us, _max_us).
func deadlineParamsValid(a kernel.SchedAttr) bool {
	if a.Deadline == 0 || a.Runtime < 1<<10 || a.Deadline&(1<<63) != 0 || a.Period&(1<<63) != 0 ||
		a.Period != 0 && a.Period < a.Deadline || a.Runtime > a.Deadline {
		return false
	}
	period := a.Period
	if period == 0 {
		period = a.Deadline
	}
	return period >= 100*1000 && period <= (1<<22)*1000
}

// setScheduler is Linux's __sched_setscheduler for a user's call: want
// is the new attributes (Policy keepPolicy: the target's), keepParams
// leaves priority and deadline parameters as they are.
func setScheduler(t *kernel.Task, target *kernel.Task, want kernel.SchedAttr, flags uint64) error {
	caller := t.Proc
	return target.SetSched(func(old kernel.SchedAttr) (kernel.SchedAttr, error) {
		if want.Policy == keepPolicy {
			want.Policy, want.ResetOnFork = old.Policy, old.ResetOnFork
		} else if !validPolicy(want.Policy) {
			return old, unix.EINVAL
		}
		if flags&schedFlagKeepParams != 0 {
			want.Priority, want.Runtime, want.Deadline, want.Period = old.Priority, old.Runtime, old.Deadline, old.Period
		}
		if want.Priority > kernel.MaxRTPriority ||
			want.Policy == kernel.SchedDeadline && !deadlineParamsValid(want) ||
			want.IsRealTime() != (want.Priority != 0) {
			return old, unix.EINVAL
		}
		if caller.EUID != 0 {
			switch {
			case want.Policy == kernel.SchedNormal || want.Policy == kernel.SchedBatch || want.Policy == kernel.SchedIdle:
				if want.Nice < old.Nice && !caller.CanNice(want.Nice) {
					return old, unix.EPERM
				}
			case want.IsRealTime():
				rtprio := caller.Limit(unix.RLIMIT_RTPRIO).Cur
				if want.Policy != old.Policy && rtprio == 0 ||
					uint64(want.Priority) > max(uint64(old.Priority), rtprio) {
					return old, unix.EPERM
				}
			case want.Policy == kernel.SchedDeadline:
				return old, unix.EPERM
			}
			if old.Policy == kernel.SchedIdle && want.Policy != kernel.SchedIdle && !caller.CanNice(old.Nice) ||
				!target.SameOwner(caller) || old.ResetOnFork && !want.ResetOnFork {
				return old, unix.EPERM
			}
		}
		if !want.IsRealTime() {
			want.Priority = 0
		}
		if want.Policy != kernel.SchedDeadline {
			want.Runtime, want.Deadline, want.Period = 0, 0, 0
		}
		return want, nil
	})
}

// setSchedParam is sched_setscheduler(2) and sched_setparam(2) (policy
// keepPolicy): a struct sched_param, the priority alone.
func setSchedParam(t *kernel.Task, pid uint64, policy uint32, param uint64) error {
	if param == 0 || int32(pid) < 0 {
		return unix.EINVAL
	}
	var prio int32
	if err := copyInStruct(t, param, &prio); err != nil {
		return err
	}
	target, err := schedTarget(t, pid)
	if err != nil {
		return err
	}
	want := kernel.SchedAttr{Policy: policy, Priority: uint32(prio), Nice: target.Sched().Nice}
	if policy != keepPolicy {
		want.Policy, want.ResetOnFork = policy&^kernel.SchedResetOnFork, policy&kernel.SchedResetOnFork != 0
	}
	return setScheduler(t, target, want, 0)
}

// sysSchedSetscheduler implements sched_setscheduler(2).
func sysSchedSetscheduler(t *kernel.Task, a Args) (uint64, error) {
	if int32(a[1]) < 0 {
		return 0, unix.EINVAL
	}
	return 0, setSchedParam(t, a[0], uint32(a[1]), a[2])
}

// sysSchedSetparam implements sched_setparam(2).
func sysSchedSetparam(t *kernel.Task, a Args) (uint64, error) {
	return 0, setSchedParam(t, a[0], keepPolicy, a[1])
}

// sysSchedGetscheduler implements sched_getscheduler(2).
func sysSchedGetscheduler(t *kernel.Task, a Args) (uint64, error) {
	target, err := schedTarget(t, a[0])
	if err != nil {
		return 0, err
	}
	s := target.Sched()
	policy := uint64(s.Policy)
	if s.ResetOnFork {
		policy |= kernel.SchedResetOnFork
	}
	return policy, nil
}

// sysSchedGetparam implements sched_getparam(2).
func sysSchedGetparam(t *kernel.Task, a Args) (uint64, error) {
	if a[1] == 0 {
		return 0, unix.EINVAL
	}
	target, err := schedTarget(t, a[0])
	if err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[1], int32(target.Sched().Priority))
}

// copyInSchedAttr reads a struct sched_attr of the size its first field
// gives (0: VER0), as Linux's sched_copy_attr: E2BIG, with our size
// written back, for a size below VER0, above a page, or larger than ours
// with a byte past ours not zero.
func copyInSchedAttr(t *kernel.Task, addr uint64) (linux.SchedAttr, error) {
	var attr linux.SchedAttr
	var size uint32
	if err := copyInStruct(t, addr, &size); err != nil {
		return attr, err
	}
	if size == 0 {
		size = linux.SchedAttrSizeVer0
	}
	tooBig := func() (linux.SchedAttr, error) {
		copyOutStruct(t, addr, uint32(len(linux.AsBytes(&attr))))
		return attr, unix.E2BIG
	}
	if size < linux.SchedAttrSizeVer0 || size > 4096 {
		return tooBig()
	}
	b := make([]byte, size)
	if err := copyIn(t, addr, b); err != nil {
		return attr, err
	}
	own := linux.AsBytes(&attr)
	for _, c := range b[min(len(b), len(own)):] {
		if c != 0 {
			return tooBig()
		}
	}
	copy(own, b)
	attr.Size = size
	return attr, nil
}

// sysSchedSetattr implements sched_setattr(2).
func sysSchedSetattr(t *kernel.Task, a Args) (uint64, error) {
	if a[1] == 0 || int32(a[0]) < 0 || a[2] != 0 {
		return 0, unix.EINVAL
	}
	attr, err := copyInSchedAttr(t, a[1])
	if err != nil {
		return 0, err
	}
	if int32(attr.Policy) < 0 || attr.Flags&^schedFlagsAll != 0 {
		return 0, unix.EINVAL
	}
	want := kernel.SchedAttr{Policy: attr.Policy, ResetOnFork: attr.Flags&kernel.SchedFlagResetOnFork != 0,
		Nice: min(max(attr.Nice, -20), 19), Priority: attr.Priority,
		Runtime: attr.Runtime, Deadline: attr.Deadline, Period: attr.Period}
	if attr.Flags&schedFlagKeepPolicy != 0 {
		want.Policy = keepPolicy
	}
	target, err := schedTarget(t, a[0])
	if err != nil {
		return 0, err
	}
	return 0, setScheduler(t, target, want, attr.Flags)
}

// sysSchedGetattr implements sched_getattr(2): as much of struct
// sched_attr as the caller's size holds, its size field saying how much.
func sysSchedGetattr(t *kernel.Task, a Args) (uint64, error) {
	addr, size := a[1], a[2]
	if int32(a[0]) < 0 || addr == 0 || size > 4096 || size < linux.SchedAttrSizeVer0 || a[3] != 0 {
		return 0, unix.EINVAL
	}
	target, err := schedTarget(t, a[0])
	if err != nil {
		return 0, err
	}
	s := target.Sched()
	attr := linux.SchedAttr{Policy: s.Policy, Nice: s.Nice, Priority: s.Priority,
		Runtime: s.Runtime, Deadline: s.Deadline, Period: s.Period, UtilMax: 1024}
	if s.ResetOnFork {
		attr.Flags = kernel.SchedFlagResetOnFork
	}
	b := linux.AsBytes(&attr)
	n := min(int(size), len(b))
	attr.Size = uint32(n)
	return 0, copyOut(t, addr, b[:n])
}

// sysSchedGetPriorityMax implements sched_get_priority_max(2).
func sysSchedGetPriorityMax(t *kernel.Task, a Args) (uint64, error) {
	switch p := uint32(a[0]); {
	case p == kernel.SchedFIFO || p == kernel.SchedRR:
		return kernel.MaxRTPriority, nil
	case validPolicy(p) && int32(a[0]) >= 0:
		return 0, nil
	}
	return 0, unix.EINVAL
}

// sysSchedGetPriorityMin implements sched_get_priority_min(2).
func sysSchedGetPriorityMin(t *kernel.Task, a Args) (uint64, error) {
	switch p := uint32(a[0]); {
	case p == kernel.SchedFIFO || p == kernel.SchedRR:
		return 1, nil
	case validPolicy(p) && int32(a[0]) >= 0:
		return 0, nil
	}
	return 0, unix.EINVAL
}

// sysSchedRrGetInterval implements sched_rr_get_interval(2): SCHED_RR's
// quantum; 0 for FIFO, and for the fair policies, whose slice (0.75 ms)
// Linux rounds down to whole jiffies of 4 ms.
func sysSchedRrGetInterval(t *kernel.Task, a Args) (uint64, error) {
	target, err := schedTarget(t, a[0])
	if err != nil {
		return 0, err
	}
	var slice time.Duration
	if target.Sched().Policy == kernel.SchedRR {
		slice = rrTimeslice
	}
	return 0, copyOutStruct(t, a[1], linux.DurationTimespec(slice))
}

// Linux's PRIO_PROCESS, PRIO_PGRP, PRIO_USER.
const (
	prioProcess = 0
	prioPgrp    = 1
	prioUser    = 2
)

// priorityTargets are the threads setpriority(2) and getpriority(2) name.
func priorityTargets(t *kernel.Task, which, who uint64) ([]*kernel.Task, error) {
	id := int(int32(who))
	var match func(*kernel.Task) bool
	switch which {
	case prioProcess:
		if id == 0 {
			return []*kernel.Task{t}, nil
		}
		if target := t.FindTask(id); target != nil {
			return []*kernel.Task{target}, nil
		}
		return nil, nil
	case prioPgrp:
		if id == 0 {
			id = t.Proc.PGID()
		} else if id = t.Proc.GlobalID(id); id == 0 {
			return nil, nil
		}
		match = func(o *kernel.Task) bool { return o.Proc.PGID() == id }
	case prioUser:
		uid := uint32(who)
		if who == 0 {
			uid = t.Proc.UID
		}
		match = func(o *kernel.Task) bool { return o.Proc.UID == uid }
	default:
		return nil, unix.EINVAL
	}
	var ts []*kernel.Task
	for _, o := range t.Kernel().Tasks() {
		if match(o) {
			ts = append(ts, o)
		}
	}
	return ts, nil
}

// sysSetpriority implements setpriority(2), Linux's set_one_prio for
// each thread named: EPERM for another user's, EACCES for a lower nice
// beyond RLIMIT_NICE, ESRCH when none was named.
func sysSetpriority(t *kernel.Task, a Args) (uint64, error) {
	nice := min(max(int32(a[2]), -20), 19)
	targets, err := priorityTargets(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	err = unix.ESRCH
	for _, o := range targets {
		e := o.SetSched(func(old kernel.SchedAttr) (kernel.SchedAttr, error) {
			if !o.SameOwner(t.Proc) {
				return old, unix.EPERM
			}
			if nice < old.Nice && !t.Proc.CanNice(nice) {
				return old, unix.EACCES
			}
			old.Nice = nice
			return old, nil
		})
		if e != nil {
			err = e
		} else if err == unix.ESRCH {
			err = nil
		}
	}
	return 0, err
}

// sysGetpriority implements getpriority(2): 20 - the lowest nice of the
// threads named (glibc turns it back into a nice value).
func sysGetpriority(t *kernel.Task, a Args) (uint64, error) {
	targets, err := priorityTargets(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	if len(targets) == 0 {
		return 0, unix.ESRCH
	}
	best := int32(0)
	for _, o := range targets {
		best = max(best, 20-o.Sched().Nice)
	}
	return uint64(best), nil
}

// ioprioTargets are the threads ioprio_set(2) and ioprio_get(2) name:
// IOPRIO_WHO_PROCESS, _PGRP and _USER are getpriority's which plus one.
func ioprioTargets(t *kernel.Task, which, who uint64) ([]*kernel.Task, error) {
	if which < 1 || which > 3 {
		return nil, unix.EINVAL
	}
	return priorityTargets(t, which-1, who)
}

// sysIoprioSet implements ioprio_set(2): Linux's ioprio_check_cap on the
// value, then set_task_ioprio on each thread named, stopping at the first
// that refuses (EPERM for another user's without CAP_SYS_NICE).
func sysIoprioSet(t *kernel.Task, a Args) (uint64, error) {
	prio := int32(a[2])
	if prio >= 1<<16 {
		return 0, unix.EINVAL
	}
	level := prio & 7
	switch prio >> 13 & 7 {
	case kernel.IOPrioClassRT:
		if t.Proc.Caps.Effective&(1<<unix.CAP_SYS_NICE|1<<unix.CAP_SYS_ADMIN) == 0 {
			return 0, unix.EPERM
		}
	case kernel.IOPrioClassBE, kernel.IOPrioClassIdle:
	case kernel.IOPrioClassNone:
		if level != 0 {
			return 0, unix.EINVAL
		}
	default:
		return 0, unix.EINVAL
	}
	targets, err := ioprioTargets(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	if len(targets) == 0 {
		return 0, unix.ESRCH
	}
	for _, o := range targets {
		if o.Proc.UID != t.Proc.EUID && o.Proc.UID != t.Proc.UID && t.Proc.Caps.Effective&(1<<unix.CAP_SYS_NICE) == 0 {
			return 0, unix.EPERM
		}
		o.SetIOPrio(uint16(prio))
	}
	return 0, nil
}

// sysIoprioGet implements ioprio_get(2): for one thread the value it was
// set to (0 if none), for a group or a user the best (lowest) effective
// priority of their threads.
func sysIoprioGet(t *kernel.Task, a Args) (uint64, error) {
	targets, err := ioprioTargets(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	if len(targets) == 0 {
		return 0, unix.ESRCH
	}
	if a[0] == 1 {
		return uint64(targets[0].IOPrio()), nil
	}
	best := targets[0].EffectiveIOPrio()
	for _, o := range targets[1:] {
		best = min(best, o.EffectiveIOPrio())
	}
	return uint64(best), nil
}
