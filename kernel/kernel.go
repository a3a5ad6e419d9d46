package kernel

import (
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel/aio"
	"github.com/jiege-go/jiege/kernel/ipc"
	"github.com/jiege-go/jiege/kernel/keys"
	"github.com/jiege-go/jiege/kernel/loader"
	"github.com/jiege-go/jiege/kernel/perf"
	"github.com/jiege-go/jiege/mm"
	jnet "github.com/jiege-go/jiege/net"
)

// Kernel is one kernel's state: its processes and tasks and the pids it
// hands out, process groups and sessions with every process's signals,
// futex queues, the OOM killer's victims, the network stack, the clock
// since boot, the random generator, the vDSO's data pages, and the machine
// hooks it was made with. Every process holds its Kernel, and system call
// handlers reach it through the task (Task.Kernel); boot makes the one the
// machine runs, and host tests make as many as they like.
type Kernel struct {
	// Network is the network stack user sockets live on: loopback, and
	// Ethernet when the machine has a network device; nil without one.
	// Boot sets it once, before the first process starts.
	Network *jnet.Stack

	// SyscallTrace, when not nil, receives a line per system call of this
	// kernel's tasks, as strace prints them (trace=syscall). Boot sets it
	// before the first process starts.
	SyscallTrace io.Writer

	// CommandLine is the kernel's command line (bootargs), as
	// /proc/cmdline shows it. Boot sets it before the first process starts.
	CommandLine string

	userMemory  mm.Memory
	hugePools   []*mm.HugePool // mm.HugePageSizes' pools
	newRegs     func() *arch.Frame
	startTask   func(*Task)
	cpus        int
	memoryStats func() (inUse, total uint64)
	reset       func(restart bool)
	currentCPU  func() int

	kernelLog     func(from uint64) ([]byte, uint64)
	kernelLogSize int
	log           syslogState // syslog.go

	// bootNano is when the Kernel was made, in the runtime's nanotime;
	// Uptime counts from it.
	bootNano int64

	vdso *loader.VDSO

	// The tables of processes (until reaped) and running tasks, by
	// global id (pidns.go): kill, tgkill, wait and /proc find them here.
	tablesMu  sync.RWMutex
	processes map[int]*Process
	tasks     map[int]*Task
	lastPID   atomic.Int64
	// pidMu serializes allocIDs; pidsWrapped is set once ids wrapped
	// past PIDMax, after which each is checked for use.
	pidMu       sync.Mutex
	pidsWrapped bool
	// pidNums are the numbers of each global id in the PID namespaces
	// (pidns.go), until the id is given out again; pidNumsMu guards them
	// and the namespaces' tables, and is taken under every other lock.
	pidNumsMu sync.RWMutex
	pidNums   map[int]*pidNumbers
	// userNS is the one user namespace, which owns the others.
	userNS *Namespace

	// forkMu orders forks and signals sent to many processes: a fork adds
	// its child under the read lock and looks whether its own process was
	// killed meanwhile; kill(2) of a group or of every process lists and
	// signals its targets under the write lock. So a child forked while its
	// group is killed on another hart is either among the targets or sees
	// its parent gone and is killed too, as Linux restarts a fork that a
	// fatal signal interrupts; otherwise a fork bomb's group could outlive
	// its SIGKILL.
	forkMu sync.RWMutex

	// sigMu guards every process's and task's signal state, process groups
	// and sessions: senders touch several processes at once.
	sigMu signalLock
	// sigPending counts each user's queued signals (RLIMIT_SIGPENDING),
	// under sigMu.
	sigPending map[uint32]int

	futexMu     sync.Mutex // guards futexQueues and every waiter's key
	futexQueues map[futexKey][]*futexWaiter

	// oomVictims are the processes the OOM killer ended, until their
	// memory is released or a fault has waited a second for it.
	oomVictims struct {
		sync.Mutex
		dying []*Process
	}

	randMu  sync.Mutex
	randGen *rand.ChaCha8 // random.go: getrandom(2) and AT_RANDOM
	// kcmpCookies obfuscate the identities kcmp(2) orders (kcmp.go).
	kcmpCookies [kcmpTypes][2]uint64

	aioLimit aio.Limit      // fs.aio-nr: the events every AIO context asked for
	uts      utsNames       // uts.go
	acct     accounting     // acct.go: the process accounting file
	pipes    *fs.PipeLimits // pipe-max-size and each user's pipe pages
	// corePattern is /proc/sys/kernel/core_pattern (coredump.go); nil
	// is Linux's default, "core".
	corePattern atomic.Pointer[string]
	wall        wallClock      // clock.go
	ipc         *ipc.Namespace // the initial IPC namespace's objects
	// rootNS are the namespaces the kernel starts with, nextNSIno the
	// inode number the last new namespace took (namespace.go).
	rootNS    *namespaces
	nextNSIno atomic.Uint64
	keys      *keys.Set    // add_key, request_key and keyctl's keys
	nrOpen    atomic.Int64 // /proc/sys/fs/nr_open (limits.go)
	// uffdUnprivileged is vm.unprivileged_userfaultfd (userfaultfd.go).
	uffdUnprivileged atomic.Bool
	// bpfUnpriv is kernel.unprivileged_bpf_disabled (bpfperm.go).
	bpfUnpriv atomic.Int32
	perf      *perf.Perf     // perf_event_open's events (perf.go)
	harts     []hartCounters // what each hart's CPU-wide events count (perf.go)
}

