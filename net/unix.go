package net

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// Unix stream sockets: socketpair(2), and sockets bound to a path in the
// tree or to an abstract name, which listen, accept and connect. Data
// travels with the descriptions passed by SCM_RIGHTS.

// Linux's socket buffer sizes: SO_SNDBUF and SO_RCVBUF start at
// net.core.wmem_default and rmem_default, setsockopt clamps a request to
// wmem_max or rmem_max and doubles it (for the kernel's own overhead), and
// never goes below SOCK_MIN_SNDBUF or SOCK_MIN_RCVBUF.
const (
	unixDefaultBuffer = 212992
	unixMaxBuffer     = 212992
	unixMinSndbuf     = 4608
	unixMinRcvbuf     = 2304
)

// unixSegmentOverhead is what a segment costs beyond its bytes, charged
// with them as Linux charges an skb's truesize: a program that sends one
// byte at a time fills its SO_SNDBUF with bookkeeping, not the heap.
const unixSegmentOverhead = 64

// unixSegment is what one send put in the stream: its bytes, and the
// descriptions it passed, which the first read of its bytes receives.
// charge is what its send charged to the sender's SO_SNDBUF and to the
// kernel-wide budget, given back when the segment is read or dropped.
type unixSegment struct {
	data   []byte
	rights []*fs.Description
	charge int
}

// unixPair is a connection: end i reads in[i], which end 1-i writes.
type unixPair struct {
	mu       sync.Mutex
	in       [2][]unixSegment
	queued   [2]int  // bytes in in[i]
	wmem     [2]int  // charge of end i's sends still queued, in in[1-i]
	closed   [2]bool // end i closed
	shutWr   [2]bool // end i shut down writing
	shutRd   [2]bool // end i shut down reading
	notifier fs.Notifier
}

// receiveShut reports whether end receives no more: it shut down reading,
// or its peer shut down writing or closed. A read of an empty queue then
// returns 0 at once.
func (p *unixPair) receiveShut(end int) bool {
	return p.shutRd[end] || p.shutWr[1-end] || p.closed[1-end]
}

// sendShut reports whether end sends no more (EPIPE): it shut down
// writing, or its peer shut down reading or closed, as Linux's shutdown
// marks the peer too.
func (p *unixPair) sendShut(end int) bool {
	return p.shutWr[end] || p.shutRd[1-end] || p.closed[1-end]
}

// UnixSocket is an AF_UNIX stream socket: unbound, bound to a name,
// listening, or one end of a connection.
type UnixSocket struct {
	stack   *Stack // whose abstract names it binds and finds
	mu      sync.Mutex
	bound   string // bound name: a path, or "@" and an abstract name
	peer    string // the name of the socket connected to
	pair    *unixPair
	end     int
	listen  bool
	backlog []*UnixSocket
	maxConn int
	closed  bool
	// accepts wakes readiness watchers of a listening socket.
	accepts fs.Notifier
	ino     uint64
	// sndbuf and rcvbuf are SO_SNDBUF and SO_RCVBUF; 0 until set, which
	// reads as the default. Atomic: Readiness reads sndbuf without s.mu.
	sndbuf atomic.Int64
	rcvbuf atomic.Int64
}

var _ Socket = (*UnixSocket)(nil)

// NewUnix returns an unbound, unconnected Unix stream socket on s.
func (s *Stack) NewUnix() *UnixSocket { return &UnixSocket{stack: s, ino: s.newSocketIno()} }

// SocketPair returns two connected Unix stream sockets on s.
func (s *Stack) SocketPair() (*UnixSocket, *UnixSocket) {
	p := &unixPair{}
	return &UnixSocket{stack: s, pair: p, end: 0, ino: s.newSocketIno()}, &UnixSocket{stack: s, pair: p, end: 1, ino: s.newSocketIno()}
}

// abstractNames are the sockets bound in a stack's abstract namespace.
type abstractNames struct {
	mu    sync.Mutex
	bound map[string]*UnixSocket
}

// Family is AF_UNIX.
func (s *UnixSocket) Family() uint16 { return unix.AF_UNIX }

// MaxMessage is 0: a stream.
func (s *UnixSocket) MaxMessage() int { return 0 }

