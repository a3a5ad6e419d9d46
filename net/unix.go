package net

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// Unix stream and seqpacket sockets: socketpair(2), and sockets bound to
// a path in the tree or to an abstract name, which listen, accept and
// connect. Data travels with the descriptions passed by SCM_RIGHTS and
// the sender's credentials. A seqpacket socket is a stream connection
// whose sends stay whole messages: a receive takes one, the rest of it
// dropped when the buffer is short (unixdgram.go has the datagrams).

// unixDefaultBuffer is a Unix socket's SO_SNDBUF and SO_RCVBUF until set
// (net.core.wmem_default and rmem_default).
const unixDefaultBuffer = 212992

// unixSegmentOverhead is what a segment costs beyond its bytes, charged
// with them as Linux charges an skb's truesize: a program that sends one
// byte at a time fills its SO_SNDBUF with bookkeeping, not the heap.
const unixSegmentOverhead = 64

// unixSegment is what one send put in the stream: its bytes, and the
// descriptions it passed, which the first read of its bytes receives.
// charge is what its send charged to the sender's SO_SNDBUF and to the
// kernel-wide budget, given back when the segment is read or dropped.
type unixSegment struct {
	data []byte
	scmRights
	cred   Ucred
	charge int
}

// unixPair is a connection: end i reads in[i], which end 1-i writes.
type unixPair struct {
	mu     sync.Mutex
	in     [2][]unixSegment
	queued [2]int  // bytes in in[i]
	wmem   [2]int  // charge of end i's sends still queued, in in[1-i]
	closed [2]bool // end i closed
	shutWr [2]bool // end i shut down writing
	shutRd [2]bool // end i shut down reading
	// reset[i]: end i reads ECONNRESET once before the end of the
	// stream, as its peer closed with bytes unread (Linux's sk_err).
	reset    [2]bool
	sockets  [2]*UnixSocket // the two ends, whose SO_PASSCRED a send reads
	notifier fs.Notifier
}

