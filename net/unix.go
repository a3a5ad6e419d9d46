package net

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// unixPairBuffer bounds the bytes in flight in each direction.
const unixPairBuffer = 256 << 10

// unixPair is a connected pair of stream sockets (socketpair(2)): end i
// reads buf[i] and writes buf[1-i].
type unixPair struct {
	mu       sync.Mutex
	buf      [2][]byte
	closed   [2]bool
	notifier fs.Notifier // both ends' waiters and watches
}

// UnixConn is one end of a socketpair.
type UnixConn struct {
	p   *unixPair
	end int
	ino uint64
}

// SocketPair returns two connected stream sockets.
func SocketPair() (*UnixConn, *UnixConn) {
	p := &unixPair{}
	return &UnixConn{p: p, end: 0, ino: socketIno.Add(1)}, &UnixConn{p: p, end: 1, ino: socketIno.Add(1)}
}

// Read receives what the peer wrote; 0 once the peer closed and all is
// read; EAGAIN while nothing is there.
func (c *UnixConn) Read(b []byte) (int, error) {
	p := c.p
	p.mu.Lock()
	if len(p.buf[c.end]) == 0 {
		closed := p.closed[1-c.end]
		p.mu.Unlock()
		if closed || len(b) == 0 {
			return 0, nil
		}
		return 0, unix.EAGAIN
	}
	n := copy(b, p.buf[c.end])
	p.buf[c.end] = p.buf[c.end][n:]
	fns := p.notifier.Changed()
	p.mu.Unlock()
	fs.Notify(fns)
	return n, nil
}

// Write sends what fits of b to the peer; EAGAIN when nothing does, EPIPE
// once the peer closed.
func (c *UnixConn) Write(b []byte) (int, error) {
	p := c.p
	p.mu.Lock()
	if p.closed[1-c.end] {
		p.mu.Unlock()
		return 0, unix.EPIPE
	}
	room := unixPairBuffer - len(p.buf[1-c.end])
	if room <= 0 {
		p.mu.Unlock()
		return 0, unix.EAGAIN
	}
	n := min(room, len(b))
	p.buf[1-c.end] = append(p.buf[1-c.end], b[:n]...)
	fns := p.notifier.Changed()
	p.mu.Unlock()
	fs.Notify(fns)
	return n, nil
}

// Readiness returns the poll events in mask that hold for this end.
func (c *UnixConn) Readiness(mask uint32) uint32 {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	var r uint32
	if len(p.buf[c.end]) > 0 {
		r |= unix.EPOLLIN
	}
	if p.closed[1-c.end] {
		r |= unix.EPOLLIN | unix.EPOLLHUP | unix.EPOLLRDHUP
	} else if len(p.buf[1-c.end]) < unixPairBuffer {
		r |= unix.EPOLLOUT
	}
	return r & mask
}

// Watch calls notify on every change of the pair until cancelled.
func (c *UnixConn) Watch(notify func()) func() {
	p := c.p
	p.mu.Lock()
	id := p.notifier.Add(notify)
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.notifier.Remove(id)
		p.mu.Unlock()
	}
}

// Close closes this end: the peer reads end of stream, its writes fail.
func (c *UnixConn) Close() error {
	p := c.p
	p.mu.Lock()
	p.closed[c.end] = true
	fns := p.notifier.Changed()
	p.mu.Unlock()
	fs.Notify(fns)
	return nil
}

// Stat describes the socket as a file.
func (c *UnixConn) Stat() fs.Stat {
	return fs.Stat{Dev: devSockets, Ino: c.ino, Mode: unix.S_IFSOCK | 0o777, Nlink: 1, Blksize: 4096}
}
