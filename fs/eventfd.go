package fs

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// EventFD is an eventfd(2) counter.
type EventFD struct {
	mu        sync.Mutex
	count     uint64
	nonblock  atomic.Bool
	semaphore bool
	notifier  Notifier
	ino       uint64
}

// NewEventFD returns an eventfd with an initial count.
func NewEventFD(initial uint64, nonblock, semaphore bool) *EventFD {
	e := &EventFD{count: initial, semaphore: semaphore, ino: nextIno.Add(1)}
	e.nonblock.Store(nonblock)
	return e
}

// Nonblock reports O_NONBLOCK.
func (e *EventFD) Nonblock() bool { return e.nonblock.Load() }

// SetNonblock sets O_NONBLOCK.
func (e *EventFD) SetNonblock(v bool) { e.nonblock.Store(v) }

// Read takes the counter (or one, in semaphore mode), waiting while it is 0.
func (e *EventFD) Read(p []byte) (int, error) {
	if len(p) < 8 {
		return 0, unix.EINVAL
	}
	for {
		e.mu.Lock()
		if e.count > 0 {
			v := e.count
			if e.semaphore {
				v = 1
			}
			e.count -= v
			fns := e.notifier.Changed()
			e.mu.Unlock()
			Notify(fns)
			binary.LittleEndian.PutUint64(p, v)
			return 8, nil
		}
		ch := e.notifier.Wait()
		e.mu.Unlock()
		if e.nonblock.Load() {
			return 0, unix.EAGAIN
		}
		<-ch
	}
}

// Write adds to the counter, waiting while it would overflow.
func (e *EventFD) Write(p []byte) (int, error) {
	if len(p) < 8 {
		return 0, unix.EINVAL
	}
	v := binary.LittleEndian.Uint64(p)
	if v == ^uint64(0) {
		return 0, unix.EINVAL
	}
	for {
		e.mu.Lock()
		if ^uint64(0)-1-e.count >= v {
			e.count += v
			fns := e.notifier.Changed()
			e.mu.Unlock()
			Notify(fns)
			return 8, nil
		}
		ch := e.notifier.Wait()
		e.mu.Unlock()
		if e.nonblock.Load() {
			return 0, unix.EAGAIN
		}
		<-ch
	}
}

// Readiness: readable while the count is non-zero, writable while it can grow.
func (e *EventFD) Readiness(mask uint32) uint32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var r uint32
	if e.count > 0 {
		r |= unix.EPOLLIN
	}
	if e.count < ^uint64(0)-1 {
		r |= unix.EPOLLOUT
	}
	return r & mask
}

// Watch calls notify on every change of the count.
func (e *EventFD) Watch(notify func()) func() {
	e.mu.Lock()
	id := e.notifier.Add(notify)
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		e.notifier.Remove(id)
		e.mu.Unlock()
	}
}

func (e *EventFD) Stat() Stat {
	return Stat{Dev: devAnon, Ino: e.ino, Mode: 0o600, Nlink: 1, Blksize: 4096}
}
func (e *EventFD) Close() error { return nil }
