package kernel

import (
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel/ipc"
)

// Namespaces. A process is in one namespace of each kind the kernel
// implements: UTS (the host and domain names) and IPC (System V objects
// and POSIX message queues), as Linux's nsproxy holds them. clone(2) and
// unshare(2) make new ones with CLONE_NEWUTS and CLONE_NEWIPC; setns(2)
// enters one that /proc/PID/ns/uts or ipc names. The other kinds (mount,
// PID, network, user, cgroup, time) have the one instance, and asking
// for another is EINVAL, as Linux built without them answers: the tree's
// mounts live in its nodes (fs/mount.go), so a second view of them is not
// a copy away.

// Namespace is one namespace: its kind (the CLONE_NEW* flag), the inode
// number /proc/PID/ns shows, and its state.
type Namespace struct {
	Kind int
	Ino  uint64
	uts  *utsNames      // Kind CLONE_NEWUTS
	ipc  *ipc.Namespace // Kind CLONE_NEWIPC
	// refs counts the processes in it and the files open on it; an IPC
	// namespace's objects go when the last is gone, as Linux's
	// free_ipc_ns.
	refs atomic.Int64
}

// The initial namespaces' inode numbers (Linux's PROC_*_INIT_INO), and
// the first one new namespaces get (PROC_DYNAMIC_FIRST).
const (
	utsInitIno   = 0xeffffffe
	ipcInitIno   = 0xefffffff
	firstDynaIno = 0xf0000000
)

// namespaces are the namespaces a process is in. A process's set is
// replaced whole (Process.ns), never changed in place.
type namespaces struct {
	uts, ipc *Namespace
}

// of returns the kind's namespace in s.
func (s *namespaces) of(kind int) *Namespace {
	switch kind {
	case unix.CLONE_NEWUTS:
		return s.uts
	case unix.CLONE_NEWIPC:
		return s.ipc
	}
	return nil
}

// initNamespaces makes the kernel's first namespaces, which init joins.
func (k *Kernel) initNamespaces() *namespaces {
	k.nextNSIno.Store(firstDynaIno - 1)
	return &namespaces{
		uts: &Namespace{Kind: unix.CLONE_NEWUTS, Ino: utsInitIno, uts: &k.uts},
		ipc: &Namespace{Kind: unix.CLONE_NEWIPC, Ino: ipcInitIno, ipc: k.ipc},
	}
}

// newNamespace makes a namespace of a kind, copying the UTS names of
// from as Linux's clone_uts_ns does; an IPC namespace starts empty.
func (k *Kernel) newNamespace(kind int, from *Namespace) *Namespace {
	n := &Namespace{Kind: kind, Ino: k.nextNSIno.Add(1)}
	switch kind {
	case unix.CLONE_NEWUTS:
		host, domain := from.uts.names()
		n.uts = &utsNames{host: host, domain: domain, hostSet: true, domSet: true}
	case unix.CLONE_NEWIPC:
		n.ipc = ipc.NewNamespace(k.userMemory, k.Now)
	}
	return n
}

// join counts a process into each of s's namespaces.
func (s *namespaces) join() {
	s.uts.get()
	s.ipc.get()
}

// leave counts process pid out of those of s's namespaces it does not
// keep in next (nil: it exits). Leaving an IPC namespace applies the
// semaphore adjustments pid made in it (exit_sem).
func (s *namespaces) leave(pid int, next *namespaces) {
	s.uts.put()
	if next == nil || next.ipc != s.ipc {
		s.ipc.ipc.ExitProcess(pid)
	}
	s.ipc.put()
}

func (n *Namespace) get() { n.refs.Add(1) }

// put drops a reference; the last takes a new IPC namespace's objects.
func (n *Namespace) put() {
	if n.refs.Add(-1) == 0 && n.ipc != nil && n.Ino != ipcInitIno {
		n.ipc.Destroy()
	}
}

// FileOpened and FileClosed count an open /proc/PID/ns file, which keeps
// the namespace (fs.OpenCounter).
func (n *Namespace) FileOpened() { n.get() }
func (n *Namespace) FileClosed() { n.put() }

// Namespace returns the namespace of a kind p is in (nil for a kind the
// kernel has no namespaces of).
func (p *Process) Namespace(kind int) *Namespace { return p.ns.Load().of(kind) }

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

// inheritNamespaces puts c, a new child of p, in p's namespaces, or in
// new ones of the kinds the clone flags name.
func (p *Process) inheritNamespaces(c *Process, flags uint64) {
	s := p.newNamespaces(p.ns.Load(), flags)
	s.join()
	c.ns.Store(s)
}

// unshareNamespaces moves p into new namespaces of the kinds flags name
// (CLONE_NEWUTS, CLONE_NEWIPC).
func (p *Process) unshareNamespaces(flags uint64) {
	s := p.newNamespaces(p.ns.Load(), flags)
	s.join()
	p.replaceNamespaces(s)
}

// newNamespaces returns from with new namespaces of the kinds flags
// name, not joined yet.
func (p *Process) newNamespaces(from *namespaces, flags uint64) *namespaces {
	s := *from
	if flags&unix.CLONE_NEWUTS != 0 {
		s.uts = p.k.newNamespace(unix.CLONE_NEWUTS, from.uts)
	}
	if flags&unix.CLONE_NEWIPC != 0 {
		s.ipc = p.k.newNamespace(unix.CLONE_NEWIPC, from.ipc)
	}
	return &s
}

// Setns implements setns(2) for a namespace that an open /proc/PID/ns
// file names: kind 0 or the namespace's own (EINVAL otherwise), with
// CAP_SYS_ADMIN (EPERM).
func (t *Task) Setns(n *Namespace, kind int) error {
	if kind != 0 && kind != n.Kind {
		return unix.EINVAL
	}
	if t.Proc.Caps.Effective&(1<<unix.CAP_SYS_ADMIN) == 0 {
		return unix.EPERM
	}
	p := t.Proc
	s := *p.ns.Load()
	switch n.Kind {
	case unix.CLONE_NEWUTS:
		s.uts = n
	case unix.CLONE_NEWIPC:
		s.ipc = n
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

// The namespaces clone(2) and unshare(2) can make.
const newNamespaceFlags = unix.CLONE_NEWUTS | unix.CLONE_NEWIPC

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