// Bind binds s to an abstract name, or to a path: its socket node is made
// in ns first, as Linux does (EINVAL when s is already bound).
func (s *UnixSocket) Bind(a Addr, ns Namespace) error {
	if a.Abstract {
		return s.bindAbstract(a.Path)
	}
	if s.name() != "" {
		return unix.EINVAL
	}
	if err := ns.MakeSocketNode(a.Path, s); err != nil {
		return err
	}
	return s.setName(a.Path)
}

// bindAbstract binds s to an abstract name: EADDRINUSE when taken.
func (s *UnixSocket) bindAbstract(name string) error {
	names := &s.stack.abstract
	names.mu.Lock()
	defer names.mu.Unlock()
	if _, taken := names.bound[name]; taken {
		return unix.EADDRINUSE
	}
	if err := s.setName("@" + name); err != nil {
		return err
	}
	names.bound[name] = s
	return nil
}

func (s *UnixSocket) setName(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bound != "" || s.pair != nil {
		return unix.EINVAL
	}
	s.bound = name
	return nil
}

// lookup finds the socket bound to an abstract name.
func (names *abstractNames) lookup(name string) (*UnixSocket, bool) {
	names.mu.Lock()
	defer names.mu.Unlock()
	s, ok := names.bound[name]
	return s, ok
}

// name is the bound name ("" when unbound; "@..." when abstract).
func (s *UnixSocket) name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bound
}

// unixAddr is the address of a name as a UnixSocket keeps it.
func unixAddr(name string) Addr {
	if len(name) > 0 && name[0] == '@' {
		return Addr{Family: unix.AF_UNIX, Path: name[1:], Abstract: true}
	}
	return Addr{Family: unix.AF_UNIX, Path: name}
}

// LocalAddr is the bound name.
func (s *UnixSocket) LocalAddr() (Addr, error) { return unixAddr(s.name()), nil }

// PeerAddr is the name of the socket this one is connected to.
func (s *UnixSocket) PeerAddr() (Addr, error) {
	name, err := s.peerName()
	if err != nil {
		return Addr{}, err
	}
	return unixAddr(name), nil
}

// Listen makes a bound socket accept connections (EINVAL when unbound or
// connected).
func (s *UnixSocket) Listen(backlog int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pair != nil || s.bound == "" {
		return unix.EINVAL
	}
	s.listen = true
	s.maxConn = min(max(backlog, 0), 4096) + 1
	return nil
}

// listening reports whether the socket accepts connections (SO_ACCEPTCONN).
func (s *UnixSocket) listening() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listen
}

// Connect connects s to the socket listening at to, an abstract name or a
// path found in ns: ECONNREFUSED when none listens there, EAGAIN when its
// backlog is full.
func (s *UnixSocket) Connect(to Addr, ns Namespace) error {
	l, err := s.listenerAt(to, ns)
	if err != nil {
		return err
	}
	return s.connect(l)
}

// listenerAt finds the socket bound to a Unix address, an abstract one in
// s's stack: ECONNREFUSED when the name holds no socket.
func (s *UnixSocket) listenerAt(a Addr, ns Namespace) (*UnixSocket, error) {
	if a.Abstract {
		l, ok := s.stack.abstract.lookup(a.Path)
		if !ok {
			return nil, unix.ECONNREFUSED
		}
		return l, nil
	}
	bound, err := ns.BoundSocket(a.Path)
	if err != nil {
		return nil, err
	}
	l, ok := bound.(*UnixSocket)
	if !ok {
		return nil, unix.ECONNREFUSED
	}
	return l, nil
}

// UnspecDisconnects is false: a stream socket refuses AF_UNSPEC.
func (s *UnixSocket) UnspecDisconnects() bool { return false }

// ConnectResult is nil: a connect ends at once.
func (s *UnixSocket) ConnectResult() error { return nil }

// connect connects s to the listening socket l.
func (s *UnixSocket) connect(l *UnixSocket) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pair != nil {
		return unix.EISCONN
	}
	if s.listen {
		return unix.EINVAL
	}
	l.mu.Lock()
	if !l.listen || l.closed {
		l.mu.Unlock()
		return unix.ECONNREFUSED
	}
	if len(l.backlog) >= l.maxConn {
		l.mu.Unlock()
		return unix.EAGAIN
	}
	p := &unixPair{}
	server := &UnixSocket{stack: l.stack, pair: p, end: 1, bound: l.bound, peer: s.bound, ino: l.stack.newSocketIno()}
	s.pair, s.end, s.peer = p, 0, l.bound
	l.backlog = append(l.backlog, server)
	fns := l.accepts.Changed()
	l.mu.Unlock()
	fs.Notify(fns)
	return nil
}

