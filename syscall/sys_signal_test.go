package syscall

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/loader"
)

// TestSignalFrameRoundTrip delivers a handled signal and checks the
// riscv64 rt_sigframe the handler gets (register arguments, siginfo,
// uc_sigmask, sc_regs with pc first, the FP registers and fcsr at
// their Linux offsets), then returns through rt_sigreturn.
func TestSignalFrameRoundTrip(t *testing.T) {
	task, _ := newTask(t)
	const handler, stackTop = 0x5000, scratch + 4*4096
	put(t, task, scratch, words(handler, kernel.SASiginfo, uint64(kernel.Bit(unix.SIGHUP))))
	if r := call(task, sysno.RtSigaction, uint64(unix.SIGUSR1), scratch, 0, 8); r != 0 {
		t.Fatalf("rt_sigaction: %d", r)
	}
	r := task.Regs
	for i := 1; i < 32; i++ {
		r.X[i] = uint64(i) * 0x100
	}
	for i := range r.F {
		r.F[i] = uint64(i) + 0x4000_0000_0000_0000
	}
	r.X[arch.RegSP] = stackTop
	r.FCSR = 0x65
	r.PC = 0x10_1234
	if ret := call(task, sysno.Kill, uint64(task.Proc.PID), uint64(unix.SIGUSR1)); ret != 0 {
		t.Fatalf("kill: %d", ret)
	}
	before := *r
	task.HandleSignals()

	sp := r.X[arch.RegSP]
	if r.PC != handler || r.X[arch.RegA0] != uint64(unix.SIGUSR1) || r.X[arch.RegA1] != sp || r.X[arch.RegA2] != sp+128 ||
		r.X[arch.RegRA] != uint64(loader.SigreturnAddr) || sp%16 != 0 || sp > stackTop-1088 {
		t.Fatalf("handler entry: pc %#x a0 %d a1 %#x a2 %#x ra %#x sp %#x", r.PC, r.X[arch.RegA0], r.X[arch.RegA1], r.X[arch.RegA2], r.X[arch.RegRA], sp)
	}
	le := binary.LittleEndian
	frame := get(t, task, sp, 1088)
	if signo, code, pid := le.Uint32(frame), int32(le.Uint32(frame[8:])), le.Uint32(frame[16:]); signo != uint32(unix.SIGUSR1) || code != kernel.SIUser || pid != uint32(task.Proc.PID) {
		t.Errorf("siginfo: signo %d code %d pid %d", signo, code, pid)
	}
	if mask := le.Uint64(frame[128+40:]); mask != 0 {
		t.Errorf("uc_sigmask %#x, want the mask before delivery (0)", mask)
	}
	mc := frame[128+176:]
	if pc := le.Uint64(mc); pc != before.PC {
		t.Errorf("sc_regs.pc %#x, want %#x", pc, before.PC)
	}
	for i := 1; i < 32; i++ {
		if v := le.Uint64(mc[8*i:]); v != before.X[i] {
			t.Errorf("sc_regs[%d] = %#x, want %#x", i, v, before.X[i])
		}
	}
	for i := 0; i < 32; i++ {
		if v := le.Uint64(mc[256+8*i:]); v != before.F[i] {
			t.Errorf("f%d = %#x, want %#x", i, v, before.F[i])
		}
	}
	if fcsr := le.Uint32(mc[256+256:]); fcsr != 0x65 {
		t.Errorf("fcsr %#x", fcsr)
	}
	if m := task.Mask(); m != kernel.Bit(unix.SIGUSR1)|kernel.Bit(unix.SIGHUP) {
		t.Errorf("mask in handler %#x, want SIGUSR1|SIGHUP", m)
	}

	// The handler clobbers registers and returns to the trampoline.
	for i := 3; i < 32; i++ {
		r.X[i] = 0xdead
	}
	r.F[5], r.FCSR = 0, 0
	call(task, sysno.RtSigreturn)
	if r.PC != before.PC || r.X != before.X || r.F != before.F || r.FCSR != 0x65 {
		t.Errorf("after rt_sigreturn: pc %#x, registers %v", r.PC, r.X)
	}
	if m := task.Mask(); m != 0 {
		t.Errorf("mask after rt_sigreturn %#x", m)
	}
}

// TestKillPermission: an unprivileged process may signal its own user's
// processes only; root may signal any.
func TestKillPermission(t *testing.T) {
	root, _ := newTask(t)
	user, _ := newTaskIn(t, root.Kernel())
	user.Proc.UID, user.Proc.EUID = 33, 33
	if r := call(user, sysno.Kill, uint64(root.Proc.PID), 0); r != -int64(unix.EPERM) {
		t.Errorf("user kills root: %d, want EPERM", r)
	}
	if r := call(user, sysno.Tgkill, uint64(root.Proc.PID), uint64(root.TID), uint64(unix.SIGTERM)); r != -int64(unix.EPERM) {
		t.Errorf("user tgkills root: %d, want EPERM", r)
	}
	if r := call(user, sysno.Kill, uint64(user.Proc.PID), 0); r != 0 {
		t.Errorf("user kills itself: %d", r)
	}
	if r := call(root, sysno.Kill, uint64(user.Proc.PID), uint64(unix.SIGKILL)); r != 0 {
		t.Errorf("root kills user: %d", r)
	}
	select {
	case <-user.Proc.Exited():
	default:
		t.Error("SIGKILL did not end the process")
	}
	if r := call(root, sysno.Kill, uint64(root.Proc.PID), 65); r != -int64(unix.EINVAL) {
		t.Errorf("signal 65: %d, want EINVAL", r)
	}
}

