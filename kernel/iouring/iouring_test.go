package iouring

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

func TestSizes(t *testing.T) {
	for _, c := range []struct {
		entries, flags, cq uint32
		sq, wantCQ         uint32
		err                error
	}{
		{entries: 0, err: unix.EINVAL},
		{entries: 1, sq: 1, wantCQ: 2},
		{entries: 5, sq: 8, wantCQ: 16},
		{entries: MaxEntries, sq: MaxEntries, wantCQ: MaxCQEntries},
		{entries: MaxEntries + 1, err: unix.EINVAL},
		{entries: 1 << 31, flags: linux.IORingSetupClamp, sq: MaxEntries, wantCQ: MaxCQEntries},
		{entries: 4, flags: linux.IORingSetupCQSize, err: unix.EINVAL},
		{entries: 4, flags: linux.IORingSetupCQSize, cq: 2, err: unix.EINVAL},
		{entries: 4, flags: linux.IORingSetupCQSize, cq: 100, sq: 4, wantCQ: 128},
		{entries: 4, flags: linux.IORingSetupCQSize, cq: MaxCQEntries + 1, err: unix.EINVAL},
		{entries: 4, flags: linux.IORingSetupCQSize | linux.IORingSetupClamp, cq: 1 << 31, sq: 4, wantCQ: MaxCQEntries},
	} {
		p := linux.IOUringParams{Flags: c.flags, CQEntries: c.cq}
		sq, cq, err := Sizes(c.entries, &p)
		if err != c.err || sq != c.sq || cq != c.wantCQ {
			t.Errorf("Sizes(%d, flags %#x, cq %d) = %d, %d, %v; want %d, %d, %v", c.entries, c.flags, c.cq, sq, cq, err, c.sq, c.wantCQ, c.err)
		}
	}
}

// program is what a program sees of a ring: the words of its mapping.
type program struct {
	t *testing.T
	r *Ring
	p linux.IOUringParams
}

func (g program) word(off uint32) *uint32 {
	return (*uint32)(unsafe.Add(mm.Ptr(g.r.rings.Frame(uintptr(off)/mm.PageSize)), uintptr(off)%mm.PageSize))
}

// queue puts a no-op carrying data on the submission ring at entry slot.
func (g program) queue(slot uint32, data uint64) {
	sqe := linux.IOUringSQE{Opcode: linux.IORingOpNop, UserData: data}
	b := linux.AsBytes(&sqe)
	copy(unsafe.Slice((*byte)(unsafe.Add(mm.Ptr(g.r.sqes.Frame(0)), uintptr(slot)*sqeSize)), len(b)), b)
	tail := *g.word(g.p.SQOff.Tail)
	*(*uint32)(unsafe.Add(unsafe.Pointer(g.word(g.p.SQOff.Array)), 4*(tail&(g.r.SQEntries-1)))) = slot
	*g.word(g.p.SQOff.Tail) = tail + 1
}

func newRing(t *testing.T, mem mm.Memory, entries uint32) program {
	t.Helper()
	g := program{t: t}
	r, err := New(mem, entries, &g.p)
	if err != nil {
		t.Fatal(err)
	}
	g.r = r
	return g
}

func TestRingSubmitAndComplete(t *testing.T) {
	mem := mmtest.New(t, 64)
	g := newRing(t, mem, 3)
	if g.p.SQEntries != 4 || g.p.CQEntries != 8 || *g.word(g.p.SQOff.RingMask) != 3 || *g.word(g.p.CQOff.RingEntries) != 8 {
		t.Fatalf("params %+v; ring mask %d", g.p, *g.word(g.p.SQOff.RingMask))
	}
	g.queue(1, 11)
	g.queue(0, 10)
	g.queue(7, 99) // an index past the entries: dropped
	if n := g.r.Pending(); n != 3 {
		t.Fatalf("pending %d, want 3", n)
	}
	var sqe linux.IOUringSQE
	var got []uint64
	for g.r.NextSQE(&sqe) {
		got = append(got, sqe.UserData)
		g.r.Post(linux.IOUringCQE{UserData: sqe.UserData, Res: int32(len(got))})
	}
	if len(got) != 2 || got[0] != 11 || got[1] != 10 || *g.word(g.p.SQOff.Dropped) != 1 {
		t.Fatalf("took %v, dropped %d; want [11 10], 1", got, *g.word(g.p.SQOff.Dropped))
	}
	// Posted completions are counted at once, but waiters wake at Flush.
	n, wake := g.r.Ready()
	if n != 2 {
		t.Fatalf("ready %d, want 2", n)
	}
	select {
	case <-wake:
		t.Fatal("woken before the flush")
	default:
	}
	g.r.Flush()
	<-wake
	cqe := (*linux.IOUringCQE)(unsafe.Add(unsafe.Pointer(g.word(g.p.CQOff.CQEs)), cqeSize))
	if cqe.UserData != 10 || cqe.Res != 2 {
		t.Fatalf("second completion %+v", *cqe)
	}
	// A full completion ring counts what it cannot hold.
	for i := 0; i < 7; i++ {
		g.r.Post(linux.IOUringCQE{UserData: 50})
	}
	if n, _ := g.r.Ready(); n != 8 || *g.word(g.p.CQOff.Overflow) != 1 {
		t.Fatalf("ready %d overflow %d; want 8, 1", n, *g.word(g.p.CQOff.Overflow))
	}
	*g.word(g.p.CQOff.Head) += 8 // the program consumes them
	if n, _ := g.r.Ready(); n != 0 {
		t.Fatalf("ready %d after consuming", n)
	}
}

