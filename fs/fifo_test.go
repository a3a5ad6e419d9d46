package fs

import (
	"sync"
	"testing"
)

// TestFIFOOpenersMeet opens a named pipe for reading and for writing at
// the same moment, again and again: both ends must join one pipe. (Each
// opener once could find no end open and make a pipe of its own, and
// busybox sh's `echo > fifo & cat fifo` hung for good.)
func TestFIFOOpenersMeet(t *testing.T) {
	for i := 0; i < 20000; i++ {
		n := NewFIFO(0o644)
		var r, w *FIFOOpen
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() { defer wg.Done(); <-start; r, _ = OpenFIFO(n, true, false, false) }()
		go func() { defer wg.Done(); <-start; w, _ = OpenFIFO(n, false, true, false) }()
		close(start)
		wg.Wait()
		if r.p != w.p {
			t.Fatalf("round %d: the reader and the writer opened different pipes", i)
		}
		if !r.Partnered() || !w.Partnered() {
			t.Fatalf("round %d: an end is open without its partner", i)
		}
		r.File.Close()
		w.File.Close()
	}
}
