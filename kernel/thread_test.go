package kernel

import (
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

const (
	userBase     = 0x40_0000 // a read-write mapping of 4 pages
	threadFlags  = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM
	glibcThreads = threadFlags | unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID
)

// newThreadTask makes a process with one task over a small address space,
// and records the tasks Clone starts.
func newThreadTask(t *testing.T) (*Task, *mmtest.Memory, *[]*Task) {
	t.Helper()
	mem := mmtest.New(t, 256)
	as, err := mm.NewAddressSpace(mem)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := as.Map(userBase, 4*mm.PageSize, mm.PTERead|mm.PTEWrite, true); err != nil {
		t.Fatal(err)
	}
	started := &[]*Task{}
	k := New(Config{UserMemory: mem, StartTask: func(c *Task) { *started = append(*started, c) }})
	task := k.NewProcess(fs.NewTree(fs.NewDir(0o755)), as, &fs.FDTable{}, "/init", []string{"/init"}, &arch.Frame{PC: 0x1000})
	return task, mem, started
}

func word(t *testing.T, task *Task, addr uintptr) uint32 {
	t.Helper()
	v, err := task.loadUser32(addr)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCloneThreadSharesTheProcess(t *testing.T) {
	task, mem, started := newThreadTask(t)
	ptid, ctid := uintptr(userBase), uintptr(userBase+8)
	task.putUser32(ctid, 0xffff)
	child, err := task.Clone(CloneArgs{Flags: glibcThreads, Stack: userBase + 0x3000, TLS: 0x1234, ParentTID: ptid, ChildTID: ctid})
	if err != nil {
		t.Fatal(err)
	}
	if len(*started) != 1 || (*started)[0] != child {
		t.Fatalf("started %v, want the child", *started)
	}
	if child.Proc != task.Proc || child.TID == task.TID || task.Kernel().TaskByID(child.TID) != child {
		t.Fatalf("child %d of pid %d, parent %d", child.TID, child.Proc.PID, task.TID)
	}
	r := child.Regs
	if r.PC != 0x1000 || r.X[arch.RegA0] != 0 || r.X[arch.RegSP] != userBase+0x3000 || r.X[arch.RegTP] != 0x1234 {
		t.Fatalf("child registers: pc %#x a0 %d sp %#x tp %#x", r.PC, r.X[arch.RegA0], r.X[arch.RegSP], r.X[arch.RegTP])
	}
	if got := word(t, task, ptid); got != uint32(child.TID) {
		t.Fatalf("parent tid word %d, want %d", got, child.TID)
	}

	inUse, _ := mem.Frames.Stats()
	child.ExitThread(9)
	child.leave()
	if got := word(t, task, ctid); got != 0 {
		t.Fatalf("clear-tid word %d after the thread's exit", got)
	}
	select {
	case <-task.Proc.Exited():
		t.Fatal("the process ended with a thread that was not the last")
	default:
	}
	if now, _ := mem.Frames.Stats(); now != inUse {
		t.Fatalf("frames %d -> %d: the address space went with a thread", inUse, now)
	}
	task.ExitThread(5)
	task.leave()
	<-task.Proc.Exited()
	if task.Proc.Status() != 5 {
		t.Fatalf("status %d, want the main thread's 5", task.Proc.Status())
	}
	if now, _ := mem.Frames.Stats(); now != 0 {
		t.Fatalf("%d frames left after the last thread", now)
	}
}

func TestCloneVMProcessKeepsMemoryUntilTheLastUser(t *testing.T) {
	task, mem, _ := newThreadTask(t)
	task.putUser32(userBase, 1)
	child, err := task.Clone(CloneArgs{Flags: unix.CLONE_VM, ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	if child.Proc == task.Proc || child.Proc.AS != task.Proc.AS || child.Proc.Files == task.Proc.Files || child.Proc.ExitSignal != int(unix.SIGCHLD) {
		t.Fatal("CLONE_VM child: want another process, the same memory, its own files")
	}
	child.putUser32(userBase, 2)
	if got := word(t, task, userBase); got != 2 {
		t.Fatalf("parent reads %d after the child's write", got)
	}
	child.leave()
	<-child.Proc.Exited()
	if r, err := task.Wait(WaitFor{PID: child.TID}, unix.WEXITED|unix.WNOHANG); r.PID != child.TID || err != nil {
		t.Fatalf("wait: %d %v", r.PID, err)
	}
	if got := word(t, task, userBase); got != 2 {
		t.Fatalf("memory lost with the child: %d", got)
	}
	task.leave()
	if now, _ := mem.Frames.Stats(); now != 0 {
		t.Fatalf("%d frames left", now)
	}
}

func TestCloneFilesSharesTheTable(t *testing.T) {
	task, _, _ := newThreadTask(t)
	child, err := task.Clone(CloneArgs{Flags: unix.CLONE_VM | unix.CLONE_FILES, ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	if child.Proc.Files != task.Proc.Files {
		t.Fatal("CLONE_FILES child has a table of its own")
	}
	fd, err := task.Proc.Files.Open(&fs.Console{Out: func([]byte) {}}, unix.O_RDWR, false)
	if err != nil {
		t.Fatal(err)
	}
	child.leave()
	d, err := task.Proc.Files.Get(fd)
	if err != nil {
		t.Fatalf("the child's exit closed the shared table: %v", err)
	}
	d.DecRef()
}

func TestVforkWaitsForExecOrExit(t *testing.T) {
	for _, how := range []string{"exit", "exec"} {
		task, mem, _ := newThreadTask(t)
		started := make(chan *Task, 1)
		task.Proc.k.startTask = func(c *Task) { started <- c }
		done := make(chan *Task)
		go func() {
			c, err := task.Clone(CloneArgs{Flags: unix.CLONE_VM | unix.CLONE_VFORK, ExitSignal: int(unix.SIGCHLD)})
			if err != nil {
				t.Error(err)
			}
			done <- c
		}()
		child := <-started
		select {
		case <-done:
			t.Fatalf("%s: vfork returned before the child was done", how)
		case <-time.After(20 * time.Millisecond):
		}
		if how == "exit" {
			child.leave()
		} else {
			as, err := mm.NewAddressSpace(mem)
			if err != nil {
				t.Fatal(err)
			}
			child.Proc.ReplaceAddressSpace(as)
			if child.Proc.AS == task.Proc.AS {
				t.Fatal("exec kept the parent's address space")
			}
		}
		if c := <-done; c != child {
			t.Fatalf("%s: vfork returned another task", how)
		}
		task.putUser32(userBase, 7) // the parent's memory is still there
		if how == "exec" {
			child.leave()
		}
		task.leave()
		if now, _ := mem.Frames.Stats(); now != 0 {
			t.Fatalf("%s: %d frames left", how, now)
		}
	}
}

func TestCloneRejectsInconsistentFlags(t *testing.T) {
	task, _, started := newThreadTask(t)
	for _, f := range []uint64{
		unix.CLONE_VM | unix.CLONE_THREAD, // a thread without shared handlers
		unix.CLONE_SIGHAND,                // shared handlers without shared memory
		unix.CLONE_NEWNS | unix.CLONE_FS,  // a new mount namespace sharing the root and cwd
		threadFlags | unix.CLONE_PIDFD,    // a pidfd of a thread
		unix.CLONE_PIDFD | unix.CLONE_DETACHED,
		threadFlags | unix.CLONE_VFORK, // no vfork threads
	} {
		if _, err := task.Clone(CloneArgs{Flags: f}); !errors.Is(err, unix.EINVAL) {
			t.Errorf("flags %#x: %v, want EINVAL", f, err)
		}
	}
	if len(*started) != 0 {
		t.Errorf("%d tasks started by refused clones", len(*started))
	}
}

// The robust list as glibc lays it out: head {next, futex_offset,
// list_op_pending}, each entry {next, prev} with its lock word at
// entry + futex_offset.
func TestRobustListMarksOwnerDeadAndWakes(t *testing.T) {
	task, _, _ := newThreadTask(t)
	child, err := task.Clone(CloneArgs{Flags: threadFlags})
	if err != nil {
		t.Fatal(err)
	}
	const head, entry, other, offset = userBase, userBase + 64, userBase + 128, 16
	put64 := func(addr uintptr, v uint64) {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint64(b, v)
		task.Proc.Lock()
		defer task.Proc.Unlock()
		if err := task.Proc.AS.CopyOut(addr, b); err != nil {
			t.Fatal(err)
		}
	}
	put64(head, entry)
	put64(head+8, offset)
	put64(entry, other)
	put64(other, head)
	task.putUser32(entry+offset, uint32(child.TID)|futexWaiters)
	task.putUser32(other+offset, uint32(task.TID)) // another thread's lock: untouched
	child.RobustList = head

	woken := make(chan error)
	go func() {
		woken <- task.FutexWait(entry+offset, false, uint32(child.TID)|futexWaiters, futexBitsetAny, time.Time{})
	}()
	for {
		k := task.Proc.k
		k.futexMu.Lock()
		n := len(k.futexQueues[futexKey{as: task.Proc.AS, addr: entry + offset}])
		k.futexMu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	child.leave()
	if err := <-woken; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	if got := word(t, task, entry+offset); got != futexWaiters|futexOwnerDied {
		t.Fatalf("dead owner's lock %#x", got)
	}
	if got := word(t, task, other+offset); got != uint32(task.TID) {
		t.Fatalf("another owner's lock changed to %#x", got)
	}
}

func TestFutexWaitTimesOutAndWakes(t *testing.T) {
	task, _, _ := newThreadTask(t)
	if err := task.FutexWait(userBase, false, 1, futexBitsetAny, time.Time{}); !errors.Is(err, unix.EAGAIN) {
		t.Fatalf("value mismatch: %v", err)
	}
	if err := task.FutexWait(userBase+2, false, 0, futexBitsetAny, time.Time{}); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("unaligned: %v", err)
	}
	if err := task.FutexWait(0x10, false, 0, futexBitsetAny, time.Time{}); !errors.Is(err, unix.EFAULT) {
		t.Fatalf("unmapped: %v", err)
	}
	if err := task.FutexWait(userBase, false, 0, futexBitsetAny, time.Now().Add(10*time.Millisecond)); !errors.Is(err, unix.ETIMEDOUT) {
		t.Fatalf("deadline: %v", err)
	}
	if n := len(task.Proc.k.futexQueues); n != 0 {
		t.Fatalf("%d queues left after timeouts", n)
	}
	// A group exit interrupts a waiter.
	done := make(chan error)
	go func() { done <- task.FutexWait(userBase, false, 0, futexBitsetAny, time.Time{}) }()
	time.Sleep(10 * time.Millisecond)
	task.Proc.Exit(1)
	if err := <-done; !errors.Is(err, unix.EINTR) {
		t.Fatalf("after exit_group: %v", err)
	}
}

// TestLockAcrossExec: while execve replaces a process's address space
// again and again, other goroutines (a reader of /proc/PID) lock and
// unlock it: each must unlock the lock it took, and find the address
// space of the lock it holds. (One once unlocked the new address space's
// lock, which nobody held, and the kernel died.)
func TestLockAcrossExec(t *testing.T) {
	task, mem, _ := newThreadTask(t)
	p := task.Proc
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				p.Lock()
				_ = p.AS.VMAs()
				p.Unlock()
			}
		}()
	}
	for range 2000 {
		as, err := mm.NewAddressSpace(mem)
		if err != nil {
			t.Fatal(err)
		}
		p.ReplaceAddressSpace(as)
	}
	close(done)
	wg.Wait()
}

// A child that has exited is reported to its parent's wait only once its
// last thread has dropped the address space, as Linux's exit_mm comes
// before exit_notify: a parent that waited finds its memory (its System V
// attachments, say) gone.
func TestWaitSeesAChildOnceItsMemoryIsGone(t *testing.T) {
	task, mem, _ := newThreadTask(t)
	before, _ := mem.Frames.Stats()
	child, err := task.Clone(CloneArgs{ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	child.Proc.Exit(3) // exit_group, or a SIGKILL from elsewhere
	if r, err := task.Wait(WaitFor{PID: child.TID}, unix.WEXITED|unix.WNOHANG); r.PID != 0 || err != nil {
		t.Fatalf("wait reported the child before its thread left: pid %d, %v", r.PID, err)
	}
	if task.Pending()&Bit(unix.SIGCHLD) != 0 {
		t.Fatal("SIGCHLD before the child's memory was released")
	}
	child.leave()
	r, err := task.Wait(WaitFor{PID: child.TID}, unix.WEXITED|unix.WNOHANG)
	if r.PID != child.TID || err != nil || r.WaitStatus() != 3<<8 {
		t.Fatalf("wait after the child left: %+v, %v", r, err)
	}
	if now, _ := mem.Frames.Stats(); now != before {
		t.Fatalf("frames %d when the child was reaped, %d before the fork", now, before)
	}
}

// CLONE_PIDFD: a pidfd of the child lands in the parent's table and at
// PidFD; a bad PidFD fails with EFAULT before any child exists.
func TestClonePidFD(t *testing.T) {
	task, _, started := newThreadTask(t)
	if _, err := task.Clone(CloneArgs{Flags: unix.CLONE_PIDFD, ExitSignal: int(unix.SIGCHLD), PidFD: 0x10}); !errors.Is(err, unix.EFAULT) {
		t.Fatalf("bad pidfd pointer: %v, want EFAULT", err)
	}
	if len(*started) != 0 {
		t.Fatalf("%d tasks started by a clone that failed", len(*started))
	}
	task.putUser32(userBase, 0xffff)
	child, err := task.Clone(CloneArgs{Flags: unix.CLONE_PIDFD, ExitSignal: int(unix.SIGCHLD), PidFD: userBase})
	if err != nil {
		t.Fatal(err)
	}
	fd := int(word(t, task, userBase))
	d, err := task.Proc.Files.Get(fd)
	if err != nil {
		t.Fatalf("pidfd %d: %v", fd, err)
	}
	defer d.DecRef()
	if f, ok := d.File.(*PidFD); !ok || f.Process() != child.Proc {
		t.Fatalf("fd %d holds %T, not the child's pidfd", fd, d.File)
	}
	if cloexec, _ := task.Proc.Files.CloExec(fd); !cloexec {
		t.Error("pidfd without FD_CLOEXEC")
	}
	if f := d.File.(*PidFD); f.Readiness(unix.EPOLLIN) != 0 {
		t.Error("pidfd readable before the child exited")
	}
	child.Proc.Exit(0)
	if f := d.File.(*PidFD); f.Readiness(unix.EPOLLIN) != unix.EPOLLIN {
		t.Error("pidfd not readable after the child exited")
	}
}

func TestCloneFSSharesDirectoriesAndUmask(t *testing.T) {
	task, _, _ := newThreadTask(t)
	shared, err := task.Clone(CloneArgs{Flags: unix.CLONE_FS, ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	forked, err := task.Clone(CloneArgs{ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	shared.Proc.SetCwd("/tmp")
	shared.Proc.SetRootDir("/srv")
	shared.Proc.SetUmask(0o077)
	if p := task.Proc; p.Cwd() != "/tmp" || p.RootDir() != "/srv" || p.Umask() != 0o077 {
		t.Errorf("CLONE_FS parent sees %q, %q, %o; want the child's /tmp, /srv, 077", p.Cwd(), p.RootDir(), p.Umask())
	}
	if p := forked.Proc; p.Cwd() != "/" || p.RootDir() != "/" || p.Umask() != 0o022 {
		t.Errorf("a fork's child sees %q, %q, %o; want its own /, /, 022", p.Cwd(), p.RootDir(), p.Umask())
	}
	if err := shared.Unshare(unix.CLONE_FS); err != nil {
		t.Fatal(err)
	}
	shared.Proc.SetCwd("/")
	if task.Proc.Cwd() != "/tmp" {
		t.Errorf("after unshare(CLONE_FS) the child's chdir moved the parent to %q", task.Proc.Cwd())
	}
	if shared.Proc.RootDir() != "/srv" {
		t.Errorf("unshare(CLONE_FS) lost the root directory: %q", shared.Proc.RootDir())
	}
	shared.leave()
	forked.leave()
}
