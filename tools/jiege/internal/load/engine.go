package load

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// engine is an event loop over non-blocking sockets and one epoll instance,
// the way wrk works: a request costs one write(2) and usually one read(2),
// and one epoll_wait(2) serves many connections. Go's netpoller would add
// a failed read, a goroutine switch and thread wake-ups per request.
//
// Sockets are level-triggered for input; output is watched only while a
// connect or a partial write is pending, so a keep-alive request needs no
// epoll_ctl(2).
type engine struct {
	r      *runner
	sa     unix.Sockaddr // per engine: Connect writes into it
	epfd   int
	slots  []econn
	events []unix.EpollEvent
	buf    []byte // read buffer, shared: responses are parsed as they arrive
	active int    // connections not finished
	// next is the earliest deadline of any connection.
	next time.Time
	stats
}

type connState int

const (
	csIdle       connState = iota // between requests, no socket needed yet
	csRetryWait                   // waiting to retry a failed connect
	csConnecting                  // non-blocking connect in progress
	csWriting                     // request partly written
	csReading                     // reading the response
	csClosing                     // "Connection: close" answered; waiting for the server's FIN
	csFinished                    // no more requests for this connection
)

// econn is one connection slot of an engine.
type econn struct {
	id       int32 // index in engine.slots, the epoll user data
	fd       int   // -1 without a socket
	state    connState
	req      *preparedRequest
	parser   respParser
	sha      hash.Hash
	sum      [sha256.Size]byte
	written  int
	start    time.Time // request start, for latency
	attempt  time.Time // current connect attempt's start
	limit    time.Time // connect deadline over all attempts
	backoff  time.Duration
	deadline time.Time // of the current state; zero for none
	watchOut bool      // EPOLLOUT registered
}

// closeWait bounds the wait for the server to close a "Connection: close"
// connection: waiting puts TIME_WAIT on the server's side, so that long
// fresh-connection runs do not exhaust the client's ephemeral ports.
const closeWait = time.Second

// loopWait bounds one epoll_wait, so cancellation is seen promptly.
const loopWait = 10 // ms

func newEngine(r *runner, conns int) (*engine, error) {
	sa, err := sockaddr(r.cfg.Addr)
	if err != nil {
		return nil, err
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("load: epoll: %w", err)
	}
	e := &engine{r: r, sa: sa, epfd: epfd, slots: make([]econn, conns), events: make([]unix.EpollEvent, conns+1),
		buf: make([]byte, 64<<10), active: conns}
	for i := range e.slots {
		e.slots[i].id, e.slots[i].fd = int32(i), -1
		e.slots[i].sha = sha256.New()
	}
	return e, nil
}

func (e *engine) close() {
	for i := range e.slots {
		e.closeFD(&e.slots[i])
	}
	unix.Close(e.epfd)
}

func (e *engine) run() {
	now := time.Now()
	for i := range e.slots {
		e.advance(&e.slots[i], now)
	}
	for e.active > 0 {
		if e.r.stopped.Load() {
			for i := range e.slots {
				e.closeFD(&e.slots[i])
			}
			return
		}
		n, err := unix.EpollWait(e.epfd, e.events, loopWait)
		if err != nil && !errors.Is(err, unix.EINTR) {
			e.sample(fmt.Sprintf("epoll_wait: %v", err))
			e.r.stopped.Store(true)
			continue
		}
		now = time.Now()
		for i := 0; i < n; i++ {
			ev := &e.events[i]
			c := &e.slots[ev.Fd]
			if c.fd < 0 {
				continue
			}
			e.event(c, ev.Events, now)
		}
		if !e.next.IsZero() && !now.Before(e.next) {
			e.expire(now)
		}
	}
}

// setDeadline sets c's deadline and keeps e.next the earliest one.
func (e *engine) setDeadline(c *econn, d time.Time) {
	c.deadline = d
	if e.next.IsZero() || d.Before(e.next) {
		e.next = d
	}
}

// expire handles every passed deadline and recomputes e.next.
func (e *engine) expire(now time.Time) {
	e.next = time.Time{}
	for i := range e.slots {
		c := &e.slots[i]
		if c.deadline.IsZero() {
			continue
		}
		if now.Before(c.deadline) {
			if e.next.IsZero() || c.deadline.Before(e.next) {
				e.next = c.deadline
			}
			continue
		}
		c.deadline = time.Time{}
		switch c.state {
		case csRetryWait:
			e.connect(c, now)
		case csConnecting:
			e.closeFD(c)
			e.connectFailed(c, now, errors.New("connect: timeout"))
		case csWriting, csReading:
			e.fail(c, now, &reqError{classTimeout, fmt.Sprintf("GET %s: no complete response within %v", c.req.Path, e.r.cfg.IOTimeout)})
		case csClosing:
			e.closeFD(c)
			e.advance(c, now)
		}
	}
}

