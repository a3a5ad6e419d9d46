package kernel

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// TestPosixTimersBounded: a process holds at most RLIMIT_SIGPENDING
// timers, each charged to the kernel-wide budget; a deleted timer whose
// signal is still queued keeps its place and its charge until the signal
// is taken (and dropped, the timer being gone), and exit gives back all.
func TestPosixTimersBounded(t *testing.T) {
	task, _, _ := newThreadTask(t)
	p := task.Proc
	if _, err := p.SetLimit(p, unix.RLIMIT_SIGPENDING, Rlimit{3, 3}); err != nil {
		t.Fatal(err)
	}
	before := mm.Charged.Total()
	task.SetMask(Bit(unix.SIGUSR1))
	ev := &TimerEvent{Notify: linux.SigevSignal, Signo: unix.SIGUSR1, Value: 9}
	var ids []int32
	for range 3 {
		id, err := task.CreateTimer(unix.CLOCK_MONOTONIC, ev)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := task.CreateTimer(unix.CLOCK_MONOTONIC, ev); err != unix.EAGAIN {
		t.Fatalf("a fourth timer at RLIMIT_SIGPENDING 3: %v, want EAGAIN", err)
	}
	if got := mm.Charged.Total() - before; got != 3*posixTimerCharge {
		t.Errorf("charged %d for 3 timers, want %d", got, 3*posixTimerCharge)
	}

	if _, _, err := task.SetTimer(ids[0], false, time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for task.Pending()&Bit(unix.SIGUSR1) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := p.DeleteTimer(ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := task.CreateTimer(unix.CLOCK_MONOTONIC, ev); err != unix.EAGAIN {
		t.Fatalf("with a deleted timer's signal queued: %v, want EAGAIN", err)
	}
	if info, err := task.TakeSignal(Bit(unix.SIGUSR1), time.Now()); err != unix.EAGAIN {
		t.Fatalf("a deleted timer's signal was delivered: %+v, %v", info, err)
	}
	if _, err := task.CreateTimer(unix.CLOCK_MONOTONIC, ev); err != nil {
		t.Fatalf("once the signal is dropped: %v", err)
	}
	p.Exit(0)
	if got := mm.Charged.Total() - before; got != 0 {
		t.Errorf("still charged %d after exit", got)
	}
}
