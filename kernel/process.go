package kernel

import (
	"fmt"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
	jnet "github.com/jiege-go/jiege/net"
)

// Process is a user program: an address space, open files and threads.
type Process struct {
	PID   int
	AS    *mm.AddressSpace
	Files *fs.FDTable
	Root  *fs.Tree
	Cwd   string
	Exe   string
	Umask uint32

	// Credentials: every program starts as root.
	UID, GID, EUID, EGID uint32
	Groups               []uint32

	mu       sync.Mutex // guards AS and the fields below
	exited   chan struct{}
	status   int
	threads  int
	exitOnce sync.Once

	parent   *Process
	children map[int]*Process
	reaped   bool
	// childEvent is closed and replaced when a child exits, stops or
	// continues.
	childEvent chan struct{}

	sig processSignals // signal.go
}

// Task is one thread of a process.
type Task struct {
	TID      int
	Proc     *Process
	Regs     *arch.Frame
	ClearTID uintptr // set_tid_address
	Exiting  bool    // the task called exit or exit_group

	sig taskSignals // signal.go
}

var lastPID atomic.Int64

// Network is the network stack user sockets live on; nil without a network device.
var Network *jnet.Stack

// bootTime is when the kernel package was initialised; Uptime counts from it.
var bootTime = time.Now()

// Uptime is the monotonic time since boot.
func Uptime() time.Duration { return time.Since(bootTime) }

// Lock locks the process's address space and bookkeeping.
func (p *Process) Lock() { p.mu.Lock() }

// Unlock unlocks what Lock locked.
func (p *Process) Unlock() { p.mu.Unlock() }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Status is the exit status (valid once Exited is closed): the exit code,
// or 128 + the signal number for a process killed by a signal.
func (p *Process) Status() int { return p.status }

// Exit ends the process with a status; the first call wins. The parent, if
// any, is told (SIGCHLD, and wait4 sees the child); the children go to init.
func (p *Process) Exit(status int) {
	p.exitOnce.Do(func() {
		p.status = status
		p.Files.CloseAll()
		p.stopRealTimer()
		close(p.exited)
		p.reparentChildren()
		p.notifyExit()
	})
}

// ParentPID is the parent's pid, 0 for init.
func (p *Process) ParentPID() int {
	sigMu.Lock() // reparenting changes parent
	defer sigMu.Unlock()
	if p.parent == nil {
		return 0
	}
	return p.parent.PID
}

// Platform hooks, set by the kernel's main on riscv64 and by host tests:
// where a new task's register frame comes from, and how a task starts.
var (
	NewRegs   = func() *arch.Frame { return new(arch.Frame) }
	StartTask = func(*Task) {}
)

// Fork makes a child process that is a copy of t's: its memory copied, its
// descriptors shared as after fork(2). The child's registers are t's with
// a0 = 0 and, when newsp is not 0, that stack. It is started with StartTask.
func (t *Task) Fork(newsp, childTID uintptr, setTID, clearTID bool) (*Task, error) {
	p := t.Proc
	regs := NewRegs()
	if regs == nil {
		return nil, unix.ENOMEM
	}
	p.Lock()
	as, err := p.AS.Clone()
	p.Unlock()
	if err != nil {
		return nil, unix.ENOMEM
	}
	*regs = *t.Regs
	regs.Satp = as.Satp()
	regs.X[arch.RegA0] = 0
	if newsp != 0 {
		regs.X[arch.RegSP] = uint64(newsp)
	}
	pid := int(lastPID.Add(1))
	c := &Process{PID: pid, AS: as, Files: p.Files.Fork(), Root: p.Root, Cwd: p.Cwd, Exe: p.Exe, Umask: p.Umask,
		UID: p.UID, GID: p.GID, EUID: p.EUID, EGID: p.EGID, Groups: append([]uint32(nil), p.Groups...),
		exited: make(chan struct{}), threads: 1, parent: p, childEvent: make(chan struct{})}
	child := &Task{TID: pid, Proc: c, Regs: regs}
	if setTID {
		b := []byte{byte(pid), byte(pid >> 8), byte(pid >> 16), byte(pid >> 24)}
		if err := as.CopyOut(childTID, b); err != nil {
			as.Release()
			return nil, unix.EFAULT
		}
	}
	if clearTID {
		child.ClearTID = childTID
	}
	p.mu.Lock()
	if p.children == nil {
		p.children = map[int]*Process{}
	}
	p.children[pid] = c
	p.mu.Unlock()
	inheritSignals(t, child, false)
	addTask(child)
	StartTask(child)
	return child, nil
}

