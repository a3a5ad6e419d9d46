package perf

import (
	"slices"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// Inheritance is what a forking task's events give its child: the
// events to copy, charged before the child exists so that a fork
// without the memory fails whole (ENOMEM), as Linux's
// perf_event_init_task fails copy_process.
type Inheritance struct {
	p      *Perf
	events []*Event // of the forking task, leaders before their members
}

// Inherit lists the events of a forking task that its child inherits:
// those with inherit (and, but for a thread, without inherit_thread),
// by their group leader's attribute, as a group goes whole.
func (p *Perf) Inherit(parent *TaskEvents, thread bool) (*Inheritance, error) {
	p.mu.Lock()
	var events []*Event
	for _, e := range parent.attached {
		f := e.leader.attr.Flags
		if f&linux.PerfAttrInherit != 0 && (thread || f&linux.PerfAttrInheritThread == 0) {
			events = append(events, e)
		}
	}
	p.mu.Unlock()
	if len(events) == 0 {
		return nil, nil
	}
	if mm.Charged.Charge(len(events)*eventCharge) != nil {
		return nil, unix.ENOMEM
	}
	return &Inheritance{p: p, events: events}, nil
}

// Release gives back the charge of an inheritance the fork did not use.
func (in *Inheritance) Release() {
	if in != nil {
		mm.Charged.Uncharge(len(in.events) * eventCharge)
	}
}

// Attach gives the child its copies of the inherited events, counting
// from src, each on or off as its original is now, in groups as theirs.
// An event closed or detached since Inherit is not copied.
func (in *Inheritance) Attach(child *TaskEvents, src Counters) {
	if in == nil {
		return
	}
	p := in.p
	p.mu.Lock()
	defer p.mu.Unlock()
	copies := map[*Event]*Event{}
	for _, e := range in.events {
		if e.closed || e.detached {
			mm.Charged.Uncharge(eventCharge)
			continue
		}
		top := e
		if e.parent != nil {
			top = e.parent
		}
		c := &Event{p: p, attr: e.attr, id: p.ids.Add(1), ino: e.ino, what: e.what, src: src, task: child, cpu: e.cpu,
			enableOnExec: e.enableOnExec, enabled: e.enabled, parent: top}
		c.leader = c
		if l, ok := copies[e.leader]; ok && e.leader != e {
			c.leader = l
			l.siblings = append(l.siblings, c)
		}
		copies[e] = c
		top.children = append(top.children, c)
		child.attached = append(child.attached, c)
		c.refresh()
	}
}

// Exec does what an execve does to the task's events: it enables those
// with enable_on_exec (once), and ends the counting of those with
// remove_on_exec.
func (p *Perf) Exec(te *TaskEvents) {
	p.mu.Lock()
	defer p.mu.Unlock()
	te.attached = slices.DeleteFunc(te.attached, func(e *Event) bool {
		if e.attr.Flags&linux.PerfAttrRemoveOnExec != 0 {
			e.detached = true
			e.detach()
			return true
		}
		if e.enableOnExec {
			e.enableOnExec = false
			if !e.enabled {
				e.enabled = true
				e.refresh()
			}
		}
		return false
	})
}

// Exit ends the counting of a task's events as it exits (their counts
// then stay what they were; copies give theirs to their descriptors'
// events), and forgets the events it opened.
func (p *Perf) Exit(te *TaskEvents) {
	p.mu.Lock()
	defer p.mu.Unlock()
	te.gone = true
	for _, e := range te.attached {
		e.detached = true // first, so that no member of a group restarts
	}
	for _, e := range te.attached {
		e.detach()
	}
	te.attached = nil
	for _, e := range te.owned {
		e.owner = nil
	}
	te.owned = nil
}

// SetOwnedEnabled turns on or off every event the task opened, with
// their copies: prctl's PR_TASK_PERF_EVENTS_ENABLE and _DISABLE.
func (p *Perf) SetOwnedEnabled(te *TaskEvents, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range te.owned {
		e.setEnabled(on)
	}
}
