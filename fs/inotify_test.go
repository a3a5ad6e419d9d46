package fs

import (
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
)

// TestInotifyConcurrentReaders has two goroutines read one instance
// while events are queued: each event is read once, and no read panics
// (a read looked at the queue, copied out and then took what it had
// seen, so a second reader took events the first had already taken, past
// the queue's end: found by the resource fuzzer, seed 13 at -smp 2).
func TestInotifyConcurrentReaders(t *testing.T) {
	tree := NewTree(NewDir(0o755))
	in, err := NewInotify(tree, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	const events = 20000
	var mu sync.Mutex
	seen := make(map[uint32]int)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 4*linux.SizeofInotifyEvent)
			for {
				n, err := in.ReadTo(NewBytes(buf))
				if err == unix.EAGAIN {
					select {
					case <-stop:
						return
					default:
						continue
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for off := 0; off < int(n); off += linux.SizeofInotifyEvent {
					ev := buf[off : off+linux.SizeofInotifyEvent]
					seen[uint32(ev[8])|uint32(ev[9])<<8|uint32(ev[10])<<16|uint32(ev[11])<<24]++ // the cookie
				}
				mu.Unlock()
			}
		}()
	}
	for i := uint32(1); i <= events; i++ {
		for {
			in.mu.Lock()
			full := len(in.queue) >= 1000
			if !full {
				in.queueLocked(inotifyEvent{wd: 1, mask: unix.IN_MODIFY, cookie: i})
			}
			in.mu.Unlock()
			if !full {
				break
			}
		}
	}
	for {
		in.mu.Lock()
		empty := len(in.queue) == 0
		in.mu.Unlock()
		if empty {
			break
		}
	}
	close(stop)
	wg.Wait()
	for i := uint32(1); i <= events; i++ {
		if seen[i] != 1 {
			t.Fatalf("event %d read %d times", i, seen[i])
		}
	}
}
