package kernel

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Futexes: waiters keyed by address space and virtual address (private
// futexes; shared ones across processes come with shared memory).
type futexKey struct {
	proc *Process
	addr uintptr
}

type futexWaiter struct {
	wake   chan struct{}
	bitset uint32
}

var (
	futexMu     sync.Mutex
	futexQueues = map[futexKey][]*futexWaiter{}
)

// FutexWait blocks while the 32-bit word at addr holds val, until a wake
// matching bitset or the timeout (none when negative).
func (t *Task) FutexWait(addr uintptr, val, bitset uint32, timeout time.Duration) error {
	if addr%4 != 0 {
		return unix.EINVAL
	}
	key := futexKey{t.Proc, addr}
	futexMu.Lock()
	b := make([]byte, 4)
	t.Proc.Lock()
	err := t.Proc.AS.CopyIn(addr, b)
	t.Proc.Unlock()
	if err != nil {
		futexMu.Unlock()
		return unix.EFAULT
	}
	if uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24 != val {
		futexMu.Unlock()
		return unix.EAGAIN
	}
	w := &futexWaiter{wake: make(chan struct{}), bitset: bitset}
	futexQueues[key] = append(futexQueues[key], w)
	futexMu.Unlock()

	var deadline time.Time
	if timeout >= 0 {
		deadline = time.Now().Add(timeout)
	}
	err = t.Block(w.wake, deadline)
	if err != nil && !futexRemove(key, w) {
		return nil // woken at the same moment
	}
	return err
}

// futexRemove takes w off its queue, reporting whether it was still there.
func futexRemove(key futexKey, w *futexWaiter) bool {
	futexMu.Lock()
	defer futexMu.Unlock()
	q := futexQueues[key]
	for i, x := range q {
		if x == w {
			futexQueues[key] = append(q[:i], q[i+1:]...)
			if len(futexQueues[key]) == 0 {
				delete(futexQueues, key)
			}
			return true
		}
	}
	return false
}

// FutexWake wakes up to n waiters on addr whose bitset matches, returning
// how many woke.
func (t *Task) FutexWake(addr uintptr, n int, bitset uint32) int {
	key := futexKey{t.Proc, addr}
	futexMu.Lock()
	defer futexMu.Unlock()
	q := futexQueues[key]
	woken := 0
	kept := q[:0]
	for _, w := range q {
		if woken < n && w.bitset&bitset != 0 {
			close(w.wake)
			woken++
			continue
		}
		kept = append(kept, w)
	}
	if len(kept) == 0 {
		delete(futexQueues, key)
	} else {
		futexQueues[key] = kept
	}
	return woken
}
