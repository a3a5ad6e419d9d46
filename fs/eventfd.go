package fs

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
)

// EventFD is an eventfd(2) counter.
type EventFD struct {
	NoopSeek
	mu        sync.Mutex
	count     uint64
	semaphore bool
	notifier  Notifier
	ino       uint64
}

// NewEventFD returns an eventfd with an initial count.
func NewEventFD(initial uint64, semaphore bool) *EventFD {
	return &EventFD{count: initial, semaphore: semaphore, ino: nextIno.Add(1)}
}

// ReadTo takes the counter (or one, in semaphore mode) as 8 bytes.
func (e *EventFD) ReadTo(dst UserIO) (int64, error) { return ReadStaged(dst, e.read) }

// WriteFrom adds 8 bytes' value to the counter.
func (e *EventFD) WriteFrom(src UserIO) (int64, error) { return WriteStaged(src, e.write) }

// read takes the counter (or one, in semaphore mode); EAGAIN while it is 0.
func (e *EventFD) read(p []byte) (int, error) {
	if len(p) < 8 {
		return 0, unix.EINVAL
	}
	e.mu.Lock()
	if e.count == 0 {
		e.mu.Unlock()
		return 0, unix.EAGAIN
	}
	v := e.count
	if e.semaphore {
		v = 1
	}
	e.count -= v
	fns := e.notifier.Changed()
	e.mu.Unlock()
	Notify(fns)
	linux.PutUint64(p, v)
	return 8, nil
}

// write adds to the counter; EAGAIN while it would overflow. A write of
// other than 8 bytes is EINVAL, as Linux's: a longer one was taken as 8
// bytes written, and the system call waited to write the rest, adding the
// value until the counter was full (found by the resource fuzzer).
func (e *EventFD) write(p []byte) (int, error) {
	if len(p) != 8 {
		return 0, unix.EINVAL
	}
	v := linux.Uint64(p)
	if v == ^uint64(0) {
		return 0, unix.EINVAL
	}
	e.mu.Lock()
	if ^uint64(0)-1-e.count < v {
		e.mu.Unlock()
		return 0, unix.EAGAIN
	}
	e.count += v
	fns := e.notifier.Changed()
	e.mu.Unlock()
	Notify(fns)
	return 8, nil
}

// Signal adds n to the counter, short of its largest value, as Linux's
// eventfd_signal: the kernel's own writes (an AIO completion) never fail.
func (e *EventFD) Signal(n uint64) {
	e.mu.Lock()
	n = min(n, ^uint64(0)-e.count)
	e.count += n
	fns := e.notifier.Changed()
	e.mu.Unlock()
	Notify(fns)
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
	return e.notifier.Watch(&e.mu, notify)
}

func (e *EventFD) Stat() Stat { return AnonStat(e.ino) }

// NewAnonIno numbers a new anonymous inode (a file made outside fs: a pidfd).
func NewAnonIno() uint64 { return nextIno.Add(1) }

// AnonStat is what fstat reports of an anonymous inode.
func AnonStat(ino uint64) Stat {
	return Stat{Dev: devAnon, Ino: ino, Mode: 0o600, Nlink: 1, Blksize: 4096}
}
func (e *EventFD) Close() error { return nil }
