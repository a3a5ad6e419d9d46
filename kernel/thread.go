package kernel

import (
	"errors"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/kernel/aio"
	"github.com/jiege-go/jiege/mm"
)

// Threads and clone(2). A thread is a Task of its Process: every thread
// has its own register frame and runs the same address space, files and
// credentials. Processes cloned with CLONE_VM share the address space too,
// and with CLONE_FILES the file table, so both are reference counted.

// sharedVM is the lock over an address space and how many processes use
// it, and what belongs to the address space as Linux's mm: the native AIO
// contexts, whose ids are addresses in it.
type sharedVM struct {
	mu    sync.Mutex
	users int // guarded by mu
	aio   aio.Table
	// membarrier is the membarrier(2) commands registered for the
	// address space (MEMBARRIER_CMD_REGISTER_* bits); a new one, by fork
	// or execve, has none, as Linux's mm_init.
	membarrier atomic.Uint32
}

// newRefs returns a reference count of one.
func newRefs() *atomic.Int32 {
	r := new(atomic.Int32)
	r.Store(1)
	return r
}

// cloneSupported are the clone flags Clone implements. CLONE_DETACHED,
// CLONE_UNTRACED, CLONE_PTRACE and CLONE_IO change nothing here (no
// tracing, one I/O context), nor CLONE_SYSVSEM: SEM_UNDO adjustments
// belong to a process, shared by its threads, and a child process starts
// with none even when it asks to share them. CLONE_FS shares the working
// directory and umask (fscontext.go).
const cloneSupported = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_PARENT |
	unix.CLONE_PTRACE | unix.CLONE_VFORK | unix.CLONE_THREAD | unix.CLONE_SYSVSEM |
	unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID |
	unix.CLONE_DETACHED | unix.CLONE_UNTRACED | unix.CLONE_CHILD_SETTID | unix.CLONE_IO |
	unix.CLONE_CLEAR_SIGHAND | unix.CLONE_PIDFD

// CloneArgs are clone(2)'s and clone3(2)'s arguments.
type CloneArgs struct {
	Flags      uint64 // CLONE_* flags, without the exit signal
	ExitSignal int    // sent to the parent when a child process exits
	Stack      uintptr
	ParentTID  uintptr // CLONE_PARENT_SETTID
	ChildTID   uintptr // CLONE_CHILD_SETTID, CLONE_CHILD_CLEARTID
	TLS        uintptr // CLONE_SETTLS: the child's tp
	PidFD      uintptr // CLONE_PIDFD: where the child's pidfd goes (an int)
	// SetTID is clone3's set_tid: the child's number in its PID namespace
	// and in those above, deepest first, as many as given; the next free
	// ones for the rest.
	SetTID []int
}