// Accept takes the next connection and its peer's name; EAGAIN when none
// is waiting.
func (s *UnixSocket) Accept() (Socket, Addr, error) {
	c, err := s.accept()
	if err != nil {
		return nil, Addr{}, err
	}
	peer, _ := c.peerName()
	return c, unixAddr(peer), nil
}

func (s *UnixSocket) accept() (*UnixSocket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.listen {
		return nil, unix.EINVAL
	}
	if len(s.backlog) == 0 {
		return nil, unix.EAGAIN
	}
	c := s.backlog[0]
	s.backlog = s.backlog[1:]
	return c, nil
}

// peerName is the name of the socket this one is connected to.
func (s *UnixSocket) peerName() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pair == nil {
		return "", unix.ENOTCONN
	}
	return s.peer, nil
}

func (s *UnixSocket) connection() (*unixPair, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pair == nil {
		return nil, 0, unix.ENOTCONN
	}
	return s.pair, s.end, nil
}

// ReadTo receives into dst what the peer wrote, taking only what reached
// dst (a copy that faults takes nothing).
func (s *UnixSocket) ReadTo(dst fs.UserIO) (int64, error) {
	return fs.ReadPeeked(dst, s.Peek, s.Discard)
}

// WriteFrom sends src's bytes, staged through a buffer.
func (s *UnixSocket) WriteFrom(src fs.UserIO) (int64, error) { return fs.WriteStaged(src, s.Write) }

// Read receives what the peer wrote; 0 once the peer closed or shut down
// writing and all is read; EAGAIN while nothing is there.
func (s *UnixSocket) Read(b []byte) (int, error) {
	n, rights, err := s.recv(b, false)
	for _, d := range rights {
		d.DecRef() // a read without a control buffer drops them, as on Linux
	}
	return n, err
}

// Peek copies what a Read would return without taking it.
func (s *UnixSocket) Peek(b []byte) (int, error) {
	n, _, err := s.recv(b, true)
	return n, err
}

// Discard takes n bytes a Peek returned (descriptions passed with them
// are dropped, as a read without a control buffer drops them).
func (s *UnixSocket) Discard(n int) {
	if n > 0 {
		s.Read(make([]byte, n))
	}
}

// RecvMsg receives like Read, and the descriptions passed with the bytes
// read: a read stops before a segment that carries some (unless it is the
// first) and after the one it took them from. With peek nothing is taken
// and no descriptions are returned.
func (s *UnixSocket) RecvMsg(b []byte, peek bool) (int, Received, error) {
	n, rights, err := s.recv(b, peek)
	return n, Received{Rights: rights}, err
}

func (s *UnixSocket) recv(b []byte, peek bool) (int, []*fs.Description, error) {
	p, end, err := s.connection()
	if err != nil {
		return 0, nil, unix.EINVAL
	}
	p.mu.Lock()
	if p.queued[end] == 0 {
		eof := p.receiveShut(end)
		p.mu.Unlock()
		if eof || len(b) == 0 {
			return 0, nil, nil
		}
		return 0, nil, unix.EAGAIN
	}
	n := 0
	var rights []*fs.Description
	segs := p.in[end]
	for i := 0; i < len(segs) && n < len(b); i++ {
		seg := &segs[i]
		if len(seg.rights) > 0 && n > 0 {
			break
		}
		k := copy(b[n:], seg.data)
		n += k
		if peek {
			continue
		}
		rights, seg.rights = seg.rights, nil
		seg.data = seg.data[k:]
		if rights != nil {
			break
		}
	}
	if !peek {
		freed := 0
		for len(p.in[end]) > 0 && len(p.in[end][0].data) == 0 && p.in[end][0].rights == nil {
			freed += p.in[end][0].charge
			p.in[end] = p.in[end][1:]
		}
		p.queued[end] -= n
		p.wmem[1-end] -= freed
		mm.Charged.Uncharge(freed)
	}
	fns := p.notifier.Changed()
	p.mu.Unlock()
	fs.Notify(fns)
	return n, rights, nil
}

