package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// Process groups and sessions. init starts in group 0 and session 0, as on
// Linux; children inherit both. The system calls here take and give ids
// as the caller's PID namespace numbers them (pidns.go): a group or
// session whose leader is outside it is 0 there.

// PGID returns the process group id.
func (p *Process) PGID() int {
	p.k.sigMu.Lock()
	defer p.k.sigMu.unlockUnchanged()
	return p.sig.pgid
}

// SID returns the session id.
func (p *Process) SID() int {
	p.k.sigMu.Lock()
	defer p.k.sigMu.unlockUnchanged()
	return p.sig.sid
}

// live returns the processes that have not exited.
func (k *Kernel) live() []*Process {
	var ps []*Process
	for _, p := range k.Processes() {
		select {
		case <-p.exited:
		default:
			ps = append(ps, p)
		}
	}
	return ps
}

// Setsid implements setsid(2): the process leads a new session and group,
// unless some group already has its pid as id.
func (t *Task) Setsid() (int, error) {
	p := t.Proc
	all := t.Proc.k.Processes()
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	for _, q := range all {
		if q.sig.pgid == p.PID {
			return 0, unix.EPERM
		}
	}
	p.sig.pgid, p.sig.sid = p.PID, p.PID
	return p.Getpid(), nil
}

// Setpgid implements setpgid(2): pid (0: the caller) is the caller or a
// child of it in the same session, and not a session leader; pgid (0: its
// pid) is its own pid or a group of the caller's session.
func (t *Task) Setpgid(pid, pgid int) error {
	self := t.Proc
	if pgid < 0 {
		return unix.EINVAL
	}
	target := self
	if pid != 0 {
		target = t.Proc.k.ProcessByID(self.GlobalID(pid))
		if target == nil {
			return unix.ESRCH
		}
	}
	if pgid == 0 {
		pgid = target.PID
	} else if pgid = self.GlobalID(pgid); pgid == 0 {
		return unix.EPERM // no such group here
	}
	all := t.Proc.k.live()
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	if target != self && target.parent != self {
		return unix.ESRCH
	}
	if target.sig.sid != self.sig.sid {
		return unix.EPERM
	}
	if target != self && target.sig.execed {
		return unix.EACCES
	}
	if target.sig.sid == target.PID {
		return unix.EPERM
	}
	if pgid != target.PID {
		exists := false
		for _, q := range all {
			if q.sig.pgid == pgid && q.sig.sid == self.sig.sid {
				exists = true
			}
		}
		if !exists {
			return unix.EPERM
		}
	}
	target.sig.pgid = pgid
	return nil
}

// Getpgid implements getpgid(2) (pid 0: the caller).
func (t *Task) Getpgid(pid int) (int, error) {
	p := t.Proc
	if pid != 0 {
		if p = t.Proc.k.ProcessByID(t.Proc.GlobalID(pid)); p == nil {
			return 0, unix.ESRCH
		}
	}
	return t.Proc.NumberOf(p.PGID()), nil
}

// Getsid implements getsid(2) (pid 0: the caller).
func (t *Task) Getsid(pid int) (int, error) {
	p := t.Proc
	if pid != 0 {
		if p = t.Proc.k.ProcessByID(t.Proc.GlobalID(pid)); p == nil {
			return 0, unix.ESRCH
		}
	}
	return t.Proc.NumberOf(p.SID()), nil
}

// senderInfo is the information of a signal t sends q by kill(2) or
// tgkill(2): t's pid in its own namespace, or 0 when q's namespace does
// not see t, which is then above it (Linux's prepare_kill_siginfo and
// send_signal_locked).
func (t *Task) senderInfo(code int32, q *Process) *SigInfo {
	i := &SigInfo{Code: code, Pid: int32(t.Proc.Getpid()), UID: t.Proc.UID}
	t.fromOutside(i, q)
	return i
}

// fromOutside clears the pid of i, a signal t sends q, when q's namespace
// does not see t, and marks it as from an ancestor namespace.
func (t *Task) fromOutside(i *SigInfo, q *Process) {
	if q.NumberOf(t.Proc.PID) == 0 {
		i.Pid, i.fromAncestor = 0, true
	}
}

// mayKill reports whether the sender may signal q: root, the same user,
// or SIGCONT within the session (kill_ok_by_cred, check_kill_permission),
// unless the sender's Landlock domain scopes signals away from q.
func (t *Task) mayKill(q *Process, sig unix.Signal) bool {
	p := t.Proc
	if p == q {
		return true
	}
	if d := p.landlock.Load(); d != nil && d.Scopes(q.landlock.Load(), fs.LandlockScopeSignal) {
		return false // Landlock's LANDLOCK_SCOPE_SIGNAL, even for root
	}
	if p.EUID == 0 {
		return true
	}
	if p.EUID == q.UID || p.UID == q.UID || p.EUID == q.EUID || p.UID == q.EUID {
		return true
	}
	return sig == unix.SIGCONT && p.SID() == q.SID()
}

