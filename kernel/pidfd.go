package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// PidFD is a pidfd (pidfd_open, CLONE_PIDFD): a file naming a process,
// readable to poll once the process has exited, which pidfd_send_signal,
// pidfd_getfd and waitid(P_PIDFD) act on.
type PidFD struct {
	proc *Process
	ino  uint64
}

// Process is the process the pidfd names.
func (f *PidFD) Process() *Process { return f.proc }

func (f *PidFD) ReadTo(fs.UserIO) (int64, error)    { return 0, unix.EINVAL }
func (f *PidFD) WriteFrom(fs.UserIO) (int64, error) { return 0, unix.EINVAL }
func (f *PidFD) Stat() fs.Stat                      { return fs.AnonStat(f.ino) }
func (f *PidFD) Close() error                       { return nil }

// Readiness: readable once the process has exited, and hung up too once
// it is reaped, as Linux's pidfd_poll.
func (f *PidFD) Readiness(mask uint32) uint32 {
	switch {
	case f.proc.Reaped():
		return (unix.EPOLLIN | unix.EPOLLRDNORM | unix.EPOLLHUP) & mask
	case f.proc.gone.Load():
		return (unix.EPOLLIN | unix.EPOLLRDNORM) & mask
	}
	return 0
}

// notifyPidFDs wakes the pollers of p's pidfds: p exited or was reaped.
func (p *Process) notifyPidFDs() {
	p.mu.Lock()
	watchers := p.exitWatchers.Changed()
	p.mu.Unlock()
	fs.Notify(watchers)
}

// Watch calls notify when the process exits.
func (f *PidFD) Watch(notify func()) func() {
	return f.proc.exitWatchers.Watch(&f.proc.mu, notify)
}

// OpenPidFD is pidfd_open(2)'s lookup: a pidfd of the process whose
// thread-group leader is pid in t's namespace (ESRCH: none or reaped;
// ENOENT: pid is a thread that leads no group).
func (t *Task) OpenPidFD(pid int) (*PidFD, error) {
	k, g := t.Proc.k, t.Proc.GlobalID(pid)
	p := k.ProcessByID(g)
	if p == nil {
		if k.TaskByID(g) != nil {
			return nil, unix.ENOENT
		}
		return nil, unix.ESRCH
	}
	return p.NewPidFD(), nil
}

// NewPidFD makes a pidfd naming p.
func (p *Process) NewPidFD() *PidFD { return &PidFD{proc: p, ino: fs.NewAnonIno()} }

// Gone reports whether p has exited.
func (p *Process) Gone() bool { return p.gone.Load() }

// Reaped reports whether p's parent has reaped it (or it never had one
// to wait for it, and has exited): its pid names nothing any more.
func (p *Process) Reaped() bool { return p.gone.Load() && p.k.ProcessByID(p.PID) != p }

// SignalPidFD implements pidfd_send_signal(2) on process q: as kill(2),
// or with info as rt_sigqueueinfo(2) (nil: SI_USER from the caller).
func (t *Task) SignalPidFD(q *Process, sig unix.Signal, info *SigInfo) error {
	if sig < 0 || sig > NumSignals {
		return unix.EINVAL
	}
	if q.Reaped() {
		return unix.ESRCH
	}
	if info == nil {
		info = t.senderInfo(SIUser, q)
	} else if q != t.Proc && (info.Code >= 0 || info.Code == SITkill) {
		return unix.EPERM
	} else {
		t.fromOutside(info, q)
	}
	if !t.mayKill(q, sig) {
		return unix.EPERM
	}
	if sig != 0 {
		return q.Signal(sig, info)
	}
	return nil
}

// MayPtrace reports whether t may attach to q (Linux's
// PTRACE_MODE_ATTACH_REALCREDS: pidfd_getfd's and process_vm_readv's
// check): root, or the same real, effective and saved ids and q dumpable.
func (t *Task) MayPtrace(q *Process) bool {
	p := t.Proc
	if p == q || p.EUID == 0 {
		return true
	}
	return p.UID == q.UID && p.UID == q.EUID && p.UID == q.SUID &&
		p.GID == q.GID && p.GID == q.EGID && p.GID == q.SGID &&
		!q.Settings.NotDumpable.Load()
}
