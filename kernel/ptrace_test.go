package kernel

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// tracedChild forks a child of task's process that asks to be traced.
func tracedChild(t *testing.T, task *Task) *Task {
	t.Helper()
	child, err := task.Clone(CloneArgs{ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	if err := child.PtraceTraceme(); err != nil {
		t.Fatal(err)
	}
	if err := child.PtraceTraceme(); !errors.Is(err, unix.EPERM) {
		t.Errorf("TRACEME twice: %v, want EPERM", err)
	}
	return child
}

// stopOn sends child sig and checks that delivering it stops the child
// for its tracer, whose wait reports the stop; it returns the channel
// the stop ends by.
func stopOn(t *testing.T, task, child *Task, sig unix.Signal) chan struct{} {
	t.Helper()
	if err := child.SignalThread(sig, nil); err != nil {
		t.Fatal(err)
	}
	next, _, resumed := child.deliverSignals()
	if next != waitWhileStopped || resumed == nil {
		t.Fatalf("%v: delivery %v, want a stop", sig, next)
	}
	r, err := task.Wait(WaitFor{PID: child.Proc.PID}, WaitExited|WaitNoHang)
	if err != nil || r.Code != CldTrapped || r.WaitStatus() != int(sig)<<8|0x7f {
		t.Fatalf("%v: wait %+v %v, want CLD_TRAPPED by it", sig, r, err)
	}
	return resumed
}

// TestTraceStopResumesWithAnotherSignal: an ignored signal still stops
// a tracee, and CONT with another signal delivers that one, sent by the
// tracer.
func TestTraceStopResumesWithAnotherSignal(t *testing.T) {
	task, _, _ := newThreadTask(t)
	child := tracedChild(t, task)
	child.Proc.SetAction(unix.SIGUSR2, SigAction{Handler: SigIgnore})
	resumed := stopOn(t, task, child, unix.SIGUSR2)
	if _, err := task.Tracee(child.TID, true); err != nil {
		t.Fatalf("Tracee of a stopped child: %v", err)
	}
	if err := task.Proc.PtraceCont(child.Proc, NumSignals+1); !errors.Is(err, unix.EIO) {
		t.Errorf("CONT with signal 65: %v, want EIO", err)
	}
	if err := task.Proc.PtraceCont(child.Proc, uint64(unix.SIGUSR1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-resumed:
	default:
		t.Fatal("CONT did not end the stop")
	}
	if inj := child.sig.injected; inj == nil || inj.Signo != unix.SIGUSR1 || inj.Code != SIUser || inj.Pid != int32(task.Proc.PID) {
		t.Fatalf("injected %+v, want SIGUSR1 from the tracer", inj)
	}
	if next, sig, _ := child.deliverSignals(); next != dieBySignal || sig != unix.SIGUSR1 {
		t.Errorf("after CONT: %v %v, want death by SIGUSR1", next, sig)
	}
	if _, err := task.Tracee(child.TID, true); !errors.Is(err, unix.ESRCH) {
		t.Errorf("Tracee of a running child: %v, want ESRCH", err)
	}
}

// TestTracerExitLetsTraceeGo: a tracer's exit detaches its tracees and
// resumes a stopped one without its signal, as Linux does.
func TestTracerExitLetsTraceeGo(t *testing.T) {
	task, _, _ := newThreadTask(t)
	child := tracedChild(t, task)
	resumed := stopOn(t, task, child, unix.SIGTERM)
	task.Proc.untraceAll()
	select {
	case <-resumed:
	default:
		t.Fatal("the tracer's exit did not end the stop")
	}
	if child.Proc.Parent() == nil || child.Proc.sig.trace.tracer != nil {
		t.Fatal("still traced")
	}
	if next, _, _ := child.deliverSignals(); next != deliveredAll {
		t.Errorf("after the tracer's exit: %v, want the signal dropped", next)
	}
}

// TestPokeReadOnly: POKE writes a read-only private mapping (as a
// breakpoint goes into text); addresses outside every mapping are EIO.
func TestPokeReadOnly(t *testing.T) {
	task, _, _ := newThreadTask(t)
	p := task.Proc
	const ro = userBase + 0x10_0000
	if _, err := p.AS.Map(ro, mm.PageSize, mm.PTERead, true); err != nil {
		t.Fatal(err)
	}
	if err := p.PokeWord(ro+8, 0x1122334455667788); err != nil {
		t.Fatalf("POKE read-only: %v", err)
	}
	if w, err := p.PeekWord(ro + 8); err != nil || w != 0x1122334455667788 {
		t.Errorf("PEEK: %#x %v", w, err)
	}
	for _, addr := range []uint64{0, ro + mm.PageSize - 4, ^uint64(0), ^uint64(0) - 7} {
		if _, err := p.PeekWord(addr); !errors.Is(err, unix.EIO) {
			t.Errorf("PEEK %#x: %v, want EIO", addr, err)
		}
		if err := p.PokeWord(addr, 1); !errors.Is(err, unix.EIO) {
			t.Errorf("POKE %#x: %v, want EIO", addr, err)
		}
	}
}

// TestTracedInitUnkillable: a traced init stops on SIGSTOP for its
// tracer, but PTRACE_KILL does not end it (SIGNAL_UNKILLABLE).
func TestTracedInitUnkillable(t *testing.T) {
	initTask, _, _ := newThreadTask(t)
	if initTask.Proc.PID != 1 {
		t.Skipf("first process has pid %d", initTask.Proc.PID)
	}
	tracer, err := initTask.Clone(CloneArgs{ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	if err := tracer.PtraceAttach(initTask.TID, false); err != nil {
		t.Fatal(err)
	}
	if err := tracer.PtraceAttach(initTask.TID, false); !errors.Is(err, unix.EPERM) {
		t.Errorf("ATTACH twice: %v, want EPERM", err)
	}
	if next, _, _ := initTask.deliverSignals(); next != waitWhileStopped {
		t.Fatalf("init's SIGSTOP: %v, want a stop", next)
	}
	initTask.Proc.PtraceKill()
	if initTask.Proc.Gone() {
		t.Fatal("PTRACE_KILL ended init")
	}
	if err := tracer.Proc.PtraceDetach(initTask.Proc, 0); err != nil {
		t.Fatal(err)
	}
	if next, _, _ := initTask.deliverSignals(); next != deliveredAll {
		t.Errorf("after DETACH: %v, want init running", next)
	}
}