func TestRingMemory(t *testing.T) {
	mem := mmtest.New(t, 64)
	inUse, _ := mem.Frames.Stats()
	g := newRing(t, mem, 8)
	for _, c := range []struct {
		off  uint64
		want *mm.SharedMemory
	}{
		{linux.IORingOffSQRing, g.r.rings},
		{linux.IORingOffCQRing, g.r.rings},
		{linux.IORingOffSQEs, g.r.sqes},
		{linux.IORingOffSQEs | 0x2345000, g.r.sqes}, // bits outside IORING_OFF_MMAP_MASK
		{0x4000000, g.r.rings},                      // below the mask's bits: the rings
		{0x18000000, nil},
	} {
		s, err := g.r.MappedMemory(c.off, mm.PageSize)
		if s != c.want || (c.want == nil) != (err != nil) {
			t.Errorf("MappedMemory(%#x) = %p, %v", c.off, s, err)
		}
	}
	g.r.sqes.Frame(0)
	if err := g.r.RegisterBuffers([]Buffer{{Addr: 4096, Len: 100}}); err != nil {
		t.Fatal(err)
	}
	if err := g.r.RegisterBuffers([]Buffer{{Addr: 4096, Len: 100}}); err != unix.EBUSY {
		t.Fatalf("second registration: %v, want EBUSY", err)
	}
	if b, ok := g.r.Buffer(0); !ok || b.Len != 100 {
		t.Fatalf("buffer 0: %+v %v", b, ok)
	}
	if _, ok := g.r.Buffer(1); ok {
		t.Fatal("buffer 1 exists")
	}
	// Closing the ring, which no one maps, gives back every frame.
	g.r.Close()
	if now, _ := mem.Frames.Stats(); now != inUse {
		t.Fatalf("%d frames in use after close, %d before the ring", now, inUse)
	}
}

func TestNewRefuses(t *testing.T) {
	mem := mmtest.New(t, 16)
	for _, p := range []linux.IOUringParams{
		{Flags: linux.IORingSetupSQPoll},
		{Flags: linux.IORingSetupDeferTaskrun},
		{Resv: [3]uint32{0, 0, 1}},
	} {
		if _, err := New(mem, 4, &p); err != unix.EINVAL {
			t.Errorf("New with %+v: %v, want EINVAL", p, err)
		}
	}
}

// TestSubmitLock: a second submitter waits in the caller's wait, whose
// error (a signal's EINTR) it returns without the lock, and gets the lock
// once the first releases it.
func TestSubmitLock(t *testing.T) {
	g := newRing(t, mmtest.New(t, 16), 2)
	never := func(<-chan struct{}) error { t.Fatal("waited for a free lock"); return nil }
	if err := g.r.LockSubmit(never); err != nil {
		t.Fatal(err)
	}
	interrupted := func(<-chan struct{}) error { return unix.EINTR }
	if err := g.r.LockSubmit(interrupted); err != unix.EINTR {
		t.Fatalf("second submitter: %v, want EINTR", err)
	}
	got := make(chan error)
	go func() { got <- g.r.LockSubmit(func(done <-chan struct{}) error { <-done; return nil }) }()
	g.r.UnlockSubmit()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	g.r.UnlockSubmit()
}
