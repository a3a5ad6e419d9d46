package net

import (
	"time"
	"unsafe"

	"gvisor.dev/gvisor/pkg/tcpip"
)

// stackClock is netstack's clock with one clock read per monotonic
// reading: netstack's own (tcpip.NewStdClock) reads time.Now, wall and
// monotonic clocks both, and subtracts a base through time.Time at each
// of the few dozen readings a request makes (segments received and sent,
// RTT, timers), where Linux reads jiffies or one clock. The reading is
// made a MonotonicTime as the int64 of nanoseconds that is its one field:
// its Add goes through time.Time twice, wall clock only, a hundred
// instructions a call.
type stackClock struct{}

// nanotime is the runtime's monotonic clock in ns (on the kernel, the
// time CSR converted).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now implements tcpip.Clock.Now.
func (stackClock) Now() time.Time { return time.Now() }

// NowMonotonic implements tcpip.Clock.NowMonotonic.
func (stackClock) NowMonotonic() tcpip.MonotonicTime {
	return monotonic(nanotime())
}

// monotonic is the MonotonicTime ns nanoseconds from its zero
// (TestMonotonic checks the layout).
func monotonic(ns int64) tcpip.MonotonicTime {
	return *(*tcpip.MonotonicTime)(unsafe.Pointer(&ns))
}

// AfterFunc implements tcpip.Clock.AfterFunc.
func (stackClock) AfterFunc(d time.Duration, f func()) tcpip.Timer {
	return tcpip.NewStdTimer(time.AfterFunc(d, f))
}
