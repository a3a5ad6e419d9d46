package fs

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAsyncSignalsOncePerWrite: fcntl_misc's flake. A read, then a write
// before the read's notification ran: the I/O signal of an O_ASYNC read
// end is sent once for the write, as Linux sends one per write, not once
// more because the read's notification found the write's data. With a
// goroutine per notification both found the pipe readable.
func TestAsyncSignalsOncePerWrite(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // the notifications' goroutines wait for a yield
	r, w := NewPipeLimits().NewPipe(0, true)
	d := NewDescription(r, unix.O_RDONLY|unix.O_ASYNC)
	var sent, runs atomic.Int32
	d.WatchAsync(func() {
		if r.Readiness(unix.EPOLLIN) != 0 {
			sent.Add(1)
		}
		runs.Add(1)
	})
	settle := func(want int32) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); runs.Load() < want; {
			if time.Now().After(deadline) {
				t.Fatalf("%d notifications ran, want %d", runs.Load(), want)
			}
			runtime.Gosched()
		}
	}
	writeBytes(w, []byte("x"))
	settle(1)
	readBytes(r, make([]byte, 1))
	writeBytes(w, []byte("y")) // before the read's notification ran
	settle(2)
	time.Sleep(10 * time.Millisecond) // any late run too
	if got := sent.Load(); got != 2 {
		t.Fatalf("signals for two writes: %d, want 2", got)
	}
	d.WatchAsync(nil)
}
