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

// TestIdle: a hart that slept is charged a sample of the idle pc for
// every sampling time that passed, and its schedule moves past them.
func TestIdle(t *testing.T) {
	Ring.Head = 0
	Idle(0, 50_000, 0x900)
	if Ring.Head != 0 {
		t.Fatalf("off: head %d", Ring.Head)
	}
	Enable(1000, 10_000_000) // a period of 10000 ticks
	defer func() { period, next = 0, [MaxHarts]uint64{} }()
	Tick(0, 50_000, 0x100, 0) // next due at 60000
	Idle(0, 55_000, 0x900)    // woke before it: nothing
	Idle(0, 85_000, 0x900)    // 60000, 70000 and 80000 passed asleep
	Tick(0, 86_000, 0x104, 0) // not due until 90000
	Tick(0, 90_000, 0x108, 0)
	want := []Sample{{0x100, 0, 0}, {0x900, 0, 0}, {0x900, 0, 0}, {0x900, 0, 0}, {0x108, 0, 0}}
	if Ring.Head != uint64(len(want)) {
		t.Fatalf("head %d, want %d", Ring.Head, len(want))
	}
	for i, w := range want {
		if Ring.Samples[i] != w {
			t.Errorf("sample %d: %+v, want %+v", i, Ring.Samples[i], w)
		}
	}
	Idle(0, 100_000+10_000*5000, 0x900) // a long sleep: bounded
	if got := Ring.Head - uint64(len(want)); got != maxIdleSamples {
		t.Errorf("a long sleep recorded %d samples, want %d", got, maxIdleSamples)
	}
}
