package kernel

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

// TestTwoKernels: two kernels in one process share nothing: each has its
// own tree and its own init as pid 1, counts pids on its own, finds only
// its own processes, and its signals reach only its own processes.
func TestTwoKernels(t *testing.T) {
	type machine struct {
		k    *Kernel
		tree *fs.Tree
		init *Task
	}
	var ms [2]machine
	for i := range ms {
		mem := mmtest.New(t, 256)
		as, err := mm.NewAddressSpace(mem)
		if err != nil {
			t.Fatal(err)
		}
		k := New(Config{UserMemory: mem})
		tree := fs.NewTree(fs.NewDir(0o755))
		init := k.NewProcess(tree, as, &fs.FDTable{}, "/init", []string{"/init"}, &arch.Frame{})
		if init.Proc.PID != 1 || init.Kernel() != k {
			t.Fatalf("kernel %d: init has pid %d", i, init.Proc.PID)
		}
		ms[i] = machine{k, tree, init}
	}
	a, b := ms[0], ms[1]
	fork := func(m machine) *Task {
		t.Helper()
		c, err := m.init.Clone(CloneArgs{ExitSignal: int(unix.SIGCHLD)})
		if err != nil {
			t.Fatal(err)
		}
		if c.Kernel() != m.k {
			t.Fatal("a child in another kernel than its parent's")
		}
		return c
	}
	a2, a3, b2 := fork(a), fork(a), fork(b)
	if a2.Proc.PID != 2 || a3.Proc.PID != 3 || b2.Proc.PID != 2 {
		t.Fatalf("pids %d and %d in one kernel, %d in the other; want 2, 3 and 2", a2.Proc.PID, a3.Proc.PID, b2.Proc.PID)
	}
	if a.k.ProcessByID(2) != a2.Proc || b.k.ProcessByID(2) != b2.Proc || b.k.ProcessByID(3) != nil || b.k.TaskByID(3) != nil {
		t.Error("a kernel finds a process of the other")
	}
	for _, c := range []struct {
		m    machine
		want []*Process
	}{{a, []*Process{a.init.Proc, a2.Proc, a3.Proc}}, {b, []*Process{b.init.Proc, b2.Proc}}} {
		got := c.m.k.Processes()
		if len(got) != len(c.want) {
			t.Fatalf("%d processes listed, want %d", len(got), len(c.want))
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("process %d listed is pid %d of another", i, got[i].PID)
			}
		}
	}

	// kill(2, SIGKILL) and kill(-1, SIGKILL) in a end a's processes only.
	if err := a.init.Kill(2, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := a.init.Kill(-1, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Task{a2, a3} {
		select {
		case <-c.Proc.Exited():
		default:
			t.Errorf("pid %d of the killing kernel lives on", c.Proc.PID)
		}
	}
	select {
	case <-b2.Proc.Exited():
		t.Error("a kill in one kernel ended a process of the other")
	default:
	}
	// A terminal's ^C in b reaches b's group only.
	for _, m := range ms {
		m.init.Proc.SetAction(unix.SIGINT, SigAction{Handler: 0x5000})
	}
	b.k.SignalGroup(b.init.Proc.PGID(), unix.SIGINT)
	if b.init.Pending()&Bit(unix.SIGINT) == 0 {
		t.Error("a group signal missed its own kernel's init")
	}
	if a.init.Pending()&Bit(unix.SIGINT) != 0 {
		t.Error("a group signal in one kernel reached the other's init")
	}

	if err := a.tree.Create(nil, "/only-in-a", &fs.Node{Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.tree.Lookup(nil, "/only-in-a", true); err != nil {
		t.Fatalf("the file is missing from its own tree: %v", err)
	}
	if _, err := b.tree.Lookup(nil, "/only-in-a", true); !errors.Is(err, unix.ENOENT) {
		t.Errorf("the other tree: %v, want ENOENT", err)
	}
}