// Interpreter and PIE placement (Sv39 user space is 256 GiB).
const (
	pieBias    = 0x2a_aaaa_a000
	interpBias = 0x3e_0000_0000
	maxArgs    = 4096
)

// ExecError is why exec failed, as a Linux errno.
type ExecError struct {
	Errno unix.Errno
	Msg   string
}

func (e *ExecError) Error() string { return e.Msg }

func execErr(errno unix.Errno, format string, args ...any) error {
	return &ExecError{Errno: errno, Msg: fmt.Sprintf(format, args...)}
}

// Exec builds a new address space running the program at path (absolute,
// in tree): its ELF image, its interpreter when it names one, the stack
// with argv, envp and the auxiliary vector. It returns the address space
// and the registers to start with (pc, sp, satp).
func Exec(mem mm.Memory, tree *fs.Tree, file string, argv, envp []string, random [16]byte, regs *arch.Frame) (*mm.AddressSpace, error) {
	if len(argv)+len(envp) > maxArgs {
		return nil, execErr(unix.E2BIG, "%s: too many arguments", file)
	}
	exeNode, err := tree.Lookup(file, true)
	if err != nil {
		return nil, execErr(err.(unix.Errno), "%s: %v", file, err)
	}
	if exeNode.IsDir() || exeNode.Mode.Perm()&0o111 == 0 {
		return nil, execErr(unix.EACCES, "%s: not executable", file)
	}
	as, err := mm.NewAddressSpace(mem)
	if err != nil {
		return nil, execErr(unix.ENOMEM, "%s: %v", file, err)
	}
	fail := func(err error) (*mm.AddressSpace, error) {
		as.Release()
		if _, ok := err.(*ExecError); ok {
			return nil, err
		}
		return nil, execErr(unix.ENOEXEC, "%s: %v", file, err)
	}
	exe, err := LoadELF(as, exeNode.Data, pieBias)
	if err != nil {
		return fail(err)
	}
	entry := exe.Entry
	var interp *Image
	if exe.Interp != "" {
		n, err := tree.Lookup(exe.Interp, true)
		if err != nil {
			return fail(execErr(unix.ENOENT, "%s: interpreter %s: %v", file, exe.Interp, err))
		}
		if interp, err = LoadELF(as, n.Data, interpBias); err != nil {
			return fail(fmt.Errorf("interpreter %s: %w", exe.Interp, err))
		}
		if interp.Interp != "" {
			return fail(execErr(unix.ELIBBAD, "%s: interpreter %s has an interpreter", file, exe.Interp))
		}
		entry = interp.Entry
	}
	sp, err := buildStack(as, argv, envp, exe, interp, file, random)
	if err != nil {
		return fail(err)
	}
	if err := mapSigreturn(as); err != nil {
		return fail(err)
	}
	as.BrkBase = (exe.End + mm.PageSize - 1) &^ (mm.PageSize - 1)
	as.Brk = as.BrkBase
	*regs = arch.Frame{PC: uint64(entry), Satp: as.Satp()}
	regs.X[arch.RegSP] = uint64(sp)
	return as, nil
}

// NewProcess makes a process with one task around an exec'd address space.
func NewProcess(tree *fs.Tree, as *mm.AddressSpace, files *fs.FDTable, exe string, regs *arch.Frame) *Task {
	pid := int(lastPID.Add(1))
	p := &Process{PID: pid, AS: as, Files: files, Root: tree, Cwd: "/", Exe: path.Clean(exe), Umask: 0o022,
		exited: make(chan struct{}), threads: 1, childEvent: make(chan struct{})}
	t := &Task{TID: pid, Proc: p, Regs: regs}
	addTask(t)
	return t
}