// advance starts c's next request, or finishes c when the run is over.
func (e *engine) advance(c *econn, now time.Time) {
	i := e.r.next(now)
	if i < 0 {
		e.closeFD(c)
		c.state = csFinished
		c.deadline = time.Time{}
		e.active--
		return
	}
	c.req = &e.r.reqs[i]
	if c.fd >= 0 {
		e.send(c, now)
		return
	}
	c.limit = now.Add(e.r.cfg.ConnectTimeout)
	c.backoff = 10 * time.Millisecond
	e.connect(c, now)
}

func (e *engine) connect(c *econn, now time.Time) {
	c.attempt = now
	fd, err := unix.Socket(socketFamily(e.sa), unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		e.connectFailed(c, now, fmt.Errorf("socket: %w", err))
		return
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c.fd = fd
	err = unix.Connect(fd, e.sa)
	switch {
	case err == nil:
		if !e.watch(c, false, unix.EPOLL_CTL_ADD) {
			return
		}
		e.connected(c, now)
	case errors.Is(err, unix.EINPROGRESS):
		if e.watch(c, true, unix.EPOLL_CTL_ADD) {
			c.state = csConnecting
			e.setDeadline(c, c.limit)
		}
	default:
		e.closeFD(c)
		e.connectFailed(c, now, fmt.Errorf("connect: %w", err))
	}
}

// watch registers or modifies c's epoll interest: input always, output if out.
func (e *engine) watch(c *econn, out bool, op int) bool {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: c.id}
	if out {
		ev.Events |= unix.EPOLLOUT
	}
	if err := unix.EpollCtl(e.epfd, op, c.fd, &ev); err != nil {
		e.closeFD(c)
		e.connectFailed(c, time.Now(), fmt.Errorf("epoll_ctl: %w", err))
		return false
	}
	c.watchOut = out
	return true
}

// connectFailed retries within the connect deadline, else counts the
// request as failed and moves on.
func (e *engine) connectFailed(c *econn, now time.Time, err error) {
	if now.Add(c.backoff).Before(c.limit) && !e.r.stopped.Load() {
		e.retries++
		c.state = csRetryWait
		e.setDeadline(c, now.Add(c.backoff))
		c.backoff = min(2*c.backoff, 500*time.Millisecond)
		return
	}
	e.errs.ConnectFail++
	e.sample(fmt.Sprintf("connect %s: %v", e.r.cfg.Addr, err))
	if e.r.cfg.StopOnError {
		e.r.stopped.Store(true)
	}
	c.state = csIdle
	c.deadline = time.Time{}
	e.advance(c, now)
}

func (e *engine) connected(c *econn, now time.Time) {
	e.conns++
	if now.Sub(c.attempt) > 900*time.Millisecond {
		e.slow++ // a dropped SYN, retried by the host's TCP
	}
	if c.watchOut && !e.watch(c, false, unix.EPOLL_CTL_MOD) {
		return
	}
	e.send(c, now)
}

func (e *engine) send(c *econn, now time.Time) {
	c.start = now
	var sha hash.Hash
	if c.req.checkDigest {
		sha = c.sha
	}
	c.parser.reset(sha, e.r.cfg.Verify != nil)
	c.written = 0
	c.state = csWriting
	e.setDeadline(c, now.Add(e.r.cfg.IOTimeout))
	e.write(c, now)
}

func (e *engine) write(c *econn, now time.Time) {
	wire := c.req.wire
	for c.written < len(wire) {
		n, err := unix.Write(c.fd, wire[c.written:])
		if errors.Is(err, unix.EAGAIN) {
			if !c.watchOut {
				e.watch(c, true, unix.EPOLL_CTL_MOD)
			}
			return
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			e.fail(c, now, &reqError{classReset, fmt.Sprintf("GET %s: write: %v", c.req.Path, err)})
			return
		}
		c.written += n
	}
	if c.watchOut && !e.watch(c, false, unix.EPOLL_CTL_MOD) {
		return
	}
	c.state = csReading
}