// AIOLimit is the system-wide count of native AIO events (fs.aio-nr).
func (k *Kernel) AIOLimit() *aio.Limit { return &k.aioLimit }

// Config is what a Kernel is made with: the machine's hooks and facts.
type Config struct {
	// UserMemory is where user address spaces get their frames.
	UserMemory mm.Memory
	// NewRegs makes a new task's register frame (nil: out of memory);
	// StartTask starts a task made by clone.
	NewRegs   func() *arch.Frame
	StartTask func(*Task)
	// CPUs and MemoryStats are the machine facts procfs and sysinfo report.
	CPUs        int
	MemoryStats func() (inUse, total uint64)
	// CurrentCPU is the hart the caller runs on (getcpu(2)).
	CurrentCPU func() int
	// KernelLog reads the kernel's log, a ring of KernelLogSize bytes,
	// from a position (bytes since boot) on, and returns the position
	// what it read starts at (syslog(2)); nil: the kernel keeps none.
	KernelLog     func(from uint64) ([]byte, uint64)
	KernelLogSize int
	// Reset restarts the machine (restart) or powers it off, and does not
	// return; reboot(2) calls it.
	Reset func(restart bool)
}

// New makes a kernel with no processes; its clock starts now. Unset hooks
// default to a plain register frame, a task start that does nothing, one
// CPU and no memory statistics, which is what host tests need.
func New(c Config) *Kernel {
	k := &Kernel{
		userMemory: c.UserMemory, newRegs: c.NewRegs, startTask: c.StartTask,
		cpus: c.CPUs, memoryStats: c.MemoryStats, currentCPU: c.CurrentCPU, reset: c.Reset,
		kernelLog: c.KernelLog, kernelLogSize: c.KernelLogSize,
		bootNano:    nanotime(),
		vdso:        loader.NewVDSO(),
		processes:   map[int]*Process{},
		tasks:       map[int]*Task{},
		pidNums:     map[int]*pidNumbers{},
		userNS:      &Namespace{Kind: unix.CLONE_NEWUSER, Ino: userInitIno},
		futexQueues: map[futexKey][]*futexWaiter{},
		randGen:     rand.NewChaCha8(seedFromRuntime()),
	}
	for _, size := range mm.HugePageSizes {
		k.hugePools = append(k.hugePools, mm.NewHugePool(c.UserMemory, size))
	}
	k.ipc = ipc.NewNamespace(c.UserMemory, k.Now)
	k.rootNS = k.initNamespaces()
	k.nrOpen.Store(fs.MaxFDs)
	k.keys = keys.New(k.Now, k.randomSerial)
	k.pipes = fs.NewPipeLimits()
	k.log.printk = defaultPrintk
	k.initKcmpCookies()
	if k.newRegs == nil {
		k.newRegs = func() *arch.Frame { return new(arch.Frame) }
	}
	if k.startTask == nil {
		k.startTask = func(*Task) {}
	}
	if k.cpus == 0 {
		k.cpus = 1
	}
	k.perf = perf.New()
	k.harts = make([]hartCounters, k.cpus)
	if k.memoryStats == nil {
		k.memoryStats = func() (inUse, total uint64) { return 0, 0 }
	}
	if k.currentCPU == nil {
		k.currentCPU = func() int { return 0 }
	}
	return k
}

// StartTask starts a task made by NewProcess, as Clone starts the tasks
// it makes.
func (k *Kernel) StartTask(t *Task) { k.startTask(t) }

// Kernel returns the kernel the task's process belongs to.
func (t *Task) Kernel() *Kernel { return t.Proc.k }

// CPUs is the number of harts running.
func (k *Kernel) CPUs() int { return k.cpus }

// Pipes are the kernel's pipe limits, which pipe(2) makes pipes under.
func (k *Kernel) Pipes() *fs.PipeLimits { return k.pipes }

// CurrentCPU is the hart the caller was running on when it asked.
func (k *Kernel) CurrentCPU() int { return k.currentCPU() }

// Reset restarts the machine or powers it off (Config.Reset); it reports
// false when the kernel was made without the hook (host tests).
func (k *Kernel) Reset(restart bool) bool {
	if k.reset == nil {
		return false
	}
	k.reset(restart)
	return true
}

// HugePools are the huge page pools, the default size's first.
func (k *Kernel) HugePools() []*mm.HugePool { return k.hugePools }

// HugePool is the pool of huge pages of 2^sizeLog bytes, the default
// size's for 0 (mmap's MAP_HUGE_SHIFT field); nil for a size not offered.
func (k *Kernel) HugePool(sizeLog uint) *mm.HugePool {
	if sizeLog == 0 {
		return k.hugePools[0]
	}
	for _, p := range k.hugePools {
		if p.Size == 1<<sizeLog {
			return p
		}
	}
	return nil
}

// MemoryStats returns the frames in use and in all, in bytes.
func (k *Kernel) MemoryStats() (inUse, total uint64) { return k.memoryStats() }

// VDSO returns the vDSO data pages this kernel keeps: exec maps them, and
// boot sets their clock.
func (k *Kernel) VDSO() *loader.VDSO { return k.vdso }

// IPCCaller is the task's process as System V IPC checks it.
func (t *Task) IPCCaller() ipc.Caller { return ipc.Caller{PID: t.Proc.PID, Cred: t.Proc.Cred()} }

// UserMemory is where user address spaces get their frames.
func (k *Kernel) UserMemory() mm.Memory { return k.userMemory }
