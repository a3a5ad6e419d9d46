package ipc

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

var root = Caller{PID: 1, Cred: &fs.Cred{}}

// Ids are handed out as Linux's ipc_idr_alloc does: indexes cycle through
// at least 64 before one is reused, the sequence number going up at each
// wrap, and a written *_next_id names the next id once.
func TestIDsCycleAsLinux(t *testing.T) {
	ns := NewNamespace(nil, time.Now)
	var ids []int
	for range 3 {
		id, err := ns.MsgGet(0, 0o600, root)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if ids[0] != 0 || ids[1] != 1 || ids[2] != 2 {
		t.Fatalf("first ids %v, want 0 1 2", ids)
	}
	if err := ns.MsgRemove(1, root); err != nil {
		t.Fatal(err)
	}
	if id, _ := ns.MsgGet(0, 0o600, root); id != 3 {
		t.Fatalf("after a removal the next id is %d, want 3 (indexes cycle)", id)
	}
	for _, id := range []int{0, 2, 3} {
		if err := ns.MsgRemove(id, root); err != nil {
			t.Fatal(err)
		}
	}
	// One queue in use: the indexes cycle through 64.
	for i := 4; i < 64; i++ {
		id, _ := ns.MsgGet(0, 0o600, root)
		if id != i {
			t.Fatalf("id %d, want %d", id, i)
		}
		ns.MsgRemove(id, root)
	}
	if id, _ := ns.MsgGet(0, 0o600, root); id != 1<<15 {
		t.Fatalf("after the wrap the id is %#x, want %#x (index 0, sequence 1)", id, 1<<15)
	}
	if _, _, err := ns.MsgStat(1, false, false, root); err != unix.EINVAL {
		t.Fatalf("IPC_STAT of the removed id 1: %v, want EINVAL", err)
	}
	if err := ns.Set("msg_next_id", "70000\n"); err != nil {
		t.Fatal(err)
	}
	if got := ns.Setting("msg_next_id"); got != "70000" {
		t.Fatalf("msg_next_id reads %q", got)
	}
	if id, _ := ns.MsgGet(0, 0o600, root); id != 70000 {
		t.Fatalf("id after msg_next_id=70000: %d", id)
	}
	if got := ns.Setting("msg_next_id"); got != "-1" {
		t.Fatalf("msg_next_id after use reads %q, want -1", got)
	}
}

// The msgmni setting bounds the queues: ENOSPC past it.
func TestQueueLimit(t *testing.T) {
	ns := NewNamespace(nil, time.Now)
	if err := ns.Set("msgmni", "2"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := ns.MsgGet(0, 0o600, root); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ns.MsgGet(0, 0o600, root); err != unix.ENOSPC {
		t.Fatalf("third queue: %v, want ENOSPC", err)
	}
	if err := ns.Set("msgmni", "40000"); err != unix.EINVAL {
		t.Fatalf("msgmni past IPCMNI: %v, want EINVAL", err)
	}
}

// A segment removed while mapped keeps its frames until its last mapping
// goes, then gives them back; its attach count is its mappings.
func TestSegmentGoesWithItsLastMapping(t *testing.T) {
	mem := mmtest.New(t, 64)
	ns := NewNamespace(mem, time.Now)
	as, err := mm.NewAddressSpace(mem)
	if err != nil {
		t.Fatal(err)
	}
	id, err := ns.ShmGet(0, 3*mm.PageSize, 0o600, root)
	if err != nil {
		t.Fatal(err)
	}
	at, err := ns.ShmAttach(id, 0, root)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := as.Mmap(0, at.Size, mm.Mapping{Perm: mm.PTERead | mm.PTEWrite, Held: at.Mem})
	ns.ShmAttached(at, err == nil, root)
	if err != nil {
		t.Fatal(err)
	}
	if err := as.CopyOut(addr+2*mm.PageSize, []byte("x")); err != nil {
		t.Fatal(err)
	}
	touched, _ := mem.Frames.Stats()
	ds, _, err := ns.ShmStat(id, false, false, root)
	if err != nil || ds.Nattch != 1 {
		t.Fatalf("attached: nattch %d, %v", ds.Nattch, err)
	}
	if err := ns.ShmRemove(id, root); err != nil {
		t.Fatal(err)
	}
	if ds, _, err := ns.ShmStat(id, false, false, root); err != nil || ds.Perm.Mode&shmDest == 0 {
		t.Fatalf("removed while attached: mode %o, %v; want SHM_DEST set", ds.Perm.Mode, err)
	}
	if _, err := as.DetachSegment(addr, ns.IsSegment); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ns.ShmStat(id, false, false, root); err != unix.EINVAL {
		t.Fatalf("after the last detach: %v, want EINVAL", err)
	}
	if after, _ := mem.Frames.Stats(); after != touched-1 {
		t.Fatalf("frames in use %d after the segment went, %d with its page touched", after, touched)
	}
	as.Release()
}

// SEM_UNDO adjustments are applied when the process exits, clamped at 0.
func TestSemUndoAtExit(t *testing.T) {
	ns := NewNamespace(nil, time.Now)
	id, err := ns.SemGet(0, 2, 0o600, root)
	if err != nil {
		t.Fatal(err)
	}
	child := Caller{PID: 7, Cred: &fs.Cred{}}
	var w Wait
	if _, err := ns.SemOp(id, []linux.Sembuf{{Num: 0, Op: 5, Flg: SemUndo}, {Num: 1, Op: 2, Flg: SemUndo}}, child, &w); err != nil {
		t.Fatal(err)
	}
	var w2 Wait
	if _, err := ns.SemOp(id, []linux.Sembuf{{Num: 1, Op: -2}}, root, &w2); err != nil {
		t.Fatal(err)
	}
	ns.ExitProcess(child.PID)
	vals, err := ns.SemGetAll(id, root)
	if err != nil {
		t.Fatal(err)
	}
	if vals[0] != 0 || vals[1] != 0 {
		t.Fatalf("values after the undo: %v, want [0 0]", vals)
	}
	if pid, _ := ns.SemCtl(id, 0, SemGetPid, 0, root); pid != child.PID {
		t.Fatalf("GETPID after the undo: %d, want the exiting process %d", pid, child.PID)
	}
}
