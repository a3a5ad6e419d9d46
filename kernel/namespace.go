package kernel

import (
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel/ipc"
	"github.com/jiege-go/jiege/mm"
)

// Namespaces. A process is in one namespace of each kind the kernel
// implements: mount (the mounts its walks see, fs.MountNS), UTS (the host
// and domain names), IPC (System V objects and POSIX message queues), time
// (offsets of the monotonic and boot-time clocks, timens.go) and PID
// (pidns.go), as Linux's nsproxy holds them. clone(2) and unshare(2) make
// new ones with CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWTIME and
// CLONE_NEWPID; setns(2) enters one that a /proc/PID/ns file names. The
// other kinds (network, user, cgroup) have the one instance, and asking
// for another is EINVAL, as Linux built without them answers: every
// socket and id would need translating. The one user namespace has a
// file (/proc/PID/ns/user) that owns every other namespace.

// Namespace is one namespace: its kind (the CLONE_NEW* flag), the inode
// number /proc/PID/ns shows, and its state.
type Namespace struct {
	Kind int
	Ino  uint64
	// mounts is a mount namespace's (Kind CLONE_NEWNS) in tree, nil for
	// the initial one (the tree's own, which a nil fs.Cred walks in).
	mounts *fs.MountNS
	tree   *fs.Tree
	uts    *utsNames      // Kind CLONE_NEWUTS
	ipc    *ipc.Namespace // Kind CLONE_NEWIPC
	time   *timeNamespace // Kind CLONE_NEWTIME
	pid    *pidNamespace  // Kind CLONE_NEWPID
	// refs counts the processes in it and the files open on it; when the
	// last is gone a new namespace gives back what it holds: an IPC
	// namespace's objects go, as Linux's free_ipc_ns.
	refs atomic.Int64
	// cost is what it charged to mm.Charged.
	cost int
}

// The initial namespaces' inode numbers (Linux's PROC_*_INIT_INO), and
// the first one new namespaces get (PROC_DYNAMIC_FIRST), which the
// initial mount namespace takes, as Linux's has no fixed one.
const (
	timeInitIno  = 0xeffffffa
	utsInitIno   = 0xeffffffe
	ipcInitIno   = 0xefffffff
	firstDynaIno = 0xf0000000
)

// What a new namespace holds of the kernel's memory, roughly, charged to
// mm.Charged: its names, its tables, its clock offsets and vDSO data page.
const (
	mntCost  = 4096
	utsCost  = 512
	ipcCost  = 4096
	timeCost = 512 + mm.PageSize
)

// namespaces are the namespaces a process is in. A process's set is
// replaced whole (Process.ns), never changed in place.
type namespaces struct {
	mnt, uts, ipc *Namespace
	// time is the time namespace the process reads clocks in, and
	// timeForChildren the one its children and its next execve enter
	// (they differ after unshare(CLONE_NEWTIME)).
	time, timeForChildren *Namespace
	// pidForChildren is the PID namespace its children go into: its own
	// (pidNumbers.ns) until unshare(CLONE_NEWPID) or setns.
	pidForChildren *Namespace
}

// of returns the kind's namespace in s.
func (s *namespaces) of(kind int) *Namespace {
	switch kind {
	case unix.CLONE_NEWNS:
		return s.mnt
	case unix.CLONE_NEWUTS:
		return s.uts
	case unix.CLONE_NEWIPC:
		return s.ipc
	case unix.CLONE_NEWTIME:
		return s.time
	case unix.CLONE_NEWPID:
		return s.pidForChildren
	}
	return nil
}

// initNamespaces makes the kernel's first namespaces, which init joins.
func (k *Kernel) initNamespaces() *namespaces {
	k.nextNSIno.Store(firstDynaIno - 1)
	time := &Namespace{Kind: unix.CLONE_NEWTIME, Ino: timeInitIno, time: &timeNamespace{vdso: k.vdso, frozen: true}}
	return &namespaces{
		mnt:  &Namespace{Kind: unix.CLONE_NEWNS, Ino: k.nextNSIno.Add(1)},
		uts:  &Namespace{Kind: unix.CLONE_NEWUTS, Ino: utsInitIno, uts: &k.uts},
		ipc:  &Namespace{Kind: unix.CLONE_NEWIPC, Ino: ipcInitIno, ipc: k.ipc},
		time: time, timeForChildren: time,
		pidForChildren: k.initPIDNamespace(),
	}
}

