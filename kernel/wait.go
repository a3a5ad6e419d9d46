package kernel

import (
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// wait4's options.
const (
	WaitNoHang    = 0x1
	WaitUntraced  = 0x2
	WaitContinued = 0x8
)

// Wait implements wait4: it waits for a child to exit (or, with
// WaitUntraced / WaitContinued, to stop or continue) and returns its pid
// and wait status; an exited child is reaped. pid > 0 names the child, -1
// is any child, 0 any in the caller's process group, < -1 any in group
// -pid. With WaitNoHang it returns pid 0 at once when no child changed.
func (t *Task) Wait(pid int, options int) (int, int, error) {
	p := t.Proc
	for {
		p.mu.Lock()
		kids := make([]*Process, 0, len(p.children))
		for _, c := range p.children {
			kids = append(kids, c)
		}
		ev := p.childEvent
		p.mu.Unlock()
		sort.Slice(kids, func(i, j int) bool { return kids[i].PID < kids[j].PID })

		found := false
		for _, c := range kids {
			sigMu.Lock()
			match := pid == -1 || pid > 0 && c.PID == pid || pid == 0 && c.sig.pgid == p.sig.pgid || pid < -1 && c.sig.pgid == -pid
			if !match {
				sigMu.Unlock()
				continue
			}
			found = true
			select {
			case <-c.exited:
				sigMu.Unlock()
				if p.reap(c) {
					return c.PID, c.waitStatus(), nil
				}
				continue
			default:
			}
			if options&WaitUntraced != 0 && c.sig.stopReport != 0 {
				sig := c.sig.stopReport
				c.sig.stopReport = 0
				sigMu.Unlock()
				return c.PID, int(sig)<<8 | 0x7f, nil
			}
			if options&WaitContinued != 0 && c.sig.contReport {
				c.sig.contReport = false
				sigMu.Unlock()
				return c.PID, 0xffff, nil
			}
			sigMu.Unlock()
		}
		if !found {
			return 0, 0, unix.ECHILD
		}
		if options&WaitNoHang != 0 {
			return 0, 0, nil
		}
		if err := t.Block(ev, time.Time{}); err != nil {
			return 0, 0, err
		}
	}
}

// reap removes an exited child, reporting false when another waiter got
// it first.
func (p *Process) reap(c *Process) bool {
	p.mu.Lock()
	_, ok := p.children[c.PID]
	delete(p.children, c.PID)
	p.mu.Unlock()
	if ok {
		removeProcess(c)
	}
	return ok
}

// waitStatus encodes how the process ended as wait(2) reports it: the
// signal that killed it, or its exit code shifted left by 8.
func (p *Process) waitStatus() int {
	if p.sig.termSig != 0 {
		return int(p.sig.termSig)
	}
	return (p.status & 0xff) << 8
}

// notifyExit tells the parent that p exited: SIGCHLD and a wake-up of its
// wait4; a parent that ignores SIGCHLD (or set SA_NOCLDWAIT) never sees
// the child, which is reaped at once.
func (p *Process) notifyExit() {
	sigMu.Lock()
	pp := p.parent
	if pp == nil {
		sigMu.Unlock()
		return
	}
	code, status := int32(CldExited), int32(p.status&0xff)
	if p.sig.termSig != 0 {
		code, status = CldKilled, int32(p.sig.termSig)
	}
	a := pp.sig.actions[unix.SIGCHLD-1]
	autoReap := a.Handler == SigIgnore || a.Flags&SANoCldWait != 0
	if a.Handler != SigIgnore {
		pp.queueSignal(nil, unix.SIGCHLD, &SigInfo{Code: code, Pid: int32(p.PID), UID: p.UID, Status: status})
	}
	sigMu.Unlock()
	if autoReap {
		pp.reap(p)
	}
	pp.wakeWaiters()
}

// reparentChildren gives p's children to init (pid 1), which then waits
// for them.
func (p *Process) reparentChildren() {
	init := ProcessByID(1)
	p.mu.Lock()
	kids := p.children
	if init == nil || init == p || len(kids) == 0 {
		p.mu.Unlock()
		return
	}
	p.children = nil
	p.mu.Unlock()
	sigMu.Lock()
	for _, c := range kids {
		c.parent = init
	}
	sigMu.Unlock()
	init.mu.Lock()
	if init.children == nil {
		init.children = map[int]*Process{}
	}
	for pid, c := range kids {
		init.children[pid] = c
	}
	init.mu.Unlock()
	init.wakeWaiters()
}
