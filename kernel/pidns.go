package kernel

import (
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// PID namespaces (Linux's kernel/pid_namespace.c). They form a tree under
// the kernel's first; a task has a number in its own namespace and in each
// one above it up to the root, whose number is the task's global id:
// Task.TID and Process.PID, by which the kernel's tables know it. System
// calls take and give numbers in the caller's namespace (Process.NumberOf,
// Process.GlobalID). clone(CLONE_NEWPID) makes a namespace whose init is
// the child; unshare(CLONE_NEWPID) and setns make one the namespace the
// caller's next children go into (pid_for_children). A namespace's init
// (pid 1 there) adopts its orphans and ignores the signals it has no
// handler for unless they are SIGKILL or SIGSTOP from an ancestor
// namespace; when it dies the others are killed, no process may enter
// any more (ENOMEM), and its parent hears of it once they are all gone.

// maxPIDNSLevel is how deep namespaces nest (MAX_PID_NS_LEVEL): a new one
// below it is ENOSPC.
const maxPIDNSLevel = 32

// The initial PID and user namespaces' inode numbers (PROC_PID_INIT_INO,
// PROC_USER_INIT_INO), and what a new PID namespace holds of the kernel's
// memory, charged to mm.Charged: its state and a page of its table.
const (
	pidInitIno  = 0xeffffffc
	userInitIno = 0xeffffffd
	pidNSCost   = 512 + mm.PageSize
)

// pidNamespace is one PID namespace.
type pidNamespace struct {
	k      *Kernel
	self   *Namespace // the file-facing namespace: its inode, references
	parent *pidNamespace
	level  int // the root's is 0
	// Guarded by Kernel.pidMu: the last number given out here, whether
	// numbers wrapped past PIDMax (then each is checked for use), and
	// whether its init died (no process enters after: closed).
	last    int
	wrapped bool
	closed  atomic.Bool
	// ids are the numbers given out here (not in the root, whose numbers
	// are the global ids), guarded by Kernel.pidNumsMu; an entry is
	// stale once its global id names another (Kernel.pidNums).
	ids map[int]*pidNumbers
	// init is its first process, pid 1 here, set when it is added
	// (guarded by pidNumsMu); count (guarded by Kernel.tablesMu) counts
	// the tasks and unreaped processes numbered here, which a dead init
	// waits for before its parent hears of it.
	init  *Process
	count int
}

// pidNumbers are a task's numbers: in its namespace and in each above it,
// the root's (the global id) first, as Linux's struct pid.
type pidNumbers struct {
	ns   *pidNamespace
	nums []int
}

// at returns the namespace at level, which n's namespace is or is below.
func (n *pidNamespace) at(level int) *pidNamespace {
	for n.level > level {
		n = n.parent
	}
	return n
}

// contains reports whether n is d or an ancestor of it.
func (n *pidNamespace) contains(d *pidNamespace) bool {
	return d.level >= n.level && d.at(n.level) == n
}

// initPIDNamespace makes the root namespace, whose numbers are the global
// ids.
func (k *Kernel) initPIDNamespace() *Namespace {
	ns := &Namespace{Kind: unix.CLONE_NEWPID, Ino: pidInitIno, pid: &pidNamespace{k: k}}
	ns.pid.self = ns
	return ns
}

// newPIDNamespace makes a namespace below parent: ENOSPC past
// maxPIDNSLevel, ENOMEM when the kernel's budget is spent.
func (k *Kernel) newPIDNamespace(parent *Namespace) (*Namespace, error) {
	level := parent.pid.level + 1
	if level > maxPIDNSLevel {
		return nil, unix.ENOSPC
	}
	if err := mm.Charged.Charge(pidNSCost); err != nil {
		return nil, unix.ENOMEM
	}
	ns := &Namespace{Kind: unix.CLONE_NEWPID, Ino: k.nextNSIno.Add(1), cost: pidNSCost,
		pid: &pidNamespace{k: k, parent: parent.pid, level: level, ids: map[int]*pidNumbers{}}}
	ns.pid.self = ns
	parent.get() // a namespace keeps its parent
	return ns, nil
}

// release is what a PID namespace gives back with its last reference:
// its table, and its hold on its parent.
func (n *pidNamespace) release() {
	n.k.pidNumsMu.Lock()
	n.ids = nil
	n.k.pidNumsMu.Unlock()
	n.parent.self.put()
}

// numbers returns the numbers of global id g (nil when g is in the root
// namespace alone or names nothing).
func (k *Kernel) numbers(g int) *pidNumbers {
	k.pidNumsMu.RLock()
	defer k.pidNumsMu.RUnlock()
	return k.pidNums[g]
}

// numberIn returns global id g's number in n, 0 when g is not seen there
// (Linux's pid_nr_ns).
func (k *Kernel) numberIn(g int, n *pidNamespace) int {
	if n.level == 0 || g <= 0 {
		return g
	}
	r := k.numbers(g)
	if r == nil || !n.contains(r.ns) {
		return 0
	}
	return r.nums[n.level]
}

// globalOf returns the global id of number nr of n, 0 when it names
// nothing there (Linux's find_pid_ns).
func (k *Kernel) globalOf(nr int, n *pidNamespace) int {
	if n.level == 0 || nr <= 0 {
		return nr
	}
	k.pidNumsMu.RLock()
	defer k.pidNumsMu.RUnlock()
	r := n.ids[nr]
	if r == nil || k.pidNums[r.nums[0]] != r {
		return 0
	}
	return r.nums[0]
}

// pidNS is the PID namespace p is in (Linux's task_active_pid_ns).
func (p *Process) pidNS() *pidNamespace { return p.ids.ns }

// NumberOf returns the number global id g has in p's namespace: 0 when g
// is outside it (an ancestor's process).
func (p *Process) NumberOf(g int) int { return p.k.numberIn(g, p.pidNS()) }

// GlobalID returns the global id of number nr of p's namespace, 0 when
// it names nothing there; ids of 0 and below pass through (they name
// groups, or the caller).
func (p *Process) GlobalID(nr int) int { return p.k.globalOf(nr, p.pidNS()) }

// Getpid is p's own number in its namespace.
func (p *Process) Getpid() int { return p.ids.nums[p.ids.ns.level] }

// Gettid is t's own number in its namespace.
func (t *Task) Gettid() int { return t.ids.nums[t.ids.ns.level] }

// isInit reports whether p is a namespace's init: the kernel's first
// process, or the first of a namespace below.
func (p *Process) isInit() bool { return p.PID == 1 || p.initOf != nil }

// allocIDs gives a new task numbers in ns and each namespace above it:
// setTID's, deepest first (clone3's set_tid), else the next free ones.
// As Linux's alloc_pid: more set_tid entries than levels, one outside 1
// to PIDMax-1, or one other than 1 in a namespace without its init are
// EINVAL, any without CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE EPERM, one
// taken EEXIST; none free is EAGAIN, and a namespace whose init died
// ENOMEM.
func (k *Kernel) allocIDs(ns *pidNamespace, setTID []int, caller *Process) (*pidNumbers, error) {
	if len(setTID) > ns.level+1 {
		return nil, unix.EINVAL
	}
	k.pidMu.Lock()
	defer k.pidMu.Unlock()
	nums := make([]int, ns.level+1)
	for n := ns; n != nil; n = n.parent {
		want := 0
		if i := ns.level - n.level; i < len(setTID) {
			want = setTID[i]
			switch {
			case want < 1 || want >= PIDMax, want != 1 && n.level > 0 && n.init == nil:
				return nil, unix.EINVAL
			case caller.Caps.Effective&(1<<unix.CAP_SYS_ADMIN|1<<capCheckpointRestore) == 0:
				return nil, unix.EPERM
			}
		}
		nr, err := k.allocNumber(n, want)
		if err != nil {
			return nil, err
		}
		nums[n.level] = nr
	}
	if ns.closed.Load() {
		return nil, unix.ENOMEM
	}
	r := &pidNumbers{ns: ns, nums: nums}
	k.pidNumsMu.Lock()
	k.pidNums[nums[0]] = r
	for n := ns; n.level > 0; n = n.parent {
		if n.ids != nil {
			n.ids[nums[n.level]] = r
		}
	}
	k.pidNumsMu.Unlock()
	return r, nil
}

// allocNumber gives out a number of n (pidMu held): want, or the one after
// the last given out, wrapping from PIDMax-1 to pidWrapStart (to 1 in a
// namespace that has no init yet).
func (k *Kernel) allocNumber(n *pidNamespace, want int) (int, error) {
	last, wrapped := &n.last, &n.wrapped
	if n.level == 0 {
		l := int(k.lastPID.Load())
		last, wrapped = &l, &k.pidsWrapped
		defer func() { k.lastPID.Store(int64(l)) }()
	} else if n.init == nil {
		*last = 0
	}
	if want != 0 {
		if k.numberInUse(n, want) {
			return 0, unix.EEXIST
		}
		if want > *last {
			*wrapped = true // numbers above the last may be in use now
		}
		return want, nil
	}
	next := *last
	for range PIDMax {
		next++
		if next >= PIDMax {
			next = pidWrapStart
			*wrapped = true
		}
		// Before the first wrap no number above the last is in use.
		if !*wrapped || !k.numberInUse(n, next) {
			*last = next
			return next, nil
		}
	}
	return 0, unix.EAGAIN
}

// numberInUse reports whether nr of n names a task, an unreaped process,
// a process group or a session (pidMu held).
func (k *Kernel) numberInUse(n *pidNamespace, nr int) bool {
	if n.level == 0 {
		return k.pidInUse(nr)
	}
	g := k.globalOf(nr, n)
	return g != 0 && k.pidInUse(g)
}

// registerID counts the new id of r in each of its namespaces and makes
// p, when its number is 1 in its own, that namespace's init (tablesMu
// held).
func (k *Kernel) registerID(r *pidNumbers, p *Process) {
	for n := r.ns; n != nil; n = n.parent {
		n.count++
	}
	r.ns.self.get()
	if p != nil && r.nums[r.ns.level] == 1 {
		k.pidNumsMu.Lock()
		r.ns.init = p
		k.pidNumsMu.Unlock()
		if r.ns.level > 0 {
			p.initOf = r.ns
		}
	}
}

// reaperOf returns the init of n, nil before it has one.
func (k *Kernel) reaperOf(n *pidNamespace) *Process {
	k.pidNumsMu.RLock()
	defer k.pidNumsMu.RUnlock()
	return n.init
}

// releaseID counts r's id out of its namespaces (tablesMu held) and
// returns the init that waited for its namespace to empty, if this was
// the last process there but it.
func (k *Kernel) releaseID(r *pidNumbers) (waiting *Process) {
	for n := r.ns; n != nil; n = n.parent {
		n.count--
		if n.count == 1 && n.level > 0 && n.init != nil && n.init.gone.Load() {
			waiting = n.init
		}
	}
	r.ns.self.put()
	return waiting
}

// othersLeft reports whether init's namespace has no process but it.
func (k *Kernel) othersLeft(init *Process) bool {
	k.tablesMu.RLock()
	defer k.tablesMu.RUnlock()
	return init.initOf.count <= 1
}

// zapPIDNamespace is what the death of n's init (p) does, as Linux's
// zap_pid_ns_processes: no process enters n any more, every other one in
// it or below it is killed, and p, ignoring SIGCHLD, reaps its children
// as they die; its own parent hears of it when they are all gone
// (reportIfDead).
func (k *Kernel) zapPIDNamespace(n *pidNamespace, p *Process) {
	k.pidMu.Lock()
	n.closed.Store(true)
	k.pidMu.Unlock()
	k.sigMu.Lock()
	p.sig.actions[unix.SIGCHLD-1].Handler = SigIgnore
	k.sigMu.Unlock()
	k.forkMu.Lock()
	for _, q := range k.live() {
		if q != p && n.contains(q.pidNS()) {
			q.Signal(unix.SIGKILL, nil)
		}
	}
	k.forkMu.Unlock()
	p.reapDeadChildren()
}

// reapDeadChildren reaps p's children that are dead already: p has exited
// and ignores SIGCHLD, and those that die later are reaped as they do.
func (p *Process) reapDeadChildren() {
	p.mu.Lock()
	kids := make([]*Process, 0, len(p.children))
	for _, c := range p.children {
		kids = append(kids, c)
	}
	p.mu.Unlock()
	for _, c := range kids {
		select {
		case <-c.dead:
			p.reap(c)
		default:
		}
	}
}

// inClosedNamespace reports whether a namespace r is numbered in has lost
// its init: a child forked there while it was being emptied goes too.
func (r *pidNumbers) inClosedNamespace() bool {
	for n := r.ns; n != nil; n = n.parent {
		if n.closed.Load() {
			return true
		}
	}
	return false
}

// PIDParent is NS_GET_PARENT on a PID namespace for t: its parent, if
// that is t's namespace or below it (EPERM otherwise, and for the root),
// as Linux's pidns_get_parent.
func (t *Task) PIDParent(ns *Namespace) (*Namespace, error) {
	parent := ns.pid.parent
	if parent == nil || !t.Proc.pidNS().contains(parent) {
		return nil, unix.EPERM
	}
	return parent.self, nil
}

// FindTask returns the running task that number nr of t's PID namespace
// names, or nil (Linux's find_task_by_vpid).
func (t *Task) FindTask(nr int) *Task { return t.Proc.k.TaskByID(t.Proc.GlobalID(nr)) }

// FindProcess returns the process (exited but not yet reaped included)
// that number nr of t's PID namespace names, or nil.
func (t *Task) FindProcess(nr int) *Process { return t.Proc.k.ProcessByID(t.Proc.GlobalID(nr)) }

// FindTaskOrZombie is TaskOrZombie by a number of t's PID namespace.
func (t *Task) FindTaskOrZombie(nr int) *Task { return t.Proc.k.TaskOrZombie(t.Proc.GlobalID(nr)) }