// newNamespace makes a namespace of a kind, copying the mounts of from
// in tree as Linux's copy_mnt_ns does and its UTS names as clone_uts_ns;
// an IPC namespace starts empty, a time namespace with no offsets.
// ENOMEM when the kernel's budget for what programs make is spent.
func (k *Kernel) newNamespace(kind int, from *Namespace, tree *fs.Tree) (*Namespace, error) {
	n := &Namespace{Kind: kind}
	switch kind {
	case unix.CLONE_NEWNS:
		n.cost = mntCost
	case unix.CLONE_NEWUTS:
		host, domain := from.uts.names()
		n.uts, n.cost = &utsNames{host: host, domain: domain, hostSet: true, domSet: true}, utsCost
	case unix.CLONE_NEWIPC:
		n.ipc, n.cost = ipc.NewNamespace(k.userMemory, k.Now), ipcCost
	case unix.CLONE_NEWTIME:
		n.time, n.cost = &timeNamespace{vdso: k.vdso}, timeCost
	case unix.CLONE_NEWPID:
		return k.newPIDNamespace(from)
	}
	if err := mm.Charged.Charge(n.cost); err != nil {
		return nil, unix.ENOMEM
	}
	if kind == unix.CLONE_NEWNS {
		n.mounts, n.tree = tree.CopyMounts(from.mounts), tree
	}
	n.Ino = k.nextNSIno.Add(1)
	return n, nil
}

// join counts a process into each of s's namespaces.
func (s *namespaces) join() {
	s.mnt.get()
	s.uts.get()
	s.ipc.get()
	s.time.get()
	s.timeForChildren.get()
	s.pidForChildren.get()
}

// leave counts process pid out of s's namespaces, as it moves into next
// (nil: it exits). Leaving an IPC namespace applies the semaphore
// adjustments pid made in it (exit_sem).
func (s *namespaces) leave(pid int, next *namespaces) {
	if next == nil || next.ipc != s.ipc {
		s.ipc.ipc.ExitProcess(pid)
	}
	s.mnt.put()
	s.uts.put()
	s.ipc.put()
	s.time.put()
	s.timeForChildren.put()
	s.pidForChildren.put()
}

func (n *Namespace) get() { n.refs.Add(1) }

// put drops a reference; with the last, a new namespace gives back what
// it holds.
func (n *Namespace) put() {
	if n.refs.Add(-1) != 0 || n.Ino < firstDynaIno {
		return
	}
	switch {
	case n.mounts != nil:
		n.tree.ReleaseMounts(n.mounts)
	case n.ipc != nil:
		n.ipc.Destroy()
	case n.time != nil:
		n.time.release()
	case n.pid != nil:
		n.pid.release()
	}
	mm.Charged.Uncharge(n.cost)
}

// FileOpened and FileClosed count an open /proc/PID/ns file, which keeps
// the namespace (fs.OpenCounter).
func (n *Namespace) FileOpened() { n.get() }
func (n *Namespace) FileClosed() { n.put() }

// Namespace returns the namespace of a kind p is in (nil for a kind the
// kernel has no namespaces of).
func (p *Process) Namespace(kind int) *Namespace { return p.ns.Load().of(kind) }

// MountNS is the mount namespace p's walks see (nil: the tree's
// initial one).
func (p *Process) MountNS() *fs.MountNS { return p.ns.Load().mnt.mounts }

// MountNS is the mount namespace of t's process, for the files whose
// contents depend on it (/proc/mounts).
func (t *Task) MountNS() *fs.MountNS { return t.Proc.MountNS() }

// TimeForChildren returns the time namespace p's children enter.
func (p *Process) TimeForChildren() *Namespace { return p.ns.Load().timeForChildren }

// IPC returns the IPC namespace t's process is in.
func (t *Task) IPC() *ipc.Namespace { return t.Proc.ns.Load().ipc.ipc }

// UTSNames returns the host and domain names of t's UTS namespace.
func (t *Task) UTSNames() (host, domain string) { return t.Proc.ns.Load().uts.uts.names() }

// SetHostname sets the host name of t's UTS namespace (at most 64 bytes,
// the caller checked).
func (t *Task) SetHostname(name string) { t.Proc.ns.Load().uts.uts.setHost(name) }

