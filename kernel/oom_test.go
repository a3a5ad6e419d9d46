package kernel

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// TestOOMWaitsForItsVictim: the OOM killer's SIGKILL ends its victim at
// once, while its thread has not yet left and released its memory (nor
// can its parent reap it yet). A second fault that finds no memory then
// must wait for that memory, not kill the next process: nginx was killed
// so after a memory hog, in CI, when a victim could be reaped first.
func TestOOMWaitsForItsVictim(t *testing.T) {
	task, _, _ := newThreadTask(t)
	hog, err := task.Clone(CloneArgs{ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	bystander, err := task.Clone(CloneArgs{ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	const hogBase, hogPages = 0x1000_0000, 100
	hog.Proc.Lock()
	if _, err := hog.Proc.AS.Map(hogBase, hogPages*mm.PageSize, mm.PTERead|mm.PTEWrite, true); err != nil {
		t.Fatal(err)
	}
	for i := uintptr(0); i < hogPages; i++ {
		if err := hog.Proc.AS.Fault(hogBase+i*mm.PageSize, mm.Write); err != nil {
			t.Fatal(err)
		}
	}
	hog.Proc.Unlock()

	first := make(chan *Process, 1)
	go func() { first <- oomKill(bystander.Proc) }()
	<-hog.Proc.Exited()
	// Its parent cannot reap it before its memory is released (Linux's
	// exit_mm before exit_notify), which the OOM killer waits for.
	if r, err := task.Wait(WaitFor{PID: hog.TID}, unix.WEXITED|unix.WNOHANG); r.PID != 0 || err != nil {
		t.Fatalf("the killed hog was reaped before it released its memory: pid %d, %v", r.PID, err)
	}
	second := make(chan *Process, 1)
	go func() { second <- oomKill(bystander.Proc) }()
	time.Sleep(50 * time.Millisecond)
	hog.leave()
	if r, err := task.Wait(WaitFor{PID: hog.TID}, unix.WEXITED|unix.WNOHANG); r.PID != hog.TID || err != nil {
		t.Fatalf("reaping the killed hog: pid %d, %v", r.PID, err)
	}
	for i, c := range []chan *Process{first, second} {
		if v := <-c; v != hog.Proc {
			pid := 0
			if v != nil {
				pid = v.PID
			}
			t.Errorf("fault %d: the OOM killer chose pid %d, want the hog's %d", i+1, pid, hog.Proc.PID)
		}
	}
	select {
	case <-bystander.Proc.Exited():
		t.Error("the bystander was killed too")
	case <-task.Proc.Exited():
		t.Error("the parent was killed too")
	default:
	}
}
