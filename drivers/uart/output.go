//go:build riscv64

package uart

import (
	"runtime"
	"sync"
	"time"

	arch "github.com/jiege-go/jiege/arch/riscv64"
)

const (
	// slice is how long Write transmits before it lets other goroutines
	// run: half the kernel's quantum, so that a process that only computes
	// waits no longer for the console's writer than for another process.
	slice = 5 * time.Millisecond
	// busyWait is how long Write sleeps when the transmitter takes no byte
	// (the host has not read the UART's output).
	busyWait = time.Millisecond
)

// writeMu keeps one writer's bytes together, as Linux's tty write lock.
var writeMu sync.Mutex

// Write sends p to the console's transmitter as ordinary kernel code, a
// FIFO's worth at a time: no trap holds the hart or the kernel lock for
// it, so a program writing megabytes to the console (seconds at the
// UART's pace) leaves every other process running.
func Write(p []byte) {
	writeMu.Lock()
	defer writeMu.Unlock()
	start := time.Now()
	for len(p) > 0 {
		n := arch.ConsoleTransmit(p)
		p = p[n:]
		switch {
		case n == 0:
			time.Sleep(busyWait)
			start = time.Now()
		case time.Since(start) >= slice:
			// Behind the goroutines waiting for the hart. A sleep would
			// not do: its timer has expired by the time the scheduler
			// looks, and the woken writer runs next, before them (a
			// process that only computed waited 44-103 ms at one hart,
			// now 6-14 ms, as on Linux).
			runtime.Gosched()
			start = time.Now()
		}
	}
}
