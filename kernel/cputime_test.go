package kernel

import (
	"testing"
	"time"
)

func TestCPUClockSplitsByTheSamples(t *testing.T) {
	var c cpuClock
	at := time.Now().Add(-400 * time.Millisecond)
	c.start(at)
	c.stop(at.Add(400 * time.Millisecond))
	if u, s := c.split(1, 3); u != 100*time.Millisecond || s != 300*time.Millisecond {
		t.Errorf("samples 1:3: %v user, %v system; want 100ms, 300ms", u, s)
	}
	// More samples later that weigh the other way: neither goes back.
	c.start(at.Add(time.Second))
	c.stop(at.Add(time.Second + 400*time.Millisecond))
	u, s := c.split(3, 1)
	if u+s != 800*time.Millisecond || u < 100*time.Millisecond || s < 300*time.Millisecond {
		t.Errorf("samples 3:1 after 1:3: %v user, %v system; want 800ms in all, neither less than before", u, s)
	}
	if u != 500*time.Millisecond || s != 300*time.Millisecond {
		t.Errorf("samples 3:1 after 1:3: %v user, %v system; want 500ms, 300ms", u, s)
	}
}

func TestCPUClockWithoutSamplesIsUserTime(t *testing.T) {
	var c cpuClock
	at := time.Now().Add(-400 * time.Millisecond)
	c.start(at)
	c.stop(at.Add(400 * time.Millisecond))
	if u, s := c.split(0, 0); u != 400*time.Millisecond || s != 0 {
		t.Errorf("no samples: %v user, %v system; want all user time", u, s)
	}
	// What was reported as user time stays user time (Linux's rule).
	if u, s := c.split(1, 3); u != 400*time.Millisecond || s != 0 {
		t.Errorf("samples after a report: %v user, %v system; want 400ms, 0", u, s)
	}
}

func TestCPUClockLeavesOutWaits(t *testing.T) {
	var c cpuClock
	c.start(time.Now())
	time.Sleep(20 * time.Millisecond)
	c.stop(time.Now())
	u, _ := c.split(0, 0)
	time.Sleep(50 * time.Millisecond) // stopped: not CPU time
	if again, _ := c.split(0, 0); again != u || u < 20*time.Millisecond || u > 50*time.Millisecond {
		t.Errorf("CPU time %v, then %v after a wait; want the same, about 20ms", u, again)
	}
	c.start(time.Now())
	time.Sleep(20 * time.Millisecond)
	if running, _ := c.split(0, 0); running < u+20*time.Millisecond {
		t.Errorf("while running: %v, want at least %v", running, u+20*time.Millisecond)
	}
}
