package net

import (
	"testing"
	"time"
	"unsafe"

	"gvisor.dev/gvisor/pkg/tcpip"
)

// TestMonotonic: a MonotonicTime made from nanoseconds is netstack's own
// for them, so stackClock's readings compare and subtract as its.
func TestMonotonic(t *testing.T) {
	if unsafe.Sizeof(tcpip.MonotonicTime{}) != unsafe.Sizeof(int64(0)) {
		t.Fatalf("tcpip.MonotonicTime is %d bytes, not an int64", unsafe.Sizeof(tcpip.MonotonicTime{}))
	}
	for _, ns := range []int64{0, 1, 999_999, 1_000_000_007, 1 << 62} {
		if got, want := monotonic(ns), (tcpip.MonotonicTime{}).Add(time.Duration(ns)); got != want {
			t.Errorf("monotonic(%d) = %v, want %v", ns, got, want)
		}
	}
	a := stackClock{}.NowMonotonic()
	b := stackClock{}.NowMonotonic()
	if b.Before(a) || b.Sub(a) < 0 {
		t.Errorf("readings go back: %v then %v", a, b)
	}
}

// TestAfterFunc: a timer's function runs once it fires, not after Stop,
// again after Reset, and never waits behind functions that block.
func TestAfterFunc(t *testing.T) {
	var c stackClock
	fired := make(chan int, 8)
	c.AfterFunc(time.Millisecond, func() { fired <- 1 })
	if got := <-fired; got != 1 {
		t.Fatalf("fired %d", got)
	}
	stopped := c.AfterFunc(time.Hour, func() { fired <- 2 })
	if !stopped.Stop() {
		t.Errorf("Stop of a pending timer: false")
	}
	reset := c.AfterFunc(time.Hour, func() { fired <- 3 })
	reset.Reset(time.Millisecond)
	if got := <-fired; got != 3 {
		t.Fatalf("after Reset fired %d, want 3", got)
	}
	release := make(chan struct{})
	for range timerRunners + 1 {
		c.AfterFunc(0, func() { <-release })
	}
	c.AfterFunc(time.Millisecond, func() { fired <- 4 })
	select {
	case got := <-fired:
		if got != 4 {
			t.Errorf("fired %d, want 4", got)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("a timer waited behind blocked ones")
	}
	close(release)
}
