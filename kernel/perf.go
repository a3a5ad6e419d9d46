package kernel

import (
	"sync/atomic"

	"github.com/jiege-go/jiege/kernel/perf"
)

// Perf is the kernel's perf events (perf_event_open(2)) and their
// settings, /proc/sys/kernel/perf_event_paranoid and
// perf_event_max_sample_rate.
func (k *Kernel) Perf() *perf.Perf { return k.perf }

// PerfEvents are the task's perf events: those that count it and those
// it opened.
func (t *Task) PerfEvents() *perf.TaskEvents { return &t.perf }

// PerfCounters are what the events counting the task read: its CPU
// time (the cpuClock's exact total), its page faults and its switches.
func (t *Task) PerfCounters() perf.Counters { return taskCounters{t} }

type taskCounters struct{ t *Task }

func (c taskCounters) Time() uint64     { return uint64(c.t.cpu.total()) }
func (c taskCounters) Faults() uint64   { return c.t.minorFaults.Load() }
func (c taskCounters) Switches() uint64 { return c.t.switches.Load() }

// hartCounters are what the CPU-wide events of a hart count: the page
// faults and switches of the tasks that ran on it.
type hartCounters struct {
	faults, switches atomic.Uint64
}

// HartPerfCounters are what a CPU-wide event on hart cpu (below CPUs)
// reads; its clock is the time since boot.
func (k *Kernel) HartPerfCounters(cpu int) perf.Counters { return hartView{k, &k.harts[cpu]} }

type hartView struct {
	k *Kernel
	h *hartCounters
}

func (v hartView) Time() uint64     { return uint64(v.k.Uptime()) }
func (v hartView) Faults() uint64   { return v.h.faults.Load() }
func (v hartView) Switches() uint64 { return v.h.switches.Load() }

// countFault counts a page fault the task took in user mode, for it and
// for the hart it runs on.
func (t *Task) countFault() {
	t.minorFaults.Add(1)
	if h := t.Proc.k.currentCPU(); h < len(t.Proc.k.harts) {
		t.Proc.k.harts[h].faults.Add(1)
	}
}

// countSwitch counts the task giving up the processor, for it and for
// the hart it leaves.
func (t *Task) countSwitch() {
	t.switches.Add(1)
	if h := t.Proc.k.currentCPU(); h < len(t.Proc.k.harts) {
		t.Proc.k.harts[h].switches.Add(1)
	}
}
