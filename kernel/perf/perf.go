// Package perf is perf_event_open(2)'s software events: counters of a
// task's or a hart's running time, page faults and context switches, each
// an Event that a descriptor holds ("anon_inode:[perf_event]"). An event
// reads what it counts from Counters, running totals its task or hart
// keeps anyway, at the moments it starts and stops counting: counting
// adds nothing to the paths that switch and fault. Package kernel
// attaches events to its tasks (TaskEvents) and calls Inherit at fork,
// Exec at execve and Exit when a task ends.
//
// There is no PMU: hardware, cache and raw events are ENOENT, as on a
// Linux without one. Events count; they do not sample (no ring buffer,
// no overflow), so a sampling event is EOPNOTSUPP, Linux's answer for a
// PMU that cannot interrupt.
package perf

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Perf is a kernel's perf events: the lock over every event's state, the
// event ids, and /proc/sys/kernel's perf_event_paranoid and
// perf_event_max_sample_rate.
type Perf struct {
	// mu guards the state of every event (groups, inherited copies,
	// counts) and the lists of TaskEvents. It comes before the locks the
	// Counters take.
	mu            sync.Mutex
	ids           atomic.Uint64
	paranoid      atomic.Int32
	maxSampleRate atomic.Int32
}

// Debian's perf_event_paranoid: 3 (CONFIG_SECURITY_PERF_EVENTS_RESTRICT)
// refuses every unprivileged use; Linux's own default is 2. Linux's
// perf_event_max_sample_rate starts at 100000 (DEFAULT_MAX_SAMPLE_RATE).
const (
	defaultParanoid      = 3
	defaultMaxSampleRate = 100000
)

// New makes a kernel's perf events.
func New() *Perf {
	p := &Perf{}
	p.paranoid.Store(defaultParanoid)
	p.maxSampleRate.Store(defaultMaxSampleRate)
	return p
}

// Paranoid is /proc/sys/kernel/perf_event_paranoid: what users without
// CAP_PERFMON (or CAP_SYS_ADMIN) may observe. 3 and above: nothing; 2:
// their own tasks in user mode; 1: in kernel mode too; 0 and below:
// harts too (CPU-wide events).
func (p *Perf) Paranoid() string { return strconv.Itoa(int(p.paranoid.Load())) }

// SetParanoid sets it from what root wrote: any int (proc_dointvec).
func (p *Perf) SetParanoid(b []byte) error {
	n, err := parseInt32(b)
	if err != nil {
		return err
	}
	p.paranoid.Store(n)
	return nil
}

// MaxSampleRate is /proc/sys/kernel/perf_event_max_sample_rate, the
// highest sample_freq an event may ask for.
func (p *Perf) MaxSampleRate() string { return strconv.Itoa(int(p.maxSampleRate.Load())) }

// SetMaxSampleRate sets it from what root wrote: at least 1.
func (p *Perf) SetMaxSampleRate(b []byte) error {
	n, err := parseInt32(b)
	if err != nil || n < 1 {
		return unix.EINVAL
	}
	p.maxSampleRate.Store(n)
	return nil
}

// parseInt32 reads a setting as proc_dointvec does: one int, spaces
// around it; EINVAL otherwise.
func parseInt32(b []byte) (int32, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return 0, unix.EINVAL
	}
	return int32(n), nil
}

// Counters are the running totals an event counts from: a task's, or a
// hart's for a CPU-wide event. They only grow, and stop growing when the
// task has exited.
type Counters interface {
	// Time is the events' clock in ns: the task's CPU time, or the
	// time since boot for a hart (its clocks count idle time too).
	Time() uint64
	// Faults are the page faults taken in user mode.
	Faults() uint64
	// Switches are the times the task gave up the processor (a hart:
	// the times a task left it): each wait and each preemption.
	Switches() uint64
}

// TaskEvents are the events of one task: those that count it, and those
// it opened (which prctl's PR_TASK_PERF_EVENTS_ENABLE and _DISABLE turn
// on and off). The kernel keeps one in each Task; Perf.mu guards it.
type TaskEvents struct {
	attached []*Event
	owned    []*Event
	gone     bool // the task exited: nothing attaches any more
}
