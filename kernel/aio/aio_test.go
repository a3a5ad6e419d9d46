package aio

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// The ring sizes Linux 6.12 gives (conform-linux/io/aio.c prints its nr
// for io_setup(8) at one hart: 127) and its refusals.
func TestRingSize(t *testing.T) {
	for _, c := range []struct {
		nr     uint32
		cpus   int
		length uintptr
		events int
		err    error
	}{
		{8, 1, 4096, 127, nil},
		{1, 4, 4096, 127, nil},
		{128, 1, 12288, 383, nil},
		{0, 1, 0, 0, unix.EINVAL},
		{^uint32(0), 1, 0, 0, unix.EINVAL},
		{MaxNr + 1, 1, 0, 0, unix.EAGAIN},
	} {
		length, events, err := RingSize(c.nr, c.cpus)
		if length != c.length || events != c.events || err != c.err {
			t.Errorf("RingSize(%d, %d) = %d, %d, %v; want %d, %d, %v", c.nr, c.cpus, length, events, err, c.length, c.events, c.err)
		}
	}
}

// Slots: a ring of n events takes n-1 requests until some are reaped;
// completions come out oldest first, and those put back come out again.
func TestContextSlots(t *testing.T) {
	var lim Limit
	var tab Table
	charged := mm.Charged.Total()
	c, err := tab.Setup(&lim, 0x1000, 4096, 3, 4)
	if err != nil || lim.Nr() != 3 || mm.Charged.Total() <= charged {
		t.Fatalf("Setup: %v, aio-nr %d, charged %d -> %d", err, lim.Nr(), charged, mm.Charged.Total())
	}
	for i := 0; i < 3; i++ {
		if !c.Reserve() {
			t.Fatalf("request %d refused", i)
		}
		c.Complete(Event{Data: uint64(i)})
	}
	if c.Reserve() {
		t.Fatal("a fourth request fits a ring of four")
	}
	es, _, dead := c.Take(2)
	if len(es) != 2 || es[0].Data != 0 || es[1].Data != 1 || dead {
		t.Fatalf("Take(2) = %v, %v", es, dead)
	}
	c.Untake(es[1:])
	if es, _, _ = c.Take(5); len(es) != 2 || es[0].Data != 1 || es[1].Data != 2 {
		t.Fatalf("after Untake, Take(5) = %v", es)
	}
	if !c.Reserve() {
		t.Fatal("no slot after reaping")
	}
	if _, ok := tab.Destroy(0x1000); !ok || lim.Nr() != 0 || mm.Charged.Total() != charged {
		t.Fatalf("Destroy: %v, aio-nr %d, charged %d, %d before", ok, lim.Nr(), mm.Charged.Total(), charged)
	}
	if _, _, dead := c.Take(1); !dead || c.Reserve() {
		t.Fatal("a destroyed context takes requests")
	}
}