// Kill implements kill(2): pid > 0 is one process, 0 the caller's group,
// -1 every process the caller's namespace sees but its init and the
// caller, < -1 the group -pid.
func (t *Task) Kill(pid int, sig unix.Signal) error {
	if sig < 0 || sig > NumSignals {
		return unix.EINVAL
	}
	self := t.Proc
	if pid > 0 {
		q := t.Proc.k.processOfID(self.GlobalID(pid))
		if q == nil {
			return unix.ESRCH
		}
		if !t.mayKill(q, sig) {
			return unix.EPERM
		}
		q.Signal(sig, t.senderInfo(SIUser, q))
		return nil
	}
	t.Proc.k.forkMu.Lock()
	defer t.Proc.k.forkMu.Unlock()
	var targets []*Process
	pgid := t.Proc.PGID()
	if pid < -1 {
		if pgid = self.GlobalID(-pid); pgid == 0 {
			return unix.ESRCH // no such group in the caller's namespace
		}
	}
	for _, q := range t.Proc.k.live() {
		if pid == -1 && self.NumberOf(q.PID) > 1 && q != t.Proc || pid != -1 && q.PGID() == pgid {
			targets = append(targets, q)
		}
	}
	if len(targets) == 0 {
		return unix.ESRCH
	}
	sent := false
	for _, q := range targets {
		if t.mayKill(q, sig) {
			q.Signal(sig, t.senderInfo(SIUser, q))
			sent = true
		}
	}
	if !sent {
		return unix.EPERM
	}
	return nil
}

// processOfID is the process that global id pid names for kill(2) and
// rt_sigqueueinfo(2): the one it leads, or the one whose thread it is,
// as Linux finds any task's pid and signals its thread group.
func (k *Kernel) processOfID(pid int) *Process {
	if p := k.ProcessByID(pid); p != nil {
		return p
	}
	if t := k.TaskByID(pid); t != nil {
		return t.Proc
	}
	return nil
}

// Tgkill implements tgkill(2) (tgid -1: tkill(2)).
func (t *Task) Tgkill(tgid, tid int, sig unix.Signal) error {
	if tid <= 0 || sig < 0 || sig > NumSignals {
		return unix.EINVAL
	}
	target := t.Proc.k.TaskByID(t.Proc.GlobalID(tid))
	if target == nil || tgid != -1 && target.Proc.PID != t.Proc.GlobalID(tgid) {
		return unix.ESRCH
	}
	if !t.mayKill(target.Proc, sig) {
		return unix.EPERM
	}
	return target.SignalThread(sig, t.senderInfo(SITkill, target.Proc))
}

// Queue implements rt_sigqueueinfo(2) and rt_tgsigqueueinfo(2) (tid 0:
// the process): a process may give its own signals any si_code, others
// only negative ones other than SI_TKILL, as from sigqueue(3).
func (t *Task) Queue(tgid, tid int, info SigInfo) error {
	if info.Signo < 0 || info.Signo > NumSignals {
		return unix.EINVAL
	}
	tgid = t.Proc.GlobalID(tgid)
	p := t.Proc.k.ProcessByID(tgid)
	if tid == 0 {
		p = t.Proc.k.processOfID(tgid)
	}
	if p == nil {
		return unix.ESRCH
	}
	var target *Task
	if tid != 0 {
		if target = t.Proc.k.TaskByID(t.Proc.GlobalID(tid)); target == nil || target.Proc != p {
			return unix.ESRCH
		}
	}
	if p != t.Proc && (info.Code >= 0 || info.Code == SITkill) {
		return unix.EPERM
	}
	if !t.mayKill(p, info.Signo) {
		return unix.EPERM
	}
	t.fromOutside(&info, p)
	if target != nil {
		return target.SignalThread(info.Signo, &info)
	}
	return p.Signal(info.Signo, &info)
}

// SignalGroup sends sig, as the kernel, to every process of group pgid:
// a terminal's ^C, ^\ and ^Z.
func (k *Kernel) SignalGroup(pgid int, sig unix.Signal) {
	k.forkMu.Lock()
	defer k.forkMu.Unlock()
	for _, p := range k.Processes() {
		if p.PGID() == pgid {
			p.Signal(sig, nil)
		}
	}
}

// HangUpSession is a terminal's hang-up as session sid sees it: its
// leader, when it lives, gets SIGHUP then SIGCONT (Linux's
// tty_signal_session_leader).
func (k *Kernel) HangUpSession(sid int) {
	if p := k.ProcessByID(sid); p != nil && p.SID() == sid {
		p.Signal(unix.SIGHUP, nil)
		p.Signal(unix.SIGCONT, nil)
	}
}

// GroupInSession reports whether process group pgid has a member in
// session sid (TIOCSPGRP may only name such a group).
func (k *Kernel) GroupInSession(pgid, sid int) bool {
	for _, p := range k.Processes() {
		if p.PGID() == pgid && p.SID() == sid {
			return true
		}
	}
	return false
}