// TestSleepRestartsAfterStop: a stop interrupts nanosleep without a
// handler, so after SIGCONT the task re-enters the kernel through
// restart_syscall, which sleeps the time left and succeeds.
func TestSleepRestartsAfterStop(t *testing.T) {
	init, _ := newTask(t) // pid 1, which a stop would not reach
	task, _ := newTaskIn(t, init.Kernel())
	put(t, task, scratch, words(0, 200_000_000)) // 200 ms
	task.Regs.PC = 0x10_0000
	slept := make(chan int64)
	go func() { slept <- call(task, sysno.Nanosleep, scratch, 0) }()
	task.Proc.Signal(unix.SIGSTOP, nil)
	if r := <-slept; r != -int64(unix.EINTR) {
		t.Fatalf("nanosleep interrupted by SIGSTOP: %d, want EINTR", r)
	}
	handled := make(chan struct{})
	go func() {
		task.HandleSignals() // stops until SIGCONT
		close(handled)
	}()
	task.Proc.Signal(unix.SIGCONT, nil)
	<-handled
	if task.Regs.PC != 0x10_0000-4 || task.Regs.X[arch.RegA7] != sysno.RestartSyscall {
		t.Fatalf("after SIGCONT: pc %#x a7 %d, want the ECALL again as restart_syscall", task.Regs.PC, task.Regs.X[arch.RegA7])
	}
	if r := call(task, sysno.RestartSyscall); r != 0 {
		t.Errorf("restart_syscall: %d, want 0", r)
	}
	if r := call(task, sysno.RestartSyscall); r != -int64(unix.EINTR) {
		t.Errorf("restart_syscall with nothing to restart: %d, want EINTR", r)
	}
}

// TestKillAllAndInit: kill(-1) reaches every process but the caller and
// init; init drops signals it has no handler for, SIGKILL included.
func TestKillAllAndInit(t *testing.T) {
	first, _ := newTask(t) // pid 1
	a, _ := newTaskIn(t, first.Kernel())
	b, _ := newTaskIn(t, first.Kernel())
	for _, task := range []*kernel.Task{a, b} {
		task.Proc.SetAction(unix.SIGWINCH, kernel.SigAction{Handler: 0x5000})
	}
	if r := call(a, sysno.Kill, uint64(^uint64(0)), uint64(unix.SIGWINCH)); r != 0 {
		t.Fatalf("kill(-1): %d", r)
	}
	if a.Pending()&kernel.Bit(unix.SIGWINCH) != 0 {
		t.Error("kill(-1) signalled the caller")
	}
	if b.Pending()&kernel.Bit(unix.SIGWINCH) == 0 {
		t.Error("kill(-1) missed another process")
	}
	init := a.Kernel().ProcessByID(1)
	if init == nil {
		t.Fatal("no process 1")
	}
	if r := call(a, sysno.Kill, 1, uint64(unix.SIGKILL)); r != 0 {
		t.Fatalf("kill(1, SIGKILL): %d", r)
	}
	select {
	case <-init.Exited():
		t.Error("SIGKILL ended init")
	default:
	}
}

// TestOrphanGoesToInit: when a process exits, its children become init's,
// and init's wait4 reaps them; the exiting child's parent gets SIGCHLD.
func TestOrphanGoesToInit(t *testing.T) {
	first, _ := newTask(t) // pid 1
	parent, _ := newTaskIn(t, first.Kernel())
	parent.Proc.SetAction(unix.SIGCHLD, kernel.SigAction{Handler: 0x5000})
	child, err := parent.Clone(kernel.CloneArgs{ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := child.Clone(kernel.CloneArgs{ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	child.Proc.Exit(0)
	child.Leave() // its thread leaves: the parent is told once the memory is gone
	if p := grandchild.Proc.ParentPID(); p != 1 {
		t.Fatalf("orphan's parent %d, want 1", p)
	}
	if parent.Pending()&kernel.Bit(unix.SIGCHLD) == 0 {
		t.Error("no SIGCHLD for the parent")
	}
	init := parent.Kernel().TaskByID(1)
	if init == nil {
		t.Fatal("no task 1")
	}
	which := kernel.WaitFor{PID: grandchild.Proc.PID}
	if r, err := init.Wait(which, kernel.WaitExited|kernel.WaitNoHang); err != nil || r.PID != 0 {
		t.Fatalf("init waits for the running orphan: %+v %v", r, err)
	}
	grandchild.Proc.Exit(5)
	grandchild.Leave()
	r, err := init.Wait(which, kernel.WaitExited)
	if err != nil || r.PID != grandchild.Proc.PID || r.WaitStatus() != 5<<8 {
		t.Fatalf("init reaps the orphan: %+v %v", r, err)
	}
	if parent.Kernel().ProcessByID(grandchild.Proc.PID) != nil {
		t.Error("reaped orphan still in the process table")
	}
}