// dropQueueLocked empties end's receive queue, giving back its charge,
// and returns the segments it held; p.mu is held.
func (p *unixPair) dropQueueLocked(end int) []unixSegment {
	dropped := p.in[end]
	p.in[end], p.queued[end] = nil, 0
	mm.Charged.Uncharge(p.wmem[1-end])
	p.wmem[1-end] = 0
	return dropped
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

// UnixSocket is an AF_UNIX stream or seqpacket socket: unbound, bound to
// a name, listening, or one end of a connection.
type UnixSocket struct {
	stack     *Stack // whose abstract names it binds and finds
	seqpacket bool
	// owner is who made or last connected the socket: the peer's
	// SO_PEERCRED once it connects to or is accepted from this one.
	owner    Caller
	peerCred Ucred // SO_PEERCRED
	// readMu keeps a read's look and take together (ReadPeeked; Linux's
	// u->iolock).
	readMu  sync.Mutex
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
	sndbuf   atomic.Int64
	rcvbuf   atomic.Int64
	passcred atomic.Bool // SO_PASSCRED
	Timeouts
}

var _ Socket = (*UnixSocket)(nil)

// NewUnixStream returns an unbound, unconnected Unix stream (or
// seqpacket) socket on s, made by c.
func (s *Stack) NewUnixStream(seqpacket bool, c Caller) *UnixSocket {
	return &UnixSocket{stack: s, seqpacket: seqpacket, owner: c, peerCred: NoPeerCred, ino: s.newSocketIno()}
}

// UnixStreamPair returns two connected Unix stream (or seqpacket) sockets
// on s, made by c, each the other's peer.
func (s *Stack) UnixStreamPair(seqpacket bool, c Caller) (*UnixSocket, *UnixSocket) {
	p := &unixPair{}
	x, y := s.NewUnixStream(seqpacket, c), s.NewUnixStream(seqpacket, c)
	x.pair, y.pair, y.end = p, p, 1
	p.sockets = [2]*UnixSocket{x, y}
	x.peerCred, y.peerCred = c.Peer(), c.Peer()
	return x, y
}

// abstractNames are the sockets bound in a stack's abstract namespace.
type abstractNames struct {
	mu    sync.Mutex
	bound map[string]Socket
	// domains are the Landlock domains of restricted binders, which
	// LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET compares with a connector's.
	domains map[string]*fs.LandlockDomain
	// lastAuto is the last name autobind gave, five hex digits as Linux's.
	lastAuto uint32
}

// Family is AF_UNIX.
func (s *UnixSocket) Family() uint16 { return unix.AF_UNIX }

// MaxMessage is 0 for a stream; a seqpacket message is at most SO_SNDBUF
// less 32 bytes, as Linux's unix_dgram_sendmsg allows.
func (s *UnixSocket) MaxMessage() int {
	if s.seqpacket {
		return s.sendBuffer() - 32
	}
	return 0
}

// Bind binds s to an abstract name, or to a path: its socket node is made
// in ns first, as Linux does (EINVAL when s is already bound). An address
// of the family alone autobinds.
func (s *UnixSocket) Bind(a Addr, ns Namespace) error {
	return bindUnix(s.stack, s, a, ns, s.name, s.setName)
}

// bindUnix binds so, whose name and setName read and set its bound name:
// to an abstract name (EADDRINUSE when taken), to a path (its node made
// first), or, for an address without a name, to a name autobind picks
// (nothing when so is bound already, as Linux's unix_autobind).
func bindUnix(st *Stack, so Socket, a Addr, ns Namespace, name func() string, setName func(string) error) error {
	switch {
	case a.Abstract:
		return st.abstract.bind(a.Path, so, setName, landlockOf(ns))
	case a.Path == "":
		if name() != "" {
			return nil
		}
		return st.abstract.autobind(so, setName, landlockOf(ns))
	}
	if name() != "" {
		return unix.EINVAL
	}
	if err := ns.MakeSocketNode(a.Path, so); err != nil {
		return err
	}
	return setName(a.Path)
}

// bind binds so to an abstract name for a binder of domain d:
// EADDRINUSE when taken.
func (names *abstractNames) bind(name string, so Socket, setName func(string) error, d *fs.LandlockDomain) error {
	names.mu.Lock()
	defer names.mu.Unlock()
	if _, taken := names.bound[name]; taken {
		return unix.EADDRINUSE
	}
	if err := setName("@" + name); err != nil {
		return err
	}
	names.add(name, so, d)
	return nil
}

// landlockOf is the Landlock domain of ns's caller (none without one: the
// kernel's own sockets).
func landlockOf(ns Namespace) *fs.LandlockDomain {
	if ns == nil {
		return nil
	}
	return ns.Caller().Landlock
}

// add records so bound to name by a binder of domain d (names.mu held).
func (names *abstractNames) add(name string, so Socket, d *fs.LandlockDomain) {
	names.bound[name] = so
	if d != nil {
		if names.domains == nil {
			names.domains = map[string]*fs.LandlockDomain{}
		}
		names.domains[name] = d
	}
}

// autobind binds so to the next free abstract name of five hex digits,
// as Linux's unix_autobind: ENOSPC when all are taken.
func (names *abstractNames) autobind(so Socket, setName func(string) error, d *fs.LandlockDomain) error {
	names.mu.Lock()
	defer names.mu.Unlock()
	const hex = "0123456789abcdef"
	for range 1 << 20 {
		names.lastAuto = (names.lastAuto + 1) & 0xfffff
		var digits [5]byte
		for i := range digits {
			digits[i] = hex[names.lastAuto>>(4*(4-i))&0xf]
		}
		name := string(digits[:])
		if _, taken := names.bound[name]; taken {
			continue
		}
		if err := setName("@" + name); err != nil {
			return err
		}
		names.add(name, so, d)
		return nil
	}
	return unix.ENOSPC
}

// release frees an abstract name so held.
func (names *abstractNames) release(name string, so Socket) {
	if len(name) == 0 || name[0] != '@' {
		return
	}
	names.mu.Lock()
	if names.bound[name[1:]] == so {
		delete(names.bound, name[1:])
		delete(names.domains, name[1:])
	}
	names.mu.Unlock()
}

func (s *UnixSocket) setName(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bound != "" {
		return unix.EINVAL
	}
	s.bound = name
	return nil
}

// lookup finds the socket bound to an abstract name, and its binder's
// Landlock domain.
func (names *abstractNames) lookup(name string) (Socket, *fs.LandlockDomain, bool) {
	names.mu.Lock()
	defer names.mu.Unlock()
	s, ok := names.bound[name]
	return s, names.domains[name], ok
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

// senderAddr is the address a receive reports for a sender named name:
// none (Family 0, a length of 0) for an unbound one, as Linux's
// unix_copy_addr leaves msg_namelen 0.
func senderAddr(name string) Addr {
	if name == "" {
		return Addr{}
	}
	return unixAddr(name)
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
	so, err := unixBoundAt(s.stack, to, ns)
	if err != nil {
		return err
	}
	l, ok := so.(*UnixSocket)
	if !ok || l.seqpacket != s.seqpacket {
		return unix.EPROTOTYPE // Linux finds only a socket of the caller's type
	}
	if s.passcred.Load() {
		if err := s.Bind(Addr{Family: unix.AF_UNIX}, ns); err != nil {
			return err
		}
	}
	return s.connect(l, ns.Caller())
}

// unixBoundAt finds the socket bound to a Unix address, an abstract one
// in st: ECONNREFUSED when the name holds no socket, EPERM when the
// caller's Landlock domain scopes it out.
func unixBoundAt(st *Stack, a Addr, ns Namespace) (Socket, error) {
	if a.Abstract {
		so, d, ok := st.abstract.lookup(a.Path)
		if !ok {
			return nil, unix.ECONNREFUSED
		}
		if landlockOf(ns).Scopes(d, fs.LandlockScopeAbstractUnix) {
			return nil, unix.EPERM // Landlock's LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		}
		return so, nil
	}
	if a.Path == "" {
		return nil, unix.EINVAL
	}
	bound, err := ns.BoundSocket(a.Path)
	if err != nil {
		return nil, err
	}
	so, ok := bound.(Socket)
	if !ok {
		return nil, unix.ECONNREFUSED
	}
	return so, nil
}

// UnspecDisconnects is false: a stream socket refuses AF_UNSPEC.
func (s *UnixSocket) UnspecDisconnects() bool { return false }

// ConnectResult is nil: a connect ends at once.
func (s *UnixSocket) ConnectResult() error { return nil }

// connect connects s, made or connected by c, to the listening socket l.
func (s *UnixSocket) connect(l *UnixSocket, c Caller) error {
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
	server := l.stack.NewUnixStream(s.seqpacket, c)
	server.pair, server.end, server.bound, server.peer, server.peerCred = p, 1, l.bound, s.bound, c.Peer()
	server.passcred.Store(l.passcred.Load()) // as unix_sock_inherit_flags
	s.owner = c
	s.pair, s.end, s.peer, s.peerCred = p, 0, l.bound, l.owner.Peer()
	p.sockets = [2]*UnixSocket{s, server}
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
	return fs.ReadPeeked(dst, &s.readMu, s.Peek, s.Discard)
}

// WriteFrom sends src's bytes, staged through a buffer.
func (s *UnixSocket) WriteFrom(src fs.UserIO) (int64, error) { return fs.WriteStaged(src, s.Write) }

// Read receives what the peer wrote; 0 once the peer closed or shut down
// writing and all is read; EAGAIN while nothing is there.
func (s *UnixSocket) Read(b []byte) (int, error) {
	if s.seqpacket {
		n, r, err := s.recvMessage(b, false)
		dropRights(r.Rights)
		return n, err
	}
	n, rights, _, err := s.recv(b, false)
	for _, d := range rights {
		d.DecRef() // a read without a control buffer drops them, as on Linux
	}
	return n, err
}

// Peek copies what a Read would return without taking it.
func (s *UnixSocket) Peek(b []byte) (int, error) {
	if s.seqpacket {
		n, r, err := s.recvMessage(b, true)
		dropRights(r.Rights)
		return n, err
	}
	n, rights, _, err := s.recv(b, true)
	dropRights(rights)
	return n, err
}

// Discard takes n bytes a Peek returned (descriptions passed with them
// are dropped, as a read without a control buffer drops them); on a
// seqpacket socket, the message peeked.
func (s *UnixSocket) Discard(n int) {
	if n > 0 || s.seqpacket {
		s.Read(make([]byte, n))
	}
}

// dupRights returns ds with a reference of the caller's to each: a peek
// passes descriptions as Linux's scm_fp_dup, leaving them queued too.
func dupRights(ds []*fs.Description) []*fs.Description {
	for _, d := range ds {
		d.IncRef()
	}
	return ds
}

func dropRights(ds []*fs.Description) {
	for _, d := range ds {
		d.DecRef()
	}
}

// RecvMsg receives like Read, and the descriptions passed with the bytes
// read: a read stops before a segment that carries some (unless it is the
// first) and after the one it took them from; with SO_PASSCRED, before a
// segment another sender sent, and the sender's credentials come with
// them. With peek nothing is taken and the descriptions come as new
// references. A seqpacket socket receives one message: Total is its
// length.
func (s *UnixSocket) RecvMsg(b []byte, peek bool) (int, Received, error) {
	if s.seqpacket {
		return s.recvMessage(b, peek)
	}
	var r Received
	n, rights, cred, err := s.recv(b, peek)
	r.Rights = rights
	if err == nil && s.passcred.Load() {
		r.Cred = &cred
	}
	return n, r, err
}

func (s *UnixSocket) recv(b []byte, peek bool) (int, []*fs.Description, Ucred, error) {
	p, end, err := s.connection()
	if err != nil {
		return 0, nil, Ucred{}, unix.EINVAL
	}
	p.mu.Lock()
	if p.queued[end] == 0 && !hasRights(p.in[end]) {
		eof, reset := p.receiveShut(end), p.reset[end]
		p.reset[end] = false
		p.mu.Unlock()
		switch {
		case reset:
			return 0, nil, Ucred{}, unix.ECONNRESET
		case eof || len(b) == 0:
			return 0, nil, Ucred{}, nil
		}
		return 0, nil, Ucred{}, unix.EAGAIN
	}
	n := 0
	var taken scmRights
	segs := p.in[end]
	cred := segs[0].cred
	byCred := s.passcred.Load()
	for i := 0; i < len(segs) && n < len(b); i++ {
		seg := &segs[i]
		if (len(seg.rights) > 0 || byCred && seg.cred != cred) && n > 0 {
			break
		}
		k := copy(b[n:], seg.data)
		n += k
		if peek {
			if seg.rights != nil {
				taken.rights = dupRights(seg.rights)
				break
			}
			continue
		}
		taken, seg.rights = seg.scmRights, nil
		seg.data = seg.data[k:]
		if taken.rights != nil {
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
	if !peek {
		s.stack.inflight.remove(taken)
	}
	return n, taken.rights, cred, nil
}

// recvMessage takes one seqpacket message, as much of it as b holds
// (the rest is dropped unless peek); 0 at the end of the connection.
func (s *UnixSocket) recvMessage(b []byte, peek bool) (int, Received, error) {
	p, end, err := s.connection()
	if err != nil {
		return 0, Received{}, unix.ENOTCONN
	}
	s.mu.Lock()
	peer := s.peer
	s.mu.Unlock()
	p.mu.Lock()
	if len(p.in[end]) == 0 {
		eof, reset := p.receiveShut(end), p.reset[end]
		p.reset[end] = false
		p.mu.Unlock()
		switch {
		case reset:
			return 0, Received{}, unix.ECONNRESET
		case eof:
			return 0, Received{}, nil
		}
		return 0, Received{}, unix.EAGAIN
	}
	seg := p.in[end][0]
	n := copy(b, seg.data)
	r := Received{Total: len(seg.data), From: senderAddr(peer)}
	if s.passcred.Load() {
		r.Cred = &seg.cred
	}
	if peek {
		r.Rights = dupRights(seg.rights)
	} else {
		r.Rights = seg.rights
		p.in[end] = p.in[end][1:]
		p.queued[end] -= len(seg.data)
		p.wmem[1-end] -= seg.charge
		mm.Charged.Uncharge(seg.charge)
	}
	fns := p.notifier.Changed()
	p.mu.Unlock()
	fs.Notify(fns)
	if !peek {
		s.stack.inflight.remove(seg.scmRights)
	}
	return n, r, nil
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
// once the peer closed. A seqpacket write is a message.
func (s *UnixSocket) Write(b []byte) (int, error) {
	if s.seqpacket && len(b) > s.MaxMessage() {
		return 0, unix.EMSGSIZE
	}
	return s.SendMsg(b, nil, Control{}, nil)
}

// CheckDestination refuses a destination on a stream, which sends to its
// peer (EISCONN when connected, as Linux, else EOPNOTSUPP); a seqpacket
// socket ignores it.
func (s *UnixSocket) CheckDestination() error {
	if s.seqpacket {
		return nil
	}
	if _, _, err := s.connection(); err != nil {
		return unix.EOPNOTSUPP
	}
	return unix.EISCONN
}

// SendMsg sends what fits of b to the peer (a seqpacket message whole, or
// nothing), with ctl's descriptions and credentials attached to its first
// byte (the stream takes references to the descriptions). What is queued
// from this end is bounded by its SO_SNDBUF (EAGAIN when full, as Linux's
// sock_alloc_send_pskb) and charged to the kernel-wide budget (ENOBUFS
// when that is spent, as an skb Linux cannot allocate); descriptions are
// refused while the caller's user has too many in flight (ETOOMANYREFS).
// The destination is ignored: CheckDestination refused it where Linux
// does.
func (s *UnixSocket) SendMsg(b []byte, _ *Addr, ctl Control, ns Namespace) (int, error) {
	p, end, err := s.connection()
	if err != nil {
		return 0, unix.ENOTCONN
	}
	var sender Caller
	if len(ctl.Rights) > 0 {
		sender = ns.Caller()
		s.stack.collectIfOver(sender)
	}
	peer := 1 - end
	sndbuf := s.sendBuffer()
	p.mu.Lock()
	if s.seqpacket && p.reset[end] {
		p.reset[end] = false
		p.mu.Unlock()
		return 0, unix.ECONNRESET
	}
	if p.sendShut(end) {
		p.mu.Unlock()
		if s.seqpacket {
			return 0, QuietErrno(unix.EPIPE)
		}
		return 0, unix.EPIPE
	}
	room := sndbuf - p.wmem[end] - unixSegmentOverhead
	if s.seqpacket {
		// Linux sends a message whole whenever some of SO_SNDBUF is free.
		room = min(sndbuf-p.wmem[end], 1)
	}
	if room <= 0 {
		p.mu.Unlock()
		return 0, unix.EAGAIN
	}
	if len(ctl.Rights) > 0 && s.stack.inflight.over(sender) {
		p.mu.Unlock()
		return 0, unix.ETOOMANYREFS
	}
	n := min(room, len(b))
	if n == 0 && len(ctl.Rights) == 0 && !s.seqpacket {
		p.mu.Unlock()
		return 0, nil
	}
	cred := sendCred(ctl, ns, s.passcred.Load() || s.peerPasscred())
	rights := scmRights{ctl.Rights, sender.UID}
	if s.seqpacket {
		n = len(b)
	}
	charge := n + unixSegmentOverhead
	if mm.Charged.ChargeBuffer(charge) != nil {
		p.mu.Unlock()
		s.stack.CollectUnixCycles() // what cycles hold, for the next send
		return 0, unix.ENOBUFS
	}
	for _, d := range rights.rights {
		d.IncRef()
	}
	p.in[peer] = append(p.in[peer], unixSegment{data: append([]byte(nil), b[:n]...), scmRights: rights, cred: cred, charge: charge})
	p.queued[peer] += n
	p.wmem[end] += charge
	fns := p.notifier.Changed()
	p.mu.Unlock()
	fs.Notify(fns)
	if s.stack.inflight.add(rights) {
		s.stack.CollectUnixCycles()
	}
	return n, nil
}

// peerPasscred reports whether the peer has SO_PASSCRED set.
func (s *UnixSocket) peerPasscred() bool {
	return s.pair.sockets[1-s.end].passcred.Load()
}

// sendCred is the SCM_CREDENTIALS a message carries: those the sender
// gave, else its own when either end wants them (want), else none, as
// Linux's maybe_add_creds.
func sendCred(ctl Control, ns Namespace, want bool) Ucred {
	switch {
	case ctl.Cred != nil:
		return *ctl.Cred
	case want && ns != nil:
		return ns.Caller().Scm()
	}
	return noScmCred
}

// shutdownSides is which sides shutdown(2)'s how shuts: EINVAL for a
// value that is none of SHUT_RD, SHUT_WR and SHUT_RDWR.
func shutdownSides(how int) (rd, wr bool, err error) {
	switch how {
	case unix.SHUT_RD:
		return true, false, nil
	case unix.SHUT_WR:
		return false, true, nil
	case unix.SHUT_RDWR:
		return true, true, nil
	}
	return false, false, unix.EINVAL
}

// Shutdown shuts down reading, writing or both.
func (s *UnixSocket) Shutdown(how int) error {
	p, end, err := s.connection()
	if err != nil {
		return err
	}
	rd, wr, err := shutdownSides(how)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.shutRd[end] = p.shutRd[end] || rd
	p.shutWr[end] = p.shutWr[end] || wr
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
	if len(p.in[end]) > 0 {
		r |= unix.EPOLLIN
	}
	if p.reset[end] {
		r |= unix.EPOLLERR
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
		// A connection never accepted resets its client, as Linux's
		// embryo.
		c.pair.mu.Lock()
		c.pair.reset[0] = true
		c.pair.mu.Unlock()
		c.Close()
	}
	s.stack.abstract.release(name, s)
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.closed[end] = true
	if len(p.in[end]) > 0 {
		p.reset[1-end] = true // closed with data unread: the peer reads ECONNRESET once
	}
	dropped := p.dropQueueLocked(end)
	fns = p.notifier.Changed()
	p.mu.Unlock()
	fs.Notify(fns)
	for _, seg := range dropped {
		s.stack.inflight.remove(seg.scmRights)
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
		s.sndbuf.Store(int64(socketBufferSize(v, minSndbuf)))
		return nil
	case unix.SO_RCVBUF:
		s.rcvbuf.Store(int64(socketBufferSize(v, minRcvbuf)))
		return nil
	case unix.SO_SNDBUFFORCE:
		s.sndbuf.Store(int64(forcedBufferSize(v, minSndbuf)))
		return nil
	case unix.SO_RCVBUFFORCE:
		s.rcvbuf.Store(int64(forcedBufferSize(v, minRcvbuf)))
		return nil
	case unix.SO_PASSCRED:
		s.passcred.Store(v != 0)
		return nil
	case unix.SO_REUSEADDR, unix.SO_REUSEPORT, unix.SO_KEEPALIVE:
		return nil
	}
	return unix.ENOPROTOOPT
}

// PeerCred is SO_PEERCRED: who made the peer, when it connected or the
// pair was made; no one for a socket not connected.
func (s *UnixSocket) PeerCred() Ucred {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peerCred
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
	case unix.SO_ERROR:
		if p, end, err := s.connection(); err == nil {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.reset[end] {
				p.reset[end] = false
				return int(unix.ECONNRESET), nil
			}
		}
		return 0, nil
	case unix.SO_PROTOCOL:
		return 0, nil
	case unix.SO_PASSCRED:
		return boolInt(s.passcred.Load()), nil
	case unix.SO_TYPE:
		if s.seqpacket {
			return unix.SOCK_SEQPACKET, nil
		}
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
