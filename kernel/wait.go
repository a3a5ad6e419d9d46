package kernel

import (
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// wait4's and waitid's options.
const (
	WaitNoHang    = 0x1
	WaitUntraced  = 0x2 // WSTOPPED for waitid
	WaitExited    = 0x4 // implied by wait4
	WaitContinued = 0x8
	WaitNoWait    = 0x01000000 // leave the child waitable
)

// WaitResult is the child a wait found and what happened to it.
type WaitResult struct {
	PID    int
	UID    uint32
	Code   int32 // CLD_EXITED, CLD_KILLED, CLD_DUMPED, CLD_STOPPED, CLD_TRAPPED or CLD_CONTINUED
	Status int32 // the exit code, or the signal
}

// WaitStatus encodes the result as wait4 reports it.
func (r WaitResult) WaitStatus() int {
	switch r.Code {
	case CldExited:
		return int(r.Status&0xff) << 8
	case CldStopped, CldTrapped:
		return int(r.Status)<<8 | 0x7f
	case CldContinued:
		return 0xffff
	case CldDumped:
		return int(r.Status) | 0x80 // WCOREDUMP
	}
	return int(r.Status)
}

// WaitFor says which children a wait is for: any, one by pid, or those
// of a process group.
type WaitFor struct {
	Any  bool
	PID  int
	PGID int // when not Any and PID is 0
}

// WaitForPid decodes wait4's pid, a number of the caller's PID
// namespace: > 0 that child, -1 any, 0 the caller's group, < -1 the group
// -pid.
func (t *Task) WaitForPid(pid int) WaitFor {
	switch {
	case pid == -1:
		return WaitFor{Any: true}
	case pid > 0:
		return WaitFor{PID: t.WaitID(pid)}
	case pid == 0:
		return WaitFor{PGID: t.Proc.PGID()}
	}
	return WaitFor{PGID: t.WaitID(-pid)}
}

// WaitID is the global id of nr, a child or group of the caller's
// namespace that a wait names: -1, which names nothing, when nr does not.
func (t *Task) WaitID(nr int) int {
	if g := t.Proc.GlobalID(nr); g > 0 {
		return g
	}
	return -1
}

func (w WaitFor) matches(c *Process) bool {
	switch {
	case w.Any:
		return true
	case w.PID != 0:
		return c.PID == w.PID
	}
	return c.sig.pgid == w.PGID
}

// Wait implements wait4 and waitid: it waits for a child to exit
// (WaitExited), stop (WaitUntraced) or continue (WaitContinued), and
// reports it; an exited child is reaped unless WaitNoWait. A tracee,
// child or not, is waited for too, and its signal-delivery-stops are
// reported whatever the options. With
// WaitNoHang it returns PID 0 at once when no child changed.
func (t *Task) Wait(which WaitFor, options int) (WaitResult, error) {
	p := t.Proc
	// A signal that ends the wait is checked after one more look: the
	// child whose death sent it (SIGCHLD) is found, as Linux's do_wait
	// looks before it checks for signals.
	var interrupted error
	for {
		p.mu.Lock()
		kids := make([]*Process, 0, len(p.children))
		for _, c := range p.children {
			kids = append(kids, c)
		}
		ev := p.childEvent
		p.mu.Unlock()
		kids = append(kids, p.traceesOf()...)
		sort.Slice(kids, func(i, j int) bool { return kids[i].PID < kids[j].PID })

		found := false
		for _, c := range kids {
			r, state := p.childState(c, which, options)
			switch state {
			case childOther:
				continue
			case childExited:
				found = true
				if options&WaitExited != 0 && (options&WaitNoWait != 0 || p.reap(c) || p.untraceDead(c)) {
					return r, nil
				}
			case childReported:
				return r, nil
			case childUnchanged:
				found = true
			}
		}
		if !found {
			return WaitResult{}, unix.ECHILD
		}
		if options&WaitNoHang != 0 {
			return WaitResult{}, nil
		}
		if interrupted != nil {
			return WaitResult{}, interrupted
		}
		interrupted = t.Block(ev, time.Time{})
	}
}

// What childState found of a child.
type childFound int

const (
	childOther     childFound = iota // not one the wait is for
	childUnchanged                   // one it is for, with nothing to report
	childExited                      // exited: the result says how
	childReported                    // stopped or continued, reported now
)

// childState looks at child c for a wait: whether it is one the wait is
// for, and its exit, or a stop or continue the options ask for (consumed
// unless WaitNoWait).
func (p *Process) childState(c *Process, which WaitFor, options int) (WaitResult, childFound) {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if !which.matches(c) {
		return WaitResult{}, childOther
	}
	r := WaitResult{PID: p.NumberOf(c.PID), UID: c.UID}
	select {
	case <-c.dead:
		r.Code, r.Status = c.exitInfo()
		return r, childExited
	default:
	}
	keep := options&WaitNoWait != 0
	if tr := &c.sig.trace; tr.tracer == p && tr.report != 0 {
		r.Code, r.Status = CldTrapped, int32(tr.report)
		if !keep {
			tr.report = 0
		}
		return r, childReported
	}
	if options&WaitUntraced != 0 && c.sig.stopReport != 0 {
		r.Code, r.Status = CldStopped, int32(c.sig.stopReport)
		if !keep {
			c.sig.stopReport = 0
		}
		return r, childReported
	}
	if options&WaitContinued != 0 && c.sig.contReport {
		r.Code, r.Status = CldContinued, int32(unix.SIGCONT)
		if !keep {
			c.sig.contReport = false
		}
		return r, childReported
	}
	return r, childUnchanged
}

// reap removes an exited child, reporting false when another waiter got
// it first.
func (p *Process) reap(c *Process) bool {
	p.mu.Lock()
	_, ok := p.children[c.PID]
	delete(p.children, c.PID)
	p.mu.Unlock()
	if ok {
		p.untraceDead(c)
		p.k.removeProcess(c)
		c.notifyPidFDs()
		u, cu := c.Usage(), c.ChildUsage()
		p.mu.Lock()
		p.childUsage.add(u)
		p.childUsage.add(cu)
		p.mu.Unlock()
	}
	return ok
}

// notifyExit tells the parent that p exited: SIGCHLD and a wake-up of its
// wait4; a parent that ignores SIGCHLD (or set SA_NOCLDWAIT) never sees
// the child, which is reaped at once.
func (p *Process) notifyExit() {
	p.notifyTracerOfExit()
	pp, autoReap := p.signalExit()
	if pp == nil {
		return
	}
	if autoReap {
		pp.reap(p)
	}
	pp.wakeWaiters()
}

// signalExit sends the parent the exit's signal and reports the parent
// (nil: none) and whether the child is reaped at once.
func (p *Process) signalExit() (*Process, bool) {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	pp := p.parent
	if pp == nil {
		return nil, false
	}
	code, status := p.exitInfo()
	a := pp.sig.actions[unix.SIGCHLD-1]
	autoReap := a.Handler == SigIgnore || a.Flags&SANoCldWait != 0
	info := &SigInfo{Code: code, Pid: int32(pp.NumberOf(p.PID)), UID: p.UID, Status: status}
	switch exitSig := unix.Signal(p.ExitSignal); {
	case exitSig == unix.SIGCHLD:
		if a.Handler != SigIgnore {
			pp.queueSignal(nil, unix.SIGCHLD, info)
		}
	case exitSig != 0: // clone's exit signal: no auto-reaping, as on Linux
		autoReap = false
		pp.queueSignal(nil, exitSig, info)
	}
	return pp, autoReap
}

// exitInfo is how p ended, as SIGCHLD's si_code and si_status say it
// (sigMu held).
func (p *Process) exitInfo() (code, status int32) {
	if p.sig.termSig == 0 {
		return CldExited, int32(p.status & 0xff)
	}
	if p.sig.coreDumped {
		return CldDumped, int32(p.sig.termSig)
	}
	return CldKilled, int32(p.sig.termSig)
}

// adoptIfOrphaned hands p to its parent's reaper when the parent has
// exited already, as the parent's exit would have.
func (p *Process) adoptIfOrphaned() {
	pp := p.Parent()
	if pp == nil {
		return
	}
	select {
	case <-pp.exited:
		pp.reparentChildren()
	default:
	}
}

// reparentChildren gives p's children to their new parent, which then
// waits for them: the nearest living ancestor in p's PID namespace that
// is a child subreaper (PR_SET_CHILD_SUBREAPER), else the namespace's
// init, as Linux's find_new_reaper. All under sigMu, which guards the
// parent links, so that a reaper exiting meanwhile hands them on in turn.
// A dead init, which its namespace's death makes ignore SIGCHLD, reaps
// the dead ones at once.
func (p *Process) reparentChildren() {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	ns := p.pidNS()
	reaper := p.k.reaperOf(ns)
	for a := p.parent; a != nil && a.pidNS().level == ns.level; a = a.parent {
		if a.ChildSubreaper.Load() && !a.gone.Load() {
			reaper = a
			break
		}
	}
	p.mu.Lock()
	kids := p.children
	if reaper == nil || reaper == p || len(kids) == 0 {
		p.mu.Unlock()
		return
	}
	p.children = nil
	p.mu.Unlock()
	for _, c := range kids {
		c.parent = reaper
		c.parentPID.Store(int64(reaper.PID))
	}
	reaper.mu.Lock()
	if reaper.children == nil {
		reaper.children = map[int]*Process{}
	}
	for pid, c := range kids {
		reaper.children[pid] = c
	}
	reaper.mu.Unlock()
	reaper.wakeWaiters()
	if reaper.gone.Load() {
		go reaper.reapDeadChildren() // reap takes sigMu
	}
}
