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

// AfterFunc implements tcpip.Clock.AfterFunc. The runtime runs a
// timer's function on a goroutine made when it fires, with the smallest
// stack, and netstack's TCP timer functions have frames larger than that
// (the retransmission timer's, which fires once a connection for nothing
// after its ACK disabled it, grew the stack of every one it ran on); that
// goroutine hands the function to an idle timerRunner, whose stack has
// grown once, or runs it itself when none is idle, so that no function
// waits behind another. The timer is the runtime's, without netstack's
// wrapper object.
func (stackClock) AfterFunc(d time.Duration, f func()) tcpip.Timer {
	return (*clockTimer)(time.AfterFunc(d, func() {
		select {
		case timerFuncs <- f:
		default:
			f()
		}
	}))
}

// clockTimer is a runtime timer as a tcpip.Timer.
type clockTimer time.Timer

// Stop implements tcpip.Timer.Stop.
func (t *clockTimer) Stop() bool { return (*time.Timer)(t).Stop() }

// Reset implements tcpip.Timer.Reset.
func (t *clockTimer) Reset(d time.Duration) { (*time.Timer)(t).Reset(d) }

// timerFuncs takes a fired timer's function to an idle timerRunner.
var timerFuncs = make(chan func())

// timerRunners is how many goroutines wait for timer functions: one runs
// while another is blocked in one (on an endpoint's lock).
const timerRunners = 2

func init() {
	for range timerRunners {
		go timerRunner()
	}
}

// timerRunner runs the timer functions handed to it.
func timerRunner() {
	for f := range timerFuncs {
		f()
	}
}