// Clone makes a new thread of t's process (CLONE_THREAD) or a new child
// process, sharing what the flags say, and starts it with StartTask. The
// child resumes after t's ECALL with a0 = 0 and, when Stack is not 0, that
// sp. With CLONE_VFORK, Clone returns once the child has exec'd or exited.
func (t *Task) Clone(a CloneArgs) (*Task, error) {
	f := a.Flags
	switch {
	case f&^(cloneSupported|namespaceFlags) != 0, a.ExitSignal < 0 || a.ExitSignal > 64,
		f&(unix.CLONE_NEWNS|unix.CLONE_FS) == unix.CLONE_NEWNS|unix.CLONE_FS, // roots and cwds name one namespace's mounts
		f&unix.CLONE_THREAD != 0 && f&unix.CLONE_SIGHAND == 0,
		f&unix.CLONE_SIGHAND != 0 && f&unix.CLONE_VM == 0,
		f&unix.CLONE_SIGHAND != 0 && f&unix.CLONE_CLEAR_SIGHAND != 0,
		f&unix.CLONE_THREAD != 0 && f&unix.CLONE_VFORK != 0, // a vfork thread: not modelled
		f&unix.CLONE_PIDFD != 0 && f&(unix.CLONE_THREAD|unix.CLONE_DETACHED) != 0,
		f&unix.CLONE_PARENT != 0 && t.Proc.isInit(), // a namespace's init has no siblings
		// A thread is in its process's PID namespace, which must be the
		// one the process's children go into.
		f&unix.CLONE_THREAD != 0 && (f&unix.CLONE_NEWPID != 0 || t.Proc.ns.Load().pidForChildren.pid != t.Proc.pidNS()):
		return nil, unix.EINVAL
	}
	p := t.Proc
	if err := p.mayCloneNamespaces(f); err != nil {
		return nil, err
	}
	// The pidfd's place is checked before any child exists: a bad one
	// fails the clone with EFAULT, and no child is left running.
	if f&unix.CLONE_PIDFD != 0 {
		if err := t.putUser32(a.PidFD, 0); err != nil {
			return nil, unix.EFAULT
		}
	}
	if err := p.mayAddTask(); err != nil {
		return nil, err
	}
	inherited, err := p.k.perf.Inherit(&t.perf, f&unix.CLONE_THREAD != 0)
	if err != nil {
		return nil, err
	}
	made := false
	defer func() {
		if !made {
			inherited.Release()
		}
	}()
	var child *Task
	if f&unix.CLONE_THREAD != 0 {
		ids, err := p.k.allocIDs(p.pidNS(), a.SetTID, p)
		if err != nil {
			return nil, err
		}
		regs := p.k.newRegs()
		if regs == nil {
			return nil, unix.ENOMEM
		}
		p.mu.Lock()
		p.threads++
		p.mu.Unlock()
		child = &Task{TID: ids.nums[0], ids: ids, Proc: p, Regs: regs}
	} else {
		as, vm := p.AS, p.vm.Load()
		if f&unix.CLONE_VM != 0 {
			p.shareVM(vm)
		} else {
			// A fork that finds no memory reclaims the kernel heap or has
			// the OOM killer make some and tries again: it fails with
			// ENOMEM only when nothing else can go.
			if _, err := p.AllocateUser(func() (err error) { as, err = p.cloneAS(); return err }); err != nil {
				return nil, unix.ENOMEM
			}
			vm = &sharedVM{users: 1}
		}
		ns, err := p.childNamespaces(f, as)
		if err != nil {
			vm.drop(as)
			return nil, err
		}
		ids, err := p.k.allocIDs(ns.pidForChildren.pid, a.SetTID, p)
		if err != nil {
			ns.leave(0, nil)
			vm.drop(as)
			return nil, err
		}
		tid := ids.nums[0]
		files, filesRefs := p.Files, p.filesRefs
		if f&unix.CLONE_FILES == 0 {
			if files, err = p.Files.ForkWithin(p.k.NrOpen()); err != nil {
				ns.leave(tid, nil)
				vm.drop(as)
				return nil, err
			}
			filesRefs = newRefs()
		}
		regs := p.k.newRegs()
		if regs == nil {
			if f&unix.CLONE_FILES == 0 {
				files.CloseAll()
			}
			ns.leave(tid, nil)
			vm.drop(as)
			return nil, unix.ENOMEM
		}
		if f&unix.CLONE_FILES != 0 {
			filesRefs.Add(1)
		}
		// CLONE_PARENT makes the child its parent's sibling, whose exit
		// tells their parent with the caller's own exit signal.
		parent, exitSignal := p, a.ExitSignal
		if f&unix.CLONE_PARENT != 0 {
			parent, exitSignal = p.Parent(), p.ExitSignal
		}
		c := p.newChild(parent, ids, as, vm, files, filesRefs)
		c.ns.Store(ns)
		if f&unix.CLONE_FS != 0 {
			c.fs.Store(p.fs.Load())
		}
		c.ExitSignal = exitSignal
		if f&unix.CLONE_VFORK != 0 {
			c.vforkDone = make(chan struct{})
		}
		child = &Task{TID: tid, ids: ids, Proc: c, Regs: regs}
		c.mainThread = child
	}
	child.inheritSched(t)
	child.inheritSettings(t)
	child.inheritSeccomp(t)
	inherited.Attach(&child.perf, child.PerfCounters())
	made = true
	child.Regs.SetContext(t.Regs)
	child.Regs.Satp = child.Proc.AS.Satp()
	child.Regs.X[arch.RegA0] = 0
	if a.Stack != 0 {
		child.Regs.X[arch.RegSP] = uint64(a.Stack)
	}
	if f&unix.CLONE_SETTLS != 0 {
		child.Regs.X[arch.RegTP] = uint64(a.TLS)
	}
	// As on Linux, a bad pointer for either tid is not an error of clone;
	// each is the number the child has in the namespace of who reads it.
	if f&unix.CLONE_CHILD_SETTID != 0 {
		child.putUser32(a.ChildTID, uint32(child.Gettid()))
	}
	if f&unix.CLONE_CHILD_CLEARTID != 0 {
		child.ClearTID = a.ChildTID
	}
	if f&unix.CLONE_PARENT_SETTID != 0 {
		t.putUser32(a.ParentTID, uint32(p.NumberOf(child.TID)))
	}
	inheritSignals(t, child, f&unix.CLONE_THREAD != 0, f&unix.CLONE_CLEAR_SIGHAND != 0)
	if f&unix.CLONE_PIDFD != 0 {
		// The table is full: Linux fails the clone with EMFILE before
		// the child exists; here the child runs without a pidfd.
		if fd, err := p.Files.Open(child.Proc.NewPidFD(), unix.O_RDWR, true); err == nil {
			t.putUser32(a.PidFD, uint32(fd))
		}
	}
	p.k.forkMu.RLock()
	p.k.addTask(child)
	if child.Proc != p {
		// The child's parent (p, or p's for CLONE_PARENT) may have
		// exited while it was made, handing its children over before
		// it had this one: it goes to their reaper too.
		child.Proc.adoptIfOrphaned()
	}
	select {
	case <-p.exited:
		// A kill of p's group (or of every process) ran while p forked,
		// after it had listed its targets: the child goes too.
		if child.Proc != p {
			child.Proc.Signal(unix.SIGKILL, nil)
		}
	default:
		// So does a child of a namespace whose init died meanwhile.
		if child.Proc != p && child.ids.inClosedNamespace() {
			child.Proc.Signal(unix.SIGKILL, nil)
		}
	}
	p.k.forkMu.RUnlock()
	p.k.startTask(child)
	if f&unix.CLONE_VFORK != 0 {
		select {
		case <-child.Proc.vforkDone:
		case <-p.exited:
		}
	}
	return child, nil
}

