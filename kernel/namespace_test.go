package kernel

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// TestIPCNamespaceLifetime checks that a new IPC namespace keeps its
// objects while a process or an open file is in it, and gives them and
// its charge back with the last.
func TestIPCNamespaceLifetime(t *testing.T) {
	task, _, _ := newThreadTask(t)
	p := task.Proc
	root := p.Namespace(unix.CLONE_NEWIPC)
	before := mm.Charged.Total()
	const key = 0x5eed
	for _, keepFile := range []bool{false, true} {
		if err := task.Unshare(unix.CLONE_NEWIPC); err != nil {
			t.Fatal(err)
		}
		inner := p.Namespace(unix.CLONE_NEWIPC)
		if inner == root || inner.Ino < firstDynaIno {
			t.Fatalf("unshare left the process in %#x", inner.Ino)
		}
		if _, err := task.IPC().MsgGet(key, unix.IPC_CREAT|0o600, task.IPCCaller()); err != nil {
			t.Fatal(err)
		}
		if keepFile {
			inner.FileOpened()
		}
		if err := task.Setns(root, unix.CLONE_NEWIPC); err != nil {
			t.Fatal(err)
		}
		_, err := inner.ipc.MsgGet(key, 0, task.IPCCaller())
		switch {
		case keepFile && err != nil:
			t.Errorf("the queue of a namespace an open file keeps: %v", err)
		case !keepFile && err != unix.ENOENT:
			t.Errorf("the queue of a namespace no one is in: %v, want ENOENT", err)
		}
		if keepFile {
			inner.FileClosed()
			if _, err := inner.ipc.MsgGet(key, 0, task.IPCCaller()); err != unix.ENOENT {
				t.Errorf("the queue after the file closed: %v, want ENOENT", err)
			}
		}
		if got := mm.Charged.Total(); got != before {
			t.Errorf("charged %d bytes after the namespace went, %d before", got, before)
		}
	}
}

// TestTimensOffsetsNeedCapSysTime checks that a writer without
// CAP_SYS_TIME cannot set a time namespace's offsets, and that a
// namespace's offsets are frozen once a process is in it.
func TestTimensOffsetsNeedCapSysTime(t *testing.T) {
	task, _, _ := newThreadTask(t)
	p := task.Proc
	if err := task.Unshare(unix.CLONE_NEWTIME); err != nil {
		t.Fatal(err)
	}
	saved := p.Caps.Effective
	p.Caps.Effective &^= 1 << unix.CAP_SYS_TIME
	if err := p.SetTimensOffsets(p, []byte("monotonic 10 0\n")); err != unix.EPERM {
		t.Errorf("without CAP_SYS_TIME: %v, want EPERM", err)
	}
	p.Caps.Effective = saved
	if err := p.SetTimensOffsets(p, []byte("monotonic 10 0\nboottime 20 5\n")); err != nil {
		t.Fatal(err)
	}
	if got, want := string(p.TimensOffsets()), "monotonic          10         0\nboottime           20         5\n"; got != want {
		t.Errorf("timens_offsets %q, want %q", got, want)
	}
	if got := task.MonotonicOffset(); got != 0 {
		t.Errorf("the unsharing process's own clock moved by %v", got)
	}
	p.TimeForChildren().time.freeze(p.k)
	if err := p.SetTimensOffsets(p, []byte("monotonic 30 0\n")); err != unix.EACCES {
		t.Errorf("after a process entered: %v, want EACCES", err)
	}
}
