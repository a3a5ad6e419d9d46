package kernel

import (
	"path"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel/keys"
	"github.com/jiege-go/jiege/kernel/perf"
	"github.com/jiege-go/jiege/mm"
)

// Process is a user program: an address space, open files and threads.
type Process struct {
	PID int // its global id: the number of ids in the root PID namespace
	// ids are its numbers in its PID namespace and those above (pidns.go);
	// initOf is the namespace below the root whose init it is, if any.
	ids    *pidNumbers
	initOf *pidNamespace
	AS     *mm.AddressSpace
	Files  *fs.FDTable
	Root   *fs.Tree
	// fs is the working directory and umask, shared under CLONE_FS
	// (fscontext.go).
	fs atomic.Pointer[fsContext]
	// ns are the namespaces it is in; nsMu orders their replacement with
	// its exit, after which (nsLeft) it is in none (namespace.go).
	ns      atomic.Pointer[namespaces]
	nsMu    sync.Mutex
	nsLeft  bool
	Exe     string
	Cmdline []string // argv of the program it runs

	// Credentials: every program starts as root. SUID and SGID are the
	// saved set-user-ID and set-group-ID; FSUID and FSGID, the ids file
	// permissions are checked with, follow the effective ids unless
	// setfsuid or setfsgid moved them.
	UID, GID, EUID, EGID, SUID, SGID uint32
	FSUID, FSGID                     uint32
	Groups                           []uint32
	Caps                             Caps                              // caps.go
	Settings                         ProcessSettings                   // prctl.go
	Personality                      Personality                       // prctl.go
	ChildSubreaper                   ChildSubreaper                    // prctl.go
	keyrings                         *keys.ProcessRings                // its process and session keyrings (keys.go)
	landlock                         atomic.Pointer[fs.LandlockDomain] // landlock.go

	// mainThread is the task the process was made with: after it exited,
	// until the process is reaped, scheduling calls still find it, as
	// Linux's find_process_by_pid finds a zombie.
	mainThread *Task

	limits     [RlimitCount]Rlimit // guarded by mu
	usage      Usage               // guarded by mu: threads that have left
	childUsage Usage               // guarded by mu: reaped children and their descendants
	// nprocExceeded (guarded by mu): the real uid changed to a user over
	// RLIMIT_NPROC (UserChanged).
	nprocExceeded bool

	start      time.Duration            // Uptime when it was made
	vm         atomic.Pointer[sharedVM] // the lock over AS and its users, shared under CLONE_VM (thread.go)
	filesRefs  *atomic.Int32            // processes sharing Files (CLONE_FILES)
	ExitSignal int                      // sent to the parent at exit: clone's exit signal, SIGCHLD for fork

	mu     sync.Mutex // guards Exe, Cmdline and the fields below
	exited chan struct{}
	// exitWatchers are the pidfds' poll and epoll watches, called at exit
	// and when reaped.
	exitWatchers fs.Notifier
	// gone is set just before exited is closed: what a thread checks at
	// every return to user mode, without a channel operation.
	gone atomic.Bool
	// released is closed when the last thread has dropped the address
	// space (Task.leave), which a SIGKILL's exit comes before.
	released chan struct{}
	// dead is closed once the process has exited and released its
	// address space: wait4 reports it from then on (reportIfDead).
	dead     chan struct{}
	deadOnce sync.Once
	status   int
	threads  int
	exitOnce sync.Once

	leaderStatus int // guarded by mu: the main thread's exit(2) code, the status unless a group exit
	// execSurvivor is the thread whose execve ends the others (exec.go,
	// Linux's de_thread): every other thread leaves at its next return to
	// user mode, and its Block returns EINTR. othersLeft (guarded by mu) is
	// closed when the survivor is the only thread left.
	execSurvivor atomic.Pointer[Task]
	othersLeft   chan struct{}
	vforkDone    chan struct{} // closed when a vfork child execs or exits (VforkDone)
	vforkOnce    sync.Once

	parent *Process // guarded by sigMu
	// parentPID is parent's pid, stored with it: getppid reads it without
	// sigMu, a lock every process's signals share (Linux reads it under RCU).
	parentPID atomic.Int64
	children  map[int]*Process
	reaped    bool
	// childEvent is closed and replaced when a child exits, stops or
	// continues.
	childEvent chan struct{}

	sig       processSignals // signal.go
	cpuTimers cpuTimers      // ITIMER_VIRTUAL, ITIMER_PROF (cputimers.go)

	k *Kernel // the kernel it runs on; its children's too
}

