package fs

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Linux's pipe bounds: the default capacity (16 pages), the largest write
// that is atomic (PIPE_BUF), and the largest capacity F_SETPIPE_SZ takes
// without privilege (/proc/sys/fs/pipe-max-size).
const (
	PipeDefaultSize = 16 * 4096
	PipeBuf         = 4096
	PipeMaxSize     = 1 << 20
)

// pipe is the buffer between a pipe's ends.
type pipe struct {
	mu       sync.Mutex
	buf      []byte // unread bytes, in order
	size     int    // capacity
	readers  int
	writers  int
	notifier Notifier
	ino      uint64
}

// PipeEnd is the read or the write end of a pipe.
type PipeEnd struct {
	p     *pipe
	write bool
}

// NewPipe returns a pipe's read and write ends.
func NewPipe() (*PipeEnd, *PipeEnd) {
	p := &pipe{size: PipeDefaultSize, readers: 1, writers: 1, ino: nextIno.Add(1)}
	return &PipeEnd{p: p}, &PipeEnd{p: p, write: true}
}

// Read takes up to len(b) bytes; 0 when the buffer is empty and every
// writer has gone; EAGAIN while it is empty with a writer left.
func (e *PipeEnd) Read(b []byte) (int, error) {
	if e.write {
		return 0, unix.EBADF
	}
	p := e.p
	p.mu.Lock()
	if len(p.buf) == 0 {
		w := p.writers
		p.mu.Unlock()
		if w == 0 || len(b) == 0 {
			return 0, nil
		}
		return 0, unix.EAGAIN
	}
	n := copy(b, p.buf)
	p.buf = p.buf[n:]
	if len(p.buf) == 0 {
		p.buf = nil
	}
	fns := p.notifier.Changed()
	p.mu.Unlock()
	Notify(fns)
	return n, nil
}

// Write appends what fits: all of b or nothing when b is at most PipeBuf
// bytes (atomic), as much as there is room for otherwise. EPIPE when no
// reader is left; EAGAIN when nothing fits.
func (e *PipeEnd) Write(b []byte) (int, error) {
	if !e.write {
		return 0, unix.EBADF
	}
	p := e.p
	p.mu.Lock()
	if p.readers == 0 {
		p.mu.Unlock()
		return 0, unix.EPIPE
	}
	room := p.size - len(p.buf)
	if room <= 0 || (len(b) <= PipeBuf && room < len(b)) {
		p.mu.Unlock()
		if len(b) == 0 {
			return 0, nil
		}
		return 0, unix.EAGAIN
	}
	n := min(room, len(b))
	p.buf = append(p.buf, b[:n]...)
	fns := p.notifier.Changed()
	p.mu.Unlock()
	Notify(fns)
	return n, nil
}

// Readiness: the read end is readable with data or no writer (then also
// hung up); the write end writable with PIPE_BUF bytes of room, in error
// with no reader.
func (e *PipeEnd) Readiness(mask uint32) uint32 {
	p := e.p
	p.mu.Lock()
	defer p.mu.Unlock()
	var r uint32
	if e.write {
		if p.readers == 0 {
			r |= unix.EPOLLERR | unix.EPOLLOUT
		} else if p.size-len(p.buf) >= PipeBuf || len(p.buf) == 0 {
			r |= unix.EPOLLOUT | unix.EPOLLWRNORM
		}
	} else {
		if len(p.buf) > 0 {
			r |= unix.EPOLLIN | unix.EPOLLRDNORM
		}
		if p.writers == 0 {
			r |= unix.EPOLLHUP
		}
	}
	return r & (mask | unix.EPOLLERR | unix.EPOLLHUP)
}

// Watch calls notify on every change of the pipe until cancelled.
func (e *PipeEnd) Watch(notify func()) func() {
	p := e.p
	p.mu.Lock()
	id := p.notifier.Add(notify)
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.notifier.Remove(id)
		p.mu.Unlock()
	}
}

// Close drops this end: readers then see end of file, writers EPIPE.
func (e *PipeEnd) Close() error {
	p := e.p
	p.mu.Lock()
	if e.write {
		p.writers--
	} else {
		p.readers--
	}
	fns := p.notifier.Changed()
	p.mu.Unlock()
	Notify(fns)
	return nil
}

// Stat describes the pipe (a FIFO on Linux's pipefs).
func (e *PipeEnd) Stat() Stat {
	mode := uint32(0o600)
	return Stat{Dev: devPipes, Ino: e.p.ino, Mode: unix.S_IFIFO | mode, Nlink: 1, Blksize: 4096}
}

// Size returns the pipe's capacity (F_GETPIPE_SZ).
func (e *PipeEnd) Size() int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	return e.p.size
}

// SetSize sets the capacity (F_SETPIPE_SZ), rounded up to a power-of-two
// number of pages as Linux does; EBUSY when the data would not fit.
func (e *PipeEnd) SetSize(n int) (int, error) {
	if n <= 0 || n > PipeMaxSize {
		if n > PipeMaxSize {
			return 0, unix.EPERM
		}
		n = 4096
	}
	size := 4096
	for size < n {
		size <<= 1
	}
	p := e.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > size {
		return 0, unix.EBUSY
	}
	p.size = size
	return size, nil
}

// Unread returns the bytes waiting in the pipe (FIONREAD).
func (e *PipeEnd) Unread() int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	return len(e.p.buf)
}
