package kernel

import (
	iofs "io/fs"
	"slices"
	"testing"

	"github.com/jiege-go/jiege/fs"
)

// TestSetIDsOnExec checks execve's credential rules: a set-user-ID program
// runs with its owner as the effective uid, a set-group-ID one with its
// group only when group execute is set, and the saved ids take the
// effective ones.
func TestSetIDsOnExec(t *testing.T) {
	for _, c := range []struct {
		mode                   iofs.FileMode
		euid, egid, suid, sgid uint32
	}{
		{0o755, 1000, 1000, 1000, 1000},
		{0o755 | iofs.ModeSetuid, 0, 1000, 0, 1000},
		{0o755 | iofs.ModeSetgid, 1000, 50, 1000, 50},
		{0o745 | iofs.ModeSetgid, 1000, 1000, 1000, 1000},
	} {
		p := &Process{UID: 1000, GID: 1000, EUID: 1000, EGID: 1000, SUID: 7, SGID: 7}
		p.setIDsOnExec(&fs.Node{Mode: c.mode, UID: 0, GID: 50}, false)
		if p.EUID != c.euid || p.EGID != c.egid || p.SUID != c.suid || p.SGID != c.sgid || p.UID != 1000 || p.GID != 1000 {
			t.Errorf("mode %v: ids r %d/%d e %d/%d s %d/%d, want e %d/%d s %d/%d", c.mode, p.UID, p.GID,
				p.EUID, p.EGID, p.SUID, p.SGID, c.euid, c.egid, c.suid, c.sgid)
		}
	}
}

// TestNprocLeavesOutExitedProcesses: exit_group tells the parent (Exit)
// before the task leaves the table (Task.leave), so RLIMIT_NPROC's count
// must not see a process that has exited: its parent may have reaped it and
// gone on to setuid and execve (conform/limits/rlimit.c failed so, once in
// a loaded run).
func TestNprocLeavesOutExitedProcesses(t *testing.T) {
	const uid = 54321
	k := New(Config{})
	p := &Process{PID: 1 << 30, UID: uid, EUID: uid, SUID: uid, k: k}
	p.ids = &pidNumbers{ns: k.rootNS.pidForChildren.pid, nums: []int{p.PID}}
	task := &Task{TID: p.PID, ids: p.ids, Proc: p}
	k.addTask(task)
	if n := k.tasksOfUser(uid, nil); n != 1 {
		t.Fatalf("running: %d tasks of uid %d counted, want 1", n, uid)
	}
	p.gone.Store(true) // what Exit sets before it tells the parent
	if n := k.tasksOfUser(uid, nil); n != 0 {
		t.Errorf("exited, still in the task table: %d tasks counted, want 0", n)
	}
}

// TestPIDsWrap checks that ids wrap past PIDMax to pidWrapStart and then
// skip those a task, a process or a process group still holds.
func TestPIDsWrap(t *testing.T) {
	k := New(Config{})
	k.lastPID.Store(PIDMax - 2)
	holder := &Process{PID: 5000}
	holder.sig.pgid = pidWrapStart + 2
	k.processes[holder.PID] = holder
	k.tasks[pidWrapStart+1] = &Task{TID: pidWrapStart + 1}
	var got []int
	for range 3 {
		ids, err := k.allocIDs(k.rootNS.pidForChildren.pid, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids.nums[0])
	}
	want := []int{PIDMax - 1, pidWrapStart, pidWrapStart + 3}
	if !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
}