// VforkDone lets a parent blocked in vfork continue: the child has exec'd
// (execve calls it once the child has its own address space) or exited.
func (p *Process) VforkDone() {
	if p.vforkDone != nil {
		p.vforkOnce.Do(func() { close(p.vforkDone) })
	}
}

// ReplaceAddressSpace gives p an address space of its own (execve, with
// p's other threads gone): the old one is released unless another process
// (a vfork parent) still uses it, and a vfork parent resumes.
// The swap happens under the old address space's lock, the new one
// published last, so that Lock never returns holding a lock that is no
// longer p's, nor finds the new lock with the old AS.
func (p *Process) ReplaceAddressSpace(as *mm.AddressSpace) {
	old := p.vm.Load()
	old.mu.Lock()
	oldAS := p.AS
	p.AS = as
	p.vm.Store(&sharedVM{users: 1})
	old.releaseLocked(oldAS)
	old.mu.Unlock()
	p.VforkDone()
}

// MembarrierRegistrations are the membarrier(2) registrations of p's
// address space.
func (p *Process) MembarrierRegistrations() *atomic.Uint32 { return &p.vm.Load().membarrier }

// Barrier makes every hart that runs a thread of p's address space pass
// through the kernel before it returns, which orders its memory accesses
// and fences its instruction fetch (membarrier(2)); nothing once the
// address space is gone.
func (p *Process) Barrier() {
	p.Lock()
	defer p.Unlock()
	if p.vm.Load().users > 0 {
		p.AS.SyncICache()
	}
}

// AIO is the native AIO contexts of p's address space.
func (p *Process) AIO() *aio.Table { return &p.vm.Load().aio }

