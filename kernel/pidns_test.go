package kernel

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// TestPIDNamespaceNumbers checks that a child cloned with CLONE_NEWPID is
// pid 1 of its namespace with no parent there, that its child is 2 there
// and has its global id above, and that numbers translate both ways.
func TestPIDNamespaceNumbers(t *testing.T) {
	task, _, _ := newThreadTask(t)
	c, err := task.Clone(CloneArgs{Flags: unix.CLONE_NEWPID, ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Proc.Getpid() != 1 || c.Gettid() != 1 || c.Proc.NumberOf(c.Proc.ParentPID()) != 0 {
		t.Errorf("in its namespace: pid %d, tid %d, ppid %d; want 1, 1, 0",
			c.Proc.Getpid(), c.Gettid(), c.Proc.NumberOf(c.Proc.ParentPID()))
	}
	if task.Proc.NumberOf(c.TID) != c.TID || c.TID == 1 {
		t.Errorf("the parent sees the child as %d, its global id %d", task.Proc.NumberOf(c.TID), c.TID)
	}
	g, err := c.Clone(CloneArgs{ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	if g.Proc.Getpid() != 2 || c.Proc.NumberOf(g.TID) != 2 || task.Proc.NumberOf(g.TID) != g.TID ||
		c.Proc.NumberOf(g.Proc.ParentPID()) != 1 {
		t.Errorf("grandchild: pid %d, %d in its parent's namespace, %d in the root's (global %d), parent %d",
			g.Proc.Getpid(), c.Proc.NumberOf(g.TID), task.Proc.NumberOf(g.TID), g.TID, c.Proc.NumberOf(g.Proc.ParentPID()))
	}
	if c.FindProcess(2) != g.Proc || c.FindProcess(1) != c.Proc || c.FindProcess(task.Proc.PID+100) != nil {
		t.Error("numbers of the namespace name the wrong processes")
	}
	if c.Proc.NumberOf(task.Proc.PID) != 0 {
		t.Error("the namespace sees a process above it")
	}
	if err := task.Kill(0, 0); err != nil {
		t.Errorf("kill(0) in group 0: %v", err) // init's group, which its children share
	}
	if r, err := c.PIDParent(c.Proc.pidNS().self); err != unix.EPERM || r != nil {
		t.Errorf("NS_GET_PARENT from inside: %v, want EPERM", err)
	}
	if r, err := task.PIDParent(c.Proc.pidNS().self); err != nil || r != task.Proc.pidNS().self {
		t.Errorf("NS_GET_PARENT from above: %v, %v", r, err)
	}
}

// TestPIDNamespaceInitDeath checks a namespace's init: the signals it
// has no handler for are dropped when sent from inside, SIGKILL from
// above ends it, the others of the namespace are killed then and no
// process may enter (ENOMEM), and its parent hears of its death only once
// they are reaped.
func TestPIDNamespaceInitDeath(t *testing.T) {
	task, _, _ := newThreadTask(t)
	c, err := task.Clone(CloneArgs{Flags: unix.CLONE_NEWPID, ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Clone(CloneArgs{ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Kill(1, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(1, unix.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if c.Proc.Gone() {
		t.Fatal("init died of a signal from inside its namespace")
	}
	if err := task.Kill(c.TID, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !c.Proc.Gone() {
		t.Fatal("init lived through SIGKILL from above")
	}
	c.Leave()
	select {
	case <-g.Proc.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("the namespace's other process lived on")
	}
	if _, err := task.Kernel().allocIDs(c.Proc.pidNS(), nil, task.Proc); err != unix.ENOMEM {
		t.Errorf("a process entering a dead namespace: %v, want ENOMEM", err)
	}
	if r, err := task.Wait(WaitFor{PID: c.TID}, WaitNoHang|WaitExited); err != nil || r.PID != 0 {
		t.Fatalf("init reported before its namespace emptied: %+v, %v", r, err)
	}
	g.Leave()
	r, err := task.Wait(WaitFor{PID: c.TID}, WaitExited)
	if err != nil || r.PID != c.TID || r.Code != CldKilled || r.Status != int32(unix.SIGKILL) {
		t.Errorf("wait: %+v, %v; want pid %d killed by SIGKILL", r, err, c.TID)
	}
}

// TestPIDNamespaceDepthAndSetTID checks the nesting limit (ENOSPC below
// level 32), that a second unshare(CLONE_NEWPID) before a child is
// EINVAL, that a namespace no one keeps gives its charge back, and
// clone3's set_tid per level.
func TestPIDNamespaceDepthAndSetTID(t *testing.T) {
	task, _, _ := newThreadTask(t)
	root := task.Proc.pidNS().self
	before := mm.Charged.Total()
	if err := task.Unshare(unix.CLONE_NEWPID); err != nil {
		t.Fatal(err)
	}
	if err := task.Unshare(unix.CLONE_NEWPID); err != unix.EINVAL {
		t.Errorf("a second unshare: %v, want EINVAL", err)
	}
	if err := task.Setns(root, unix.CLONE_NEWPID); err != nil {
		t.Fatal(err)
	}
	if got := mm.Charged.Total(); got != before {
		t.Errorf("charged %d bytes after the namespace went, %d before", got, before)
	}
	init := task
	for i := 1; i <= maxPIDNSLevel; i++ {
		c, err := init.Clone(CloneArgs{Flags: unix.CLONE_NEWPID, ExitSignal: int(unix.SIGCHLD)})
		if err != nil {
			t.Fatalf("level %d: %v", i, err)
		}
		init = c
	}
	if _, err := init.Clone(CloneArgs{Flags: unix.CLONE_NEWPID, ExitSignal: int(unix.SIGCHLD)}); err != unix.ENOSPC {
		t.Errorf("level %d: %v, want ENOSPC", maxPIDNSLevel+1, err)
	}

	newPID := CloneArgs{Flags: unix.CLONE_NEWPID, ExitSignal: int(unix.SIGCHLD)}
	for _, c := range []struct {
		setTID []int
		want   error
	}{{[]int{2, 500}, unix.EINVAL}, {[]int{1, 500, 7}, unix.EINVAL}, {[]int{1, 0}, unix.EINVAL}} {
		newPID.SetTID = c.setTID
		if _, err := task.Clone(newPID); err != c.want {
			t.Errorf("set_tid %v: %v, want %v", c.setTID, err, c.want)
		}
	}
	newPID.SetTID = []int{1, 500}
	c, err := task.Clone(newPID)
	if err != nil || c.TID != 500 || c.Proc.Getpid() != 1 {
		t.Fatalf("set_tid [1 500]: %v, global %d, pid %d", err, c.TID, c.Proc.Getpid())
	}
	if _, err := task.Clone(newPID); err != unix.EEXIST {
		t.Errorf("set_tid [1 500] again: %v, want EEXIST", err)
	}
	task.Proc.Caps.Effective = 0
	if _, err := task.Clone(CloneArgs{ExitSignal: int(unix.SIGCHLD), SetTID: []int{501}}); err != unix.EPERM {
		t.Errorf("set_tid without privilege: %v, want EPERM", err)
	}
}