// Task is one thread of a process.
type Task struct {
	TID      int         // its global id
	ids      *pidNumbers // its numbers in its PID namespaces
	Proc     *Process
	Regs     *arch.Frame
	ClearTID uintptr // set_tid_address, CLONE_CHILD_CLEARTID
	Exiting  bool    // the task called exit or exit_group

	RobustList uintptr // set_robust_list
	exitCode   int     // exit(2)'s code

	cpu         cpuClock        // CPU time, user and system (cputime.go)
	minorFaults atomic.Uint64   // page faults taken (each a minor fault: there is no disk)
	switches    atomic.Uint64   // times it gave up the processor: waits and preemptions
	perf        perf.TaskEvents // the perf events counting it, and those it opened (perf.go)
	sleeping    atomic.Bool     // waiting in Block: ps shows S

	sig      taskSignals      // signal.go
	sched    taskSched        // sched.go
	Settings TaskSettings     // prctl.go
	keyrings keys.ThreadRings // its thread keyring (keys.go)
	seccomp  taskSeccomp      // seccomp.go

	// CallState is what the system call layer keeps from one of the
	// task's calls to the next (syscall's callState), made at the first
	// call that needs it: a task makes one call at a time.
	CallState any
}

// nanotime is the runtime's monotonic clock in ns: on the kernel, the
// time CSR converted (arch's clock_gettime), which the vDSO reads too.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Uptime is the monotonic time since the kernel was made (at boot):
// CLOCK_MONOTONIC.
func (k *Kernel) Uptime() time.Duration { return time.Duration(nanotime() - k.bootNano) }

// BootNano is when the kernel was made, in the runtime's nanotime: boot
// sets the vDSO's CLOCK_MONOTONIC offset from it.
func (k *Kernel) BootNano() int64 { return k.bootNano }

// Lock locks the process's address space (shared by its threads and by
// processes cloned with CLONE_VM). execve replaces the address space while
// holding the old one's lock, so the lock taken is checked to be still
// the process's: another process (reading /proc/PID) may be waiting for
// it across an execve.
func (p *Process) Lock() {
	for {
		vm := p.vm.Load()
		vm.mu.Lock()
		if p.vm.Load() == vm {
			return
		}
		vm.mu.Unlock()
	}
}

// dropTruncated takes away the pages a shrinking truncate left past the
// end of files the process maps.
func (p *Process) dropTruncated() {
	p.Lock()
	defer p.Unlock()
	p.AS.DropTruncated()
}

// Unlock unlocks what Lock locked: the address space cannot have been
// replaced while it was held.
func (p *Process) Unlock() { p.vm.Load().mu.Unlock() }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Preempt is the preemption point of a long system call, between two of
// its chunks: other goroutines run first (the kernel's runtime cannot
// preempt a goroutine by signal, and a copy loop would keep the hart), then
// it reports whether t's process still lives. Once a fatal signal or
// another thread's exit_group has ended it, the call stops rather than go
// on holding the hart and its memory.
func (t *Task) Preempt() (alive bool) {
	runtime.Gosched()
	select {
	case <-t.Proc.exited:
		return false
	default:
		return true
	}
}

// Status is the exit status (valid once Exited is closed): the exit code,
// or 128 + the signal number for a process killed by a signal.
func (p *Process) Status() int { return p.status }

// Exit ends the process with a status; the first call wins. Its threads
// leave (Task.Run), a vfork parent resumes, its tracees are detached, the
// children go to init, and
// once the last thread has dropped the address space (dropVM) the parent,
// if any, is told (its exit signal, and wait4 sees the child), as Linux's
// exit_mm comes before exit_notify.
func (p *Process) Exit(status int) {
	p.exitOnce.Do(func() {
		p.status = status
		if p.filesRefs.Add(-1) == 0 {
			p.Files.CloseAll()
		}
		p.stopRealTimer()
		p.deleteTimers(true)
		p.Root.ReleaseOwner(p)
		p.leaveNamespaces()
		p.gone.Store(true)
		close(p.exited)
		p.notifyPidFDs()
		p.VforkDone()
		p.untraceAll()
		if p.initOf != nil {
			// Not here: Exit may run in a sender that holds forkMu.
			go p.k.zapPIDNamespace(p.initOf, p)
		}
		p.reparentChildren()
		p.reportIfDead()
	})
}

// reportIfDead tells the parent that p is dead once it has both exited and
// released its address space, whichever comes last: a parent that waited
// finds its memory (its segment attachments, say) gone. A namespace's
// init waits for the others of its namespace to be reaped too.
func (p *Process) reportIfDead() {
	select {
	case <-p.exited:
	default:
		return
	}
	select {
	case <-p.released:
	default:
		return
	}
	if p.initOf != nil && !p.k.othersLeft(p) {
		return
	}
	p.deadOnce.Do(func() {
		p.k.account(p)
		close(p.dead)
		p.notifyExit()
	})
}