// dropVM gives up p's use of its address space, releasing it with the last.
func (p *Process) dropVM() {
	p.Lock()
	p.vm.Load().releaseLocked(p.AS)
	p.Unlock()
	close(p.released)
	p.reportIfDead()
}

// drop gives up one user's use of as, releasing it with the last.
func (vm *sharedVM) drop(as *mm.AddressSpace) {
	vm.mu.Lock()
	vm.releaseLocked(as)
	vm.mu.Unlock()
}

// releaseLocked is drop with vm.mu held.
func (vm *sharedVM) releaseLocked(as *mm.AddressSpace) {
	vm.users--
	if vm.users == 0 {
		vm.aio.DestroyAll()
		as.Release()
	}
}

// ExitThread ends the calling thread (exit(2)) once its system call
// returns; the process ends with the last thread.
func (t *Task) ExitThread(code int) {
	t.Exiting = true
	t.exitCode = code
}

// Leave is what Task.Run does last (leave), for a task that host tests
// make and end without running it.
func (t *Task) Leave() { t.leave() }

// leave is a task's last act (Task.Run): the futexes it holds in its
// robust list are marked dead, its CLONE_CHILD_CLEARTID word is cleared and
// woken (pthread_join waits on it), and the last thread to leave drops the
// process's address space and then ends it, in that order as Linux's
// exit_mm comes before exit_notify: once the parent can see the exit and
// reap, the memory is free. (A SIGKILL ends the process at once; the OOM
// killer waits for Process.released.)
func (t *Task) leave() {
	p := t.Proc
	t.releaseRobustList()
	t.flushSignals()
	p.k.keys.ExitThread(&t.keyrings)
	p.k.perf.Exit(&t.perf) // before the parent's wait sees what copies counted
	if t.ClearTID != 0 && t.putUser32(t.ClearTID, 0) == nil {
		t.FutexWake(t.ClearTID, true, 1, futexBitsetAny)
	}
	p.mu.Lock()
	t.Proc.k.removeTask(t) // under mu: Process.Usage counts the task once
	p.usage.add(t.Usage())
	p.threads--
	if t.TID == p.PID {
		p.leaderStatus = t.exitCode
	}
	if p.threads == 1 && p.othersLeft != nil {
		close(p.othersLeft)
		p.othersLeft = nil
	}
	last, status := p.threads == 0, p.leaderStatus
	p.mu.Unlock()
	if last {
		p.k.keys.ExitProcess(p.keyrings)
		p.dropVM()
		p.Exit(status)
	}
}

// Robust futexes (linux/futex.h): a lock word holds its owner's tid.
const (
	futexWaiters    = 0x8000_0000
	futexOwnerDied  = 0x4000_0000
	futexTIDMask    = 0x3fff_ffff
	robustListLimit = 2048 // entries walked at most, as Linux: the list may loop
)

// releaseRobustList does what Linux does at thread exit for the list
// registered with set_robust_list: every lock on it (and the one being
// taken or released, list_op_pending) that the thread still owns gets
// FUTEX_OWNER_DIED and one waiter woken, so the next locker sees EOWNERDEAD.
// A bad pointer ends the walk.
func (t *Task) releaseRobustList() {
	head := t.RobustList
	if head == 0 {
		return
	}
	var h linux.RobustListHead
	if t.Proc.CopyIn(head, linux.AsBytes(&h)) != nil {
		return
	}
	entry, offset, pending := uintptr(h.List), uintptr(h.FutexOffset), uintptr(h.ListOpPending)
	for i := 0; entry != head && i < robustListLimit; i++ {
		var next uint64
		if t.Proc.CopyIn(entry&^1, linux.AsBytes(&next)) != nil {
			return
		}
		if entry&^1 != pending&^1 { // bit 0 marks a PI futex
			t.futexOwnerDied(entry&^1+offset, entry&1 != 0, false)
		}
		entry = uintptr(next)
	}
	if pending != 0 {
		t.futexOwnerDied(pending&^1+offset, pending&1 != 0, true)
	}
}