func (e *engine) event(c *econn, ev uint32, now time.Time) {
	switch c.state {
	case csConnecting:
		if ev&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			return
		}
		soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err == nil && soerr != 0 {
			err = unix.Errno(soerr)
		}
		if err != nil {
			e.closeFD(c)
			e.connectFailed(c, now, fmt.Errorf("connect: %w", err))
			return
		}
		e.connected(c, now)
	case csWriting:
		if ev&unix.EPOLLOUT != 0 {
			e.write(c, now)
		} else if ev&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			e.read(c, now)
		}
	case csReading:
		e.read(c, now)
	case csClosing:
		e.drain(c, now)
	}
}

// read reads what has arrived and feeds it to the parser. A full buffer
// means more is likely waiting, so it reads again at once.
func (e *engine) read(c *econn, now time.Time) {
	for {
		n, err := unix.Read(c.fd, e.buf)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			e.fail(c, now, &reqError{classReset, fmt.Sprintf("GET %s: read: %v", c.req.Path, err)})
			return
		case n == 0:
			if err := c.parser.eof(); err != nil {
				e.fail(c, now, asReqError(err, c.req.Path))
				return
			}
			c.parser.head.close = true
			e.complete(c, now)
			return
		}
		used, err := c.parser.feed(e.buf[:n])
		if err != nil {
			e.fail(c, now, asReqError(err, c.req.Path))
			return
		}
		if c.parser.done() {
			if used < n {
				e.fail(c, now, &reqError{classBadResponse, fmt.Sprintf("GET %s: %d bytes after the response", c.req.Path, n-used)})
				return
			}
			e.complete(c, now)
			return
		}
		if n < len(e.buf) {
			return
		}
	}
}

func asReqError(err error, path string) *reqError {
	var re *reqError
	if errors.As(err, &re) {
		return &reqError{re.class, "GET " + path + ": " + re.msg}
	}
	return &reqError{classBadResponse, "GET " + path + ": " + err.Error()}
}

// complete checks a whole response and moves c on.
func (e *engine) complete(c *econn, now time.Time) {
	p, q := &c.parser, c.req
	if q.Size > 0 && p.n != q.Size {
		e.fail(c, now, &reqError{classBadBody, fmt.Sprintf("GET %s: %d body bytes, want %d", q.Path, p.n, q.Size)})
		return
	}
	if q.checkDigest && [sha256.Size]byte(c.sha.Sum(c.sum[:0])) != q.digest {
		e.fail(c, now, &reqError{classBadBody, fmt.Sprintf("GET %s: sha256 mismatch", q.Path)})
		return
	}
	if v := e.r.cfg.Verify; v != nil {
		if err := v(q.Path, p.body); err != nil {
			e.fail(c, now, &reqError{classBadBody, fmt.Sprintf("GET %s: %v", q.Path, err)})
			return
		}
	}
	e.ok++
	e.bytes += p.n
	e.hist.Record(now.Sub(c.start))
	switch {
	case !e.r.cfg.KeepAlive:
		c.state = csClosing
		e.setDeadline(c, now.Add(closeWait))
	case p.head.close:
		e.closeFD(c)
		e.advance(c, now)
	default:
		c.deadline = time.Time{}
		e.advance(c, now)
	}
}

// drain waits for the server's FIN after a "Connection: close" response.
func (e *engine) drain(c *econn, now time.Time) {
	for {
		n, err := unix.Read(c.fd, e.buf)
		if errors.Is(err, unix.EAGAIN) {
			return
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 || n < len(e.buf) {
			if err == nil && n > 0 {
				return // stray bytes; keep waiting for the FIN
			}
			e.closeFD(c)
			e.advance(c, now)
			return
		}
	}
}

// fail records a failed request, drops the connection and moves on.
func (e *engine) fail(c *econn, now time.Time, err *reqError) {
	e.closeFD(c)
	if e.r.stopped.Load() {
		return // the run is over; in-flight requests do not count
	}
	e.record(err)
	if e.r.cfg.StopOnError {
		e.r.stopped.Store(true)
		return
	}
	c.state = csIdle
	c.deadline = time.Time{}
	e.advance(c, now)
}

func (e *engine) closeFD(c *econn) {
	if c.fd >= 0 {
		unix.Close(c.fd) // also removes it from the epoll set
		c.fd = -1
	}
	c.watchOut = false
}

// sockaddr resolves a numeric host:port once for the run.
func sockaddr(addr string) (unix.Sockaddr, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("load: address %q: %w", addr, err)
	}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		return sa, nil
	}
	sa := &unix.SockaddrInet6{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To16())
	return sa, nil
}

func socketFamily(sa unix.Sockaddr) int {
	if _, ok := sa.(*unix.SockaddrInet4); ok {
		return unix.AF_INET
	}
	return unix.AF_INET6
}