// Pending returns the bytes a read would return (FIONREAD).
func (s *UnixSocket) Pending() (int, error) {
	p, end, err := s.connection()
	if err != nil {
		return 0, unix.EINVAL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued[end], nil
}

// Write sends what fits of b to the peer; EAGAIN when nothing does, EPIPE
// once the peer closed.
func (s *UnixSocket) Write(b []byte) (int, error) { return s.SendMsg(b, nil, nil) }

// CheckDestination refuses a destination: a stream sends to its peer.
func (s *UnixSocket) CheckDestination() error { return unix.EISCONN }

// SendMsg sends what fits of b to the peer, with rights attached to its
// first byte (the stream takes references to them). What is queued from
// this end is bounded by its SO_SNDBUF (EAGAIN when full, as Linux's
// sock_alloc_send_pskb) and charged to the kernel-wide budget (ENOBUFS
// when that is spent, as an skb Linux cannot allocate).
func (s *UnixSocket) SendMsg(b []byte, _ *Addr, rights []*fs.Description) (int, error) {
	p, end, err := s.connection()
	if err != nil {
		return 0, unix.ENOTCONN
	}
	peer := 1 - end
	sndbuf := s.sendBuffer()
	p.mu.Lock()
	if p.sendShut(end) {
		p.mu.Unlock()
		return 0, unix.EPIPE
	}
	room := sndbuf - p.wmem[end] - unixSegmentOverhead
	if room <= 0 {
		p.mu.Unlock()
		return 0, unix.EAGAIN
	}
	n := min(room, len(b))
	if n == 0 && len(rights) == 0 {
		p.mu.Unlock()
		return 0, nil
	}
	charge := n + unixSegmentOverhead
	if mm.Charged.Charge(charge) != nil {
		p.mu.Unlock()
		return 0, unix.ENOBUFS
	}
	for _, d := range rights {
		d.IncRef()
	}
	p.in[peer] = append(p.in[peer], unixSegment{data: append([]byte(nil), b[:n]...), rights: rights, charge: charge})
	p.queued[peer] += n
	p.wmem[end] += charge
	fns := p.notifier.Changed()
	p.mu.Unlock()
	fs.Notify(fns)
	return n, nil
}

// Shutdown shuts down reading, writing or both.
func (s *UnixSocket) Shutdown(how int) error {
	p, end, err := s.connection()
	if err != nil {
		return err
	}
	p.mu.Lock()
	switch how {
	case unix.SHUT_RD:
		p.shutRd[end] = true
	case unix.SHUT_WR:
		p.shutWr[end] = true
	case unix.SHUT_RDWR:
		p.shutRd[end], p.shutWr[end] = true, true
	default:
		p.mu.Unlock()
		return unix.EINVAL
	}
	fns := p.notifier.Changed()
	p.mu.Unlock()
	fs.Notify(fns)
	return nil
}

// Readiness returns the poll events in mask that hold.
func (s *UnixSocket) Readiness(mask uint32) uint32 {
	s.mu.Lock()
	if s.listen {
		r := uint32(0)
		if len(s.backlog) > 0 {
			r = unix.EPOLLIN
		}
		s.mu.Unlock()
		return r & mask
	}
	p, end := s.pair, s.end
	s.mu.Unlock()
	sndbuf := s.sendBuffer()
	if p == nil {
		return (unix.EPOLLOUT | unix.EPOLLHUP) & (mask | unix.EPOLLHUP)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var r uint32
	if p.queued[end] > 0 || hasRights(p.in[end]) {
		r |= unix.EPOLLIN
	}
	if p.receiveShut(end) {
		r |= unix.EPOLLIN | unix.EPOLLRDHUP
	}
	// Hung up: both directions shut; writable whenever the peer's queue
	// has room, even shut down, as on Linux (so no writer sleeps forever).
	if p.receiveShut(end) && p.sendShut(end) {
		r |= unix.EPOLLHUP
	}
	if p.closed[1-end] || p.wmem[end]*4 <= sndbuf {
		// Writable once three quarters of SO_SNDBUF are free, as Linux's
		// unix_writable (a writer woken has room for a good part), and
		// once the peer closed (a write fails at once), as on Linux.
		r |= unix.EPOLLOUT
	}
	return r & (mask | unix.EPOLLHUP | unix.EPOLLERR)
}

func hasRights(segs []unixSegment) bool {
	for _, seg := range segs {
		if seg.rights != nil {
			return true
		}
	}
	return false
}

// Watch calls notify on every change of the socket until cancelled.
func (s *UnixSocket) Watch(notify func()) func() {
	s.mu.Lock()
	p := s.pair
	s.mu.Unlock()
	if p != nil {
		return p.notifier.Watch(&p.mu, notify)
	}
	return s.accepts.Watch(&s.mu, notify)
}

// Close closes the socket: the peer reads end of stream and its writes
// fail; descriptions in flight to this end are dropped; a listener's
// waiting connections are closed and its abstract name freed.
func (s *UnixSocket) Close() error {
	s.mu.Lock()
	s.closed = true
	p, end, backlog, name := s.pair, s.end, s.backlog, s.bound
	s.backlog = nil
	fns := s.accepts.Changed()
	s.mu.Unlock()
	fs.Notify(fns)
	for _, c := range backlog {
		c.Close()
	}
	if len(name) > 0 && name[0] == '@' {
		names := &s.stack.abstract
		names.mu.Lock()
		if names.bound[name[1:]] == s {
			delete(names.bound, name[1:])
		}
		names.mu.Unlock()
	}
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.closed[end] = true
	dropped := p.in[end]
	p.in[end], p.queued[end] = nil, 0
	mm.Charged.Uncharge(p.wmem[1-end])
	p.wmem[1-end] = 0
	fns = p.notifier.Changed()
	p.mu.Unlock()
	fs.Notify(fns)
	for _, seg := range dropped {
		for _, d := range seg.rights {
			d.DecRef()
		}
	}
	return nil
}

// SetIntOption sets SO_SNDBUF and SO_RCVBUF as Linux's sock_setsockopt
// does (clamped to the maximum, doubled, raised to the minimum) and
// accepts the other options programs set on any socket: a Unix socket has
// no port to share.
func (s *UnixSocket) SetIntOption(level, name, v int) error {
	if level != unix.SOL_SOCKET {
		return unix.ENOPROTOOPT
	}
	switch name {
	case unix.SO_SNDBUF:
		s.sndbuf.Store(int64(socketBufferSize(v, unixMinSndbuf)))
		return nil
	case unix.SO_RCVBUF:
		s.rcvbuf.Store(int64(socketBufferSize(v, unixMinRcvbuf)))
		return nil
	case unix.SO_REUSEADDR, unix.SO_REUSEPORT, unix.SO_KEEPALIVE:
		return nil
	}
	return unix.ENOPROTOOPT
}

// socketBufferSize is the size setsockopt gives a buffer asked to be v
// bytes: v as an unsigned value clamped to the maximum, doubled, and at
// least least.
func socketBufferSize(v, least int) int {
	if v < 0 || v > unixMaxBuffer {
		v = unixMaxBuffer
	}
	return max(2*v, least)
}

// sendBuffer returns SO_SNDBUF, the most this end's sends keep queued.
func (s *UnixSocket) sendBuffer() int {
	if n := s.sndbuf.Load(); n > 0 {
		return int(n)
	}
	return unixDefaultBuffer
}

// IntOption reads the integer options a Unix stream socket has.
func (s *UnixSocket) IntOption(level, name int) (int, error) {
	if level != unix.SOL_SOCKET {
		return 0, unix.EOPNOTSUPP
	}
	switch name {
	case unix.SO_ERROR, unix.SO_PROTOCOL:
		return 0, nil
	case unix.SO_TYPE:
		return unix.SOCK_STREAM, nil
	case unix.SO_DOMAIN:
		return unix.AF_UNIX, nil
	case unix.SO_ACCEPTCONN:
		return boolInt(s.listening()), nil
	case unix.SO_SNDBUF:
		return s.sendBuffer(), nil
	case unix.SO_RCVBUF:
		if n := s.rcvbuf.Load(); n > 0 {
			return int(n), nil
		}
		return unixDefaultBuffer, nil
	}
	return 0, unix.ENOPROTOOPT
}

// SetLinger is accepted and changes nothing: what was sent stays for the
// peer to read after a close.
func (s *UnixSocket) SetLinger(Linger) error { return nil }

// Linger is ENOPROTOOPT: SO_LINGER is not kept.
func (s *UnixSocket) Linger() (Linger, error) { return Linger{}, unix.ENOPROTOOPT }

// Stat describes the socket as a file.
func (s *UnixSocket) Stat() fs.Stat {
	return fs.Stat{Dev: devSockets, Ino: s.ino, Mode: unix.S_IFSOCK | 0o777, Nlink: 1, Blksize: 4096}
}