// Started is when the process was made (Uptime then): with its pid, it
// tells it from a later process given the same pid.
func (p *Process) Started() time.Duration { return p.start }

// ParentPID is the parent's pid, 0 for init.
func (p *Process) ParentPID() int { return int(p.parentPID.Load()) }

// Parent is the parent process, nil for init.
func (p *Process) Parent() *Process {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	return p.parent
}

// newChild makes a process like p with an address space and a file table
// (Clone decides what is shared) and adds it to parent's children: p's,
// or p's parent's for CLONE_PARENT.
func (p *Process) newChild(parent *Process, ids *pidNumbers, as *mm.AddressSpace, vm *sharedVM, files *fs.FDTable, filesRefs *atomic.Int32) *Process {
	c := &Process{PID: ids.nums[0], ids: ids, AS: as, Files: files, filesRefs: filesRefs, Root: p.Root, Exe: p.Exe,
		Cmdline: p.Cmdline, start: p.k.Uptime(), k: p.k,
		UID: p.UID, GID: p.GID, EUID: p.EUID, EGID: p.EGID, SUID: p.SUID, SGID: p.SGID, FSUID: p.FSUID, FSGID: p.FSGID, Caps: p.Caps,
		Groups: append([]uint32(nil), p.Groups...), limits: p.Limits(),
		exited: make(chan struct{}), released: make(chan struct{}), dead: make(chan struct{}), threads: 1, parent: parent, childEvent: make(chan struct{})}
	c.vm.Store(vm)
	c.keyrings = p.k.keys.Fork(p.keyrings)
	c.landlock.Store(p.landlock.Load())
	c.Personality.Store(p.Personality.Load())
	c.Settings.NotDumpable.Store(p.Settings.NotDumpable.Load())
	c.Settings.THPDisable.Store(p.Settings.THPDisable.Load())
	c.Settings.SecureBits.Store(p.Settings.SecureBits.Load())
	c.Settings.CoredumpFilter.Store(p.Settings.CoredumpFilter.Load())
	c.fs.Store(p.fs.Load().copy())
	c.parentPID.Store(int64(parent.PID))
	c.watchCPULimit() // the interval timers are not inherited, RLIMIT_CPU is
	parent.addChild(c)
	return c
}

// addChild records c among p's children.
func (p *Process) addChild(c *Process) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.children == nil {
		p.children = map[int]*Process{}
	}
	p.children[c.PID] = c
}

// Cred is who the process is for permission checks: its effective ids
// (Linux's fsuid and fsgid follow them) and its groups.
func (p *Process) Cred() *fs.Cred {
	return &fs.Cred{UID: p.FSUID, GID: p.FSGID, Groups: p.Groups, Resolve: p.Resolve(), Landlock: p.landlock.Load(), Mounts: p.MountNS()}
}

// RealCred is the process with its real ids, as access(2) checks.
func (p *Process) RealCred() *fs.Cred {
	return &fs.Cred{UID: p.UID, GID: p.GID, Groups: p.Groups, Resolve: p.Resolve(), Landlock: p.landlock.Load(), Mounts: p.MountNS()}
}

// NewProcess makes a process with one task around an exec'd address space;
// nil when every id is in use (init's never is).
func (k *Kernel) NewProcess(tree *fs.Tree, as *mm.AddressSpace, files *fs.FDTable, exe string, argv []string, regs *arch.Frame) *Task {
	ids, err := k.allocIDs(k.rootNS.pidForChildren.pid, nil, nil)
	if err != nil {
		return nil
	}
	pid := ids.nums[0]
	p := &Process{PID: pid, ids: ids, AS: as, Files: files, filesRefs: newRefs(),
		Root: tree, Exe: path.Clean(exe), Cmdline: argv, start: k.Uptime(), limits: initLimits(), Caps: initCaps(), k: k,
		exited: make(chan struct{}), released: make(chan struct{}), dead: make(chan struct{}), threads: 1, childEvent: make(chan struct{})}
	p.vm.Store(&sharedVM{users: 1})
	p.keyrings = new(keys.ProcessRings)
	p.Settings.CoredumpFilter.Store(mm.DefaultCoredumpFilter)
	p.fs.Store(new(fsContext))
	k.rootNS.join()
	p.ns.Store(k.rootNS)
	p.SetCwd("/")
	p.SetUmask(0o022)
	files.SetLimit(int(p.limits[unix.RLIMIT_NOFILE].Cur))
	p.sig.execed = true // its program was exec'd, by the kernel
	t := &Task{TID: pid, ids: ids, Proc: p, Regs: regs}
	p.mainThread = t
	t.initSettings()
	k.addTask(t)
	return t
}
