package kernel

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel/loader"
)

// Rlimit is one resource limit: the soft limit (Cur) that is enforced and
// the hard limit (Max) the soft one may not exceed.
type Rlimit struct{ Cur, Max uint64 }

// RlimInfinity is RLIM_INFINITY.
const RlimInfinity = ^uint64(0)

// RlimitCount is RLIM_NLIMITS: resources 0 to 15.
const RlimitCount = 16

// initLimits are init's limits, Linux's INIT_RLIMITS; the process and
// pending-signal counts are Linux's for a machine of a few hundred MiB.
func initLimits() [RlimitCount]Rlimit {
	var l [RlimitCount]Rlimit
	for i := range l {
		l[i] = Rlimit{RlimInfinity, RlimInfinity}
	}
	l[unix.RLIMIT_STACK] = Rlimit{loader.StackSize, RlimInfinity}
	l[unix.RLIMIT_CORE] = Rlimit{0, RlimInfinity}
	l[unix.RLIMIT_NPROC] = Rlimit{maxThreads / 2, maxThreads / 2}
	l[unix.RLIMIT_NOFILE] = Rlimit{fs.DefaultFDLimit, fs.MaxFDs}
	l[unix.RLIMIT_MEMLOCK] = Rlimit{8 << 20, 8 << 20}
	l[unix.RLIMIT_SIGPENDING] = Rlimit{maxThreads / 2, maxThreads / 2}
	l[unix.RLIMIT_MSGQUEUE] = Rlimit{819200, 819200}
	l[unix.RLIMIT_NICE] = Rlimit{0, 0}
	l[unix.RLIMIT_RTPRIO] = Rlimit{0, 0}
	return l
}

// maxThreads is the kernel's thread limit (Linux's threads-max).
const maxThreads = 8192

// Limits returns all of the process's limits.
func (p *Process) Limits() [RlimitCount]Rlimit {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limits
}

// Limit returns one limit.
func (p *Process) Limit(resource int) Rlimit {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.limits[resource]
}

// SetLimit changes one of p's limits for the caller, as prlimit64 does:
// EINVAL for a soft limit above the hard one, EPERM for raising the hard
// limit without privileges or RLIMIT_NOFILE past nr_open. It
// returns the old limit. RLIMIT_NOFILE goes to the descriptor table.
func (p *Process) SetLimit(caller *Process, resource int, l Rlimit) (Rlimit, error) {
	old, err := p.setLimit(caller, resource, l)
	if err == nil && resource == unix.RLIMIT_CPU {
		p.watchCPULimit() // without mu: the sampler takes it under its own lock
	}
	return old, err
}

func (p *Process) setLimit(caller *Process, resource int, l Rlimit) (Rlimit, error) {
	if l.Cur > l.Max {
		return Rlimit{}, unix.EINVAL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.limits[resource]
	if l.Max > old.Max && caller.EUID != 0 {
		return old, unix.EPERM
	}
	if resource == unix.RLIMIT_NOFILE {
		if l.Max > uint64(p.k.NrOpen()) {
			return old, unix.EPERM
		}
		if err := p.Files.SetLimit(int(l.Cur)); err != nil {
			return old, err
		}
	}
	p.limits[resource] = l
	return old, nil
}

// MayChangeLimits reports whether caller may read and set p's limits
// (prlimit64 on another process): root, or a caller whose real uid is
// all of p's user ids and whose real gid all of its group ids.
func (caller *Process) MayChangeLimits(p *Process) bool {
	if caller == p || caller.EUID == 0 {
		return true
	}
	u, g := caller.UID, caller.GID
	return p.UID == u && p.EUID == u && p.SUID == u && p.GID == g && p.EGID == g && p.SGID == g
}

// tasksOfUser counts the running tasks (threads included) whose process has
// the real user id uid, as RLIMIT_NPROC counts them, leaving out those of
// the process except (nil: none). A process that has exited counts no
// more: exit_group tells the parent before the task leaves the table, and
// a parent that has reaped its child must not find it counted.
func (k *Kernel) tasksOfUser(uid uint32, except *Process) uint64 {
	k.tablesMu.RLock()
	defer k.tablesMu.RUnlock()
	n := uint64(0)
	for _, t := range k.tasks {
		if t.Proc.UID == uid && t.Proc != except && !t.Proc.gone.Load() {
			n++
		}
	}
	return n
}

// mayAddTask enforces RLIMIT_NPROC at clone: EAGAIN when the caller's user
// already runs that many tasks, unless it is root (by real or effective
// id: Linux exempts INIT_USER and CAP_SYS_RESOURCE).
func (p *Process) mayAddTask() error {
	if p.UID == 0 || p.EUID == 0 {
		return nil
	}
	if p.k.tasksOfUser(p.UID, nil) >= p.Limit(unix.RLIMIT_NPROC).Cur {
		return unix.EAGAIN
	}
	return nil
}

// UserChanged records, after the real uid changed, whether the new user
// was already over RLIMIT_NPROC without the caller: then execve fails with
// EAGAIN while the user still is, as Linux's PF_NPROC_EXCEEDED makes it
// (setuid itself succeeds).
func (p *Process) UserChanged() {
	over := p.UID != 0 && p.k.tasksOfUser(p.UID, p) > p.Limit(unix.RLIMIT_NPROC).Cur
	p.mu.Lock()
	p.nprocExceeded = over
	p.mu.Unlock()
}

// checkNprocAtExec is execve's side of UserChanged.
func (p *Process) checkNprocAtExec() error {
	p.mu.Lock()
	flagged := p.nprocExceeded
	p.mu.Unlock()
	if flagged && p.k.tasksOfUser(p.UID, nil) > p.Limit(unix.RLIMIT_NPROC).Cur {
		return unix.EAGAIN
	}
	p.mu.Lock()
	p.nprocExceeded = false
	p.mu.Unlock()
	return nil
}

// Usage is CPU time spent: in U-mode (User) and in the kernel on the
// process's behalf (System), without the time it waited; and the page
// faults taken (getrusage's ru_minflt).
type Usage struct {
	User, System time.Duration
	MinorFaults  uint64
}

func (u *Usage) add(v Usage) {
	u.User += v.User
	u.System += v.System
	u.MinorFaults += v.MinorFaults
}

// Usage returns the task's own CPU time and faults (RUSAGE_THREAD).
func (t *Task) Usage() Usage {
	user, sys := t.cpu.split(atomic.LoadUint64(&t.Regs.UserTicks), atomic.LoadUint64(&t.Regs.SysTicks))
	return Usage{user, sys, t.minorFaults.Load()}
}

// Usage returns the CPU time of the process's threads, those still
// running and those that have left (RUSAGE_SELF).
func (p *Process) Usage() Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.usage
	for _, t := range tasksOf(p) {
		u.add(t.Usage())
	}
	return u
}

// ChildUsage returns the CPU time of the children that were waited for,
// and of their waited-for descendants (RUSAGE_CHILDREN).
func (p *Process) ChildUsage() Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.childUsage
}

// NrOpen is /proc/sys/fs/nr_open: the most descriptors a table may
// have (fs.MaxFDs unless root lowered it).
func (k *Kernel) NrOpen() int { return int(k.nrOpen.Load()) }

// SetNrOpen sets nr_open: from 64 (a word of descriptors) to fs.MaxFDs,
// EINVAL otherwise (Linux's range goes higher; tables here stop there).
func (k *Kernel) SetNrOpen(n int) error {
	if n < 64 || n > fs.MaxFDs {
		return unix.EINVAL
	}
	k.nrOpen.Store(int64(n))
	return nil
}