// SetDomainname sets the NIS domain name of t's UTS namespace.
func (t *Task) SetDomainname(name string) { t.Proc.ns.Load().uts.uts.setDomain(name) }

// replaceNamespaces moves p into s (joined already) out of its own; a
// process that has exited left its namespaces for good, and leaves s.
func (p *Process) replaceNamespaces(s *namespaces) {
	p.nsMu.Lock()
	defer p.nsMu.Unlock()
	if p.nsLeft {
		s.leave(p.PID, nil)
		return
	}
	p.ns.Swap(s).leave(p.PID, s)
}

// leaveNamespaces counts p out of its namespaces as it exits.
func (p *Process) leaveNamespaces() {
	p.nsMu.Lock()
	defer p.nsMu.Unlock()
	p.nsLeft = true
	p.ns.Load().leave(p.PID, nil)
}

// newNamespaces returns from with new namespaces of the kinds flags name
// (new time and PID namespaces are for children), not joined yet. A new
// PID namespace goes below p's own, and is EINVAL once p's children go
// into another (Linux's copy_pid_ns).
func (p *Process) newNamespaces(from *namespaces, flags uint64) (*namespaces, error) {
	if flags&unix.CLONE_NEWPID != 0 && from.pidForChildren.pid != p.pidNS() {
		return nil, unix.EINVAL
	}
	s := *from
	for _, kind := range []int{unix.CLONE_NEWNS, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWTIME, unix.CLONE_NEWPID} {
		if flags&uint64(kind) == 0 {
			continue
		}
		n, err := p.k.newNamespace(kind, from.of(kind), p.Root)
		if err != nil {
			for _, made := range []*Namespace{s.mnt, s.uts, s.ipc, s.timeForChildren, s.pidForChildren} {
				if made != from.mnt && made != from.uts && made != from.ipc && made != from.timeForChildren && made != from.pidForChildren {
					made.get()
					made.put()
				}
			}
			return nil, err
		}
		switch kind {
		case unix.CLONE_NEWNS:
			s.mnt = n
		case unix.CLONE_NEWUTS:
			s.uts = n
		case unix.CLONE_NEWIPC:
			s.ipc = n
		case unix.CLONE_NEWTIME:
			s.timeForChildren = n
		case unix.CLONE_NEWPID:
			s.pidForChildren = n
		}
	}
	return &s, nil
}

// unshareNamespaces moves p into new namespaces of the kinds flags name
// (CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC; CLONE_NEWTIME for its
// children).
func (p *Process) unshareNamespaces(flags uint64) error {
	s, err := p.newNamespaces(p.ns.Load(), flags)
	if err != nil {
		return err
	}
	s.join()
	p.replaceNamespaces(s)
	return nil
}

// childNamespaces returns the namespaces a new child of p is in, joined:
// p's, or new ones of the kinds the clone flags name. A child that does
// not share p's memory enters the time namespace for p's children, whose
// vDSO data page its address space as then maps (Linux's
// timens_on_fork).
func (p *Process) childNamespaces(flags uint64, as *mm.AddressSpace) (*namespaces, error) {
	s, err := p.newNamespaces(p.ns.Load(), flags)
	if err != nil {
		return nil, err
	}
	s.join()
	if flags&unix.CLONE_VM == 0 && s.time != s.timeForChildren {
		s.time.put()
		s.time = s.timeForChildren
		s.time.get()
		if err := s.time.time.enter(p.k, as); err != nil {
			s.leave(0, nil)
			return nil, err
		}
	}
	return s, nil
}

// The namespaces clone(2) and unshare(2) can make.
const newNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWTIME | unix.CLONE_NEWPID

// mayCloneNamespaces checks clone's namespace flags as Linux's
// copy_namespaces: a new user namespace is EINVAL (there is one), any
// other EPERM without CAP_SYS_ADMIN, a new IPC namespace with
// CLONE_SYSVSEM or any in a new thread EINVAL, and kinds with one
// instance EINVAL.
func (p *Process) mayCloneNamespaces(flags uint64) error {
	switch ns := flags & namespaceFlags; {
	case ns == 0:
		return nil
	case ns&unix.CLONE_NEWUSER != 0:
		return unix.EINVAL
	case p.Caps.Effective&(1<<unix.CAP_SYS_ADMIN) == 0:
		return unix.EPERM
	case flags&(unix.CLONE_NEWIPC|unix.CLONE_SYSVSEM) == unix.CLONE_NEWIPC|unix.CLONE_SYSVSEM,
		flags&unix.CLONE_THREAD != 0, ns&^newNamespaceFlags != 0:
		return unix.EINVAL
	}
	return nil
}

