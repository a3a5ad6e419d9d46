package profiling

import "testing"

// TestTick checks the sampling schedule: nothing while off, one sample
// per period on each hart, late interrupts not slowing the rate.
func TestTick(t *testing.T) {
	Ring.Head = 0
	Tick(0, 5, 0x100, 0)
	if Ring.Head != 0 || Next(0) != ^uint64(0) {
		t.Fatalf("off: head %d, next %d", Ring.Head, Next(0))
	}
	Enable(1000, 10_000_000) // a period of 10000 ticks
	defer func() { period, next = 0, [MaxHarts]uint64{} }()
	Tick(0, 50_000, 0x100, 0)     // the first interrupt samples
	Tick(0, 55_000, 0x104, 0)     // not due: a timer set for something else
	Tick(0, 60_300, 0x108, 7)     // 300 ticks late
	Tick(1, 60_400, 0x200, 0)     // another hart keeps its own schedule
	Tick(0, 70_000, 0x10c, 0)     // due at 70000, not 70300
	Tick(0, 200_000, 0x110, 0)    // periods missed are skipped
	Tick(MaxHarts, 300_000, 1, 0) // a hart beyond the table is ignored
	want := []Sample{{0x100, 0, 0}, {0x108, 7, 0}, {0x200, 0, 1}, {0x10c, 0, 0}, {0x110, 0, 0}}
	if Ring.Head != uint64(len(want)) {
		t.Fatalf("head %d, want %d", Ring.Head, len(want))
	}
	for i, w := range want {
		if Ring.Samples[i] != w {
			t.Errorf("sample %d: %+v, want %+v", i, Ring.Samples[i], w)
		}
	}
	if Next(0) != 210_000 || Next(1) != 70_400 {
		t.Errorf("next: hart 0 %d, hart 1 %d; want 210000, 70400", Next(0), Next(1))
	}
}
