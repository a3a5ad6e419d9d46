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