// Setns implements setns(2) for a namespace that an open /proc/PID/ns
// file names: kind 0 or the namespace's own (EINVAL otherwise), with
// CAP_SYS_ADMIN (EPERM); a time namespace only for a process of one
// thread (EUSERS), which enters it at once, with its children; a mount
// namespace also with CAP_SYS_CHROOT (EPERM) and only for a process
// whose root and working directory no other thread or process shares
// (EINVAL), which start at the namespace's root, as Linux's
// mntns_install; a PID namespace, the caller's or one below it (EINVAL
// otherwise, as Linux's pidns_install), for its children; the one user
// namespace, which the caller is in already, EINVAL as Linux's
// userns_install.
func (t *Task) Setns(n *Namespace, kind int) error {
	if kind != 0 && kind != n.Kind {
		return unix.EINVAL
	}
	p := t.Proc
	if n.Kind == unix.CLONE_NEWTIME && len(tasksOf(p)) > 1 {
		return unix.EUSERS
	}
	if n.Kind == unix.CLONE_NEWUSER {
		return unix.EINVAL
	}
	if p.Caps.Effective&(1<<unix.CAP_SYS_ADMIN) == 0 ||
		n.Kind == unix.CLONE_NEWNS && p.Caps.Effective&(1<<unix.CAP_SYS_CHROOT) == 0 {
		return unix.EPERM
	}
	if n.Kind == unix.CLONE_NEWNS && p.sharesFS() {
		return unix.EINVAL
	}
	if n.Kind == unix.CLONE_NEWPID && !p.pidNS().contains(n.pid) {
		return unix.EINVAL
	}
	s := *p.ns.Load()
	switch n.Kind {
	case unix.CLONE_NEWNS:
		s.mnt = n
		p.SetRootDir("/")
		p.SetCwd("/")
	case unix.CLONE_NEWUTS:
		s.uts = n
	case unix.CLONE_NEWIPC:
		s.ipc = n
	case unix.CLONE_NEWTIME:
		p.Lock()
		err := n.time.enter(p.k, p.AS)
		p.Unlock()
		if err != nil {
			return err
		}
		s.time, s.timeForChildren = n, n
	case unix.CLONE_NEWPID:
		s.pidForChildren = n
	}
	s.join()
	p.replaceNamespaces(&s)
	return nil
}

// names returns u's host and domain names.
func (u *utsNames) names() (host, domain string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	host, domain = Hostname, Domainname
	if u.hostSet {
		host = u.host
	}
	if u.domSet {
		domain = u.domain
	}
	return host, domain
}

func (u *utsNames) setHost(name string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.host, u.hostSet = name, true
}

func (u *utsNames) setDomain(name string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.domain, u.domSet = name, true
}

// KindName is the name of n's kind, as its /proc/PID/ns link has it.
func (n *Namespace) KindName() string {
	return map[int]string{unix.CLONE_NEWNS: "mnt", unix.CLONE_NEWUTS: "uts", unix.CLONE_NEWIPC: "ipc", unix.CLONE_NEWTIME: "time",
		unix.CLONE_NEWPID: "pid", unix.CLONE_NEWUSER: "user"}[n.Kind]
}

// NamespaceParent is NS_GET_PARENT for t: a PID namespace's parent
// (PIDParent), the owner of the user namespace, which as the initial one
// has none (EPERM), and EINVAL for kinds without a hierarchy.
func (t *Task) NamespaceParent(n *Namespace) (*Namespace, error) {
	switch n.Kind {
	case unix.CLONE_NEWPID:
		return t.PIDParent(n)
	case unix.CLONE_NEWUSER:
		return nil, unix.EPERM
	}
	return nil, unix.EINVAL
}

// NamespaceOwner is NS_GET_USERNS: the user namespace that owns n, the
// one there is, which has no owner itself (EPERM).
func (t *Task) NamespaceOwner(n *Namespace) (*Namespace, error) {
	if n.Kind == unix.CLONE_NEWUSER {
		return nil, unix.EPERM
	}
	return t.Proc.k.userNS, nil
}