// futexOwnerDied marks the lock word at addr as its owner's death leaves
// it (Linux's handle_futex_death).
func (t *Task) futexOwnerDied(addr uintptr, pi, pendingOp bool) {
	if addr%4 != 0 {
		return
	}
	owned := false
	old, err := t.updateUser32(addr, func(v uint32) (uint32, bool) {
		owned = v&futexTIDMask == uint32(t.Gettid())
		return v&futexWaiters | futexOwnerDied, owned
	})
	if err != nil {
		return
	}
	switch {
	case pendingOp && !pi && old == 0:
		// The thread died between releasing the lock and clearing
		// list_op_pending: a waiter may have missed its wake.
		t.FutexWake(addr, true, 1, futexBitsetAny)
	case owned && !pi && old&futexWaiters != 0:
		t.FutexWake(addr, true, 1, futexBitsetAny)
	}
}

// CopyIn reads p's memory at addr into b, under its address space's lock.
func (p *Process) CopyIn(addr uintptr, b []byte) error { return p.copyUser(addr, b, false) }

// CopyOut writes b to p's memory at addr, under its address space's lock.
func (p *Process) CopyOut(addr uintptr, b []byte) error { return p.copyUser(addr, b, true) }

// copyUser copies between b and p's memory. A page it must back with a
// frame when none is free is made room for as a fault's is: a read(2)
// into untouched memory is not EFAULT because another process filled RAM.
func (p *Process) copyUser(addr uintptr, b []byte, write bool) error {
	// Tried once outside AllocateUser: the call through its function
	// value is only for the rare copy that found no frame.
	err := p.copyUserOnce(addr, b, write)
	if errors.Is(err, mm.ErrNoMemory) {
		_, err = p.AllocateUser(func() error { return p.copyUserOnce(addr, b, write) })
	}
	return err
}

func (p *Process) copyUserOnce(addr uintptr, b []byte, write bool) error {
	p.Lock()
	defer p.Unlock()
	if write {
		return p.AS.CopyOut(addr, b)
	}
	return p.AS.CopyIn(addr, b)
}

// putUser32 stores a 32-bit word in the task's memory.
func (t *Task) putUser32(addr uintptr, v uint32) error {
	return t.Proc.CopyOut(addr, linux.AsBytes(&v))
}

// loadUser32 reads the aligned 32-bit word at addr.
func (t *Task) loadUser32(addr uintptr) (uint32, error) {
	var v uint32
	if err := t.Proc.CopyIn(addr, linux.AsBytes(&v)); err != nil {
		return 0, err
	}
	return v, nil
}

// updateUser32 atomically replaces the aligned 32-bit word at addr with
// update(old) unless update declines, and returns the old value. It is a
// compare-and-swap on the physical word, so it is atomic against user code
// on any hart, not only against the kernel.
func (t *Task) updateUser32(addr uintptr, update func(uint32) (uint32, bool)) (old uint32, err error) {
	p := t.Proc
	_, err = p.AllocateUser(func() error {
		p.Lock()
		defer p.Unlock()
		// The fault and the store under one hold of the lock: a fork in
		// between would make the page copy-on-write again.
		if err := p.AS.Fault(addr, mm.Write); err != nil {
			return err
		}
		pa, _, ok := mm.Translate(p.AS.Root(), addr)
		if !ok {
			return mm.ErrFault
		}
		word := (*uint32)(unsafe.Pointer(mm.Ptr(pa)))
		for {
			old = atomic.LoadUint32(word)
			v, store := update(old)
			if !store || atomic.CompareAndSwapUint32(word, old, v) {
				return nil
			}
		}
	})
	return old, err
}

// shareVM counts one more user of vm, p's address space (CLONE_VM).
func (p *Process) shareVM(vm *sharedVM) {
	p.Lock()
	defer p.Unlock()
	vm.users++
}

// cloneAS copies p's address space for a fork, under its lock.
func (p *Process) cloneAS() (*mm.AddressSpace, error) {
	p.Lock()
	defer p.Unlock()
	return p.AS.Clone()
}
