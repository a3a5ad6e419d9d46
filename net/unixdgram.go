package net

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// Unix datagram sockets: each keeps the datagrams sent to it in a queue
// of its own. A datagram is charged to its sender until it is received or
// dropped: against the sender's SO_SNDBUF (a send waits while the charge
// of its datagrams still queued anywhere reaches it, as Linux's
// sock_alloc_send_pskb) and the kernel-wide budget (ENOBUFS). A receiver
// holds at most unixMaxDgramQueue+1 datagrams from senders it is not
// connected to, as Linux's unix_recvq_full: a syslog daemon's full queue
// makes its clients wait, not the kernel's heap grow.

// unixMaxDgramQueue is net.unix.max_dgram_qlen.
const unixMaxDgramQueue = 10

// unixDatagram is one datagram queued at its receiver.
type unixDatagram struct {
	data []byte
	scmRights
	from   *UnixDgramSocket // whose address recvfrom reports, when it is received
	cred   Ucred
	charge int
}

// UnixDgramSocket is an AF_UNIX datagram socket: unbound or bound to a
// name, connected to a peer or not.
type UnixDgramSocket struct {
	stack    *Stack
	ino      uint64
	peerCred Ucred // SO_PEERCRED: a pair's maker; no one after connect(2), as on Linux
	mu       sync.Mutex
	bound    string
	peer     *UnixDgramSocket
	queue    []unixDatagram
	closed   bool
	shutRd   bool
	shutWr   bool
	err      error // SO_ERROR: ECONNRESET when a peer connected back disconnected with datagrams unread
	// full is the receiver whose full queue refused this socket's last
	// send: a blocked sender waits for it (writable once it has room).
	full     *UnixDgramSocket
	notifier fs.Notifier
	wmem     atomic.Int64 // charge of this socket's datagrams still queued
	sndbuf   atomic.Int64
	rcvbuf   atomic.Int64
	passcred atomic.Bool
	Timeouts
	filterSlot
}

var (
	_ Socket       = (*UnixDgramSocket)(nil)
	_ FilterSocket = (*UnixDgramSocket)(nil)
)

// NewUnixDgram returns an unbound, unconnected Unix datagram socket on s.
func (s *Stack) NewUnixDgram() *UnixDgramSocket {
	return &UnixDgramSocket{stack: s, peerCred: NoPeerCred, ino: s.newSocketIno()}
}

// UnixDgramPair returns two Unix datagram sockets on s connected to each
// other, made by c.
func (s *Stack) UnixDgramPair(c Caller) (*UnixDgramSocket, *UnixDgramSocket) {
	x, y := s.NewUnixDgram(), s.NewUnixDgram()
	x.peer, y.peer = y, x
	x.peerCred, y.peerCred = c.Peer(), c.Peer()
	return x, y
}

// Family is AF_UNIX.
func (s *UnixDgramSocket) Family() uint16 { return unix.AF_UNIX }

// MaxMessage is SO_SNDBUF less 32 bytes, as Linux's unix_dgram_sendmsg
// allows.
func (s *UnixDgramSocket) MaxMessage() int { return s.sendBuffer() - 32 }

// Pending is the length of the first datagram queued (FIONREAD, as
// Linux's unix_ioctl answers for a datagram socket).
func (s *UnixDgramSocket) Pending() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return 0, nil
	}
	return len(s.queue[0].data), nil
}

// Bind binds s as a stream socket is bound (bindUnix).
func (s *UnixDgramSocket) Bind(a Addr, ns Namespace) error {
	return bindUnix(s.stack, s, a, ns, s.name, s.setName)
}

func (s *UnixDgramSocket) name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bound
}

func (s *UnixDgramSocket) setName(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bound != "" {
		return unix.EINVAL
	}
	s.bound = name
	return nil
}

// autobind binds s to a name of its own when SO_PASSCRED asks for one
// before it connects or sends, as Linux does.
func (s *UnixDgramSocket) autobind(ns Namespace) error {
	if !s.passcred.Load() || s.name() != "" {
		return nil
	}
	return s.Bind(Addr{Family: unix.AF_UNIX}, ns)
}

// Listen is EOPNOTSUPP: datagrams have no connections to accept.
func (s *UnixDgramSocket) Listen(int) error { return unix.EOPNOTSUPP }

// Accept is EOPNOTSUPP.
func (s *UnixDgramSocket) Accept() (Socket, Addr, error) { return nil, Addr{}, unix.EOPNOTSUPP }

// UnspecDisconnects is true: connect to AF_UNSPEC dissolves the
// association.
func (s *UnixDgramSocket) UnspecDisconnects() bool { return true }

// ConnectResult is nil: a connect ends at once.
func (s *UnixDgramSocket) ConnectResult() error { return nil }

// Connect makes to the default destination and the only sender s
// receives from; AF_UNSPEC forgets the peer. Leaving a peer drops the
// datagrams queued, as Linux's unix_dgram_disconnected.
func (s *UnixDgramSocket) Connect(to Addr, ns Namespace) error {
	if to.Family == unix.AF_UNSPEC {
		s.setPeer(nil)
		return nil
	}
	o, err := s.receiverAt(to, ns)
	if err != nil {
		return err
	}
	if err := s.autobind(ns); err != nil {
		return err
	}
	o.mu.Lock()
	closed, taken := o.closed, o.peer != nil && o.peer != s
	o.mu.Unlock()
	switch {
	case closed:
		return unix.ECONNREFUSED
	case taken:
		return unix.EPERM // o receives only from its own peer
	}
	s.setPeer(o)
	return nil
}

// receiverAt finds the datagram socket bound to a Unix address.
func (s *UnixDgramSocket) receiverAt(a Addr, ns Namespace) (*UnixDgramSocket, error) {
	so, err := unixBoundAt(s.stack, a, ns)
	if err != nil {
		return nil, err
	}
	o, ok := so.(*UnixDgramSocket)
	if !ok {
		return nil, unix.EPROTOTYPE
	}
	return o, nil
}

// setPeer connects s to o (nil: to no one). Leaving another peer drops
// what s has queued, and a peer connected back then reads ECONNRESET.
func (s *UnixDgramSocket) setPeer(o *UnixDgramSocket) {
	s.mu.Lock()
	old := s.peer
	s.peer = o
	var dropped []unixDatagram
	if old != nil && old != o {
		dropped, s.queue = s.queue, nil
	}
	fns := s.notifier.Changed()
	s.mu.Unlock()
	fs.Notify(fns)
	if len(dropped) == 0 {
		return
	}
	dropDatagrams(dropped)
	old.mu.Lock()
	if !old.closed && old.peer == s {
		old.err = unix.ECONNRESET
	}
	fns = old.notifier.Changed()
	old.mu.Unlock()
	fs.Notify(fns)
}

// dropDatagrams gives back the charge of datagrams never received and
// drops the descriptions they carried.
func dropDatagrams(ds []unixDatagram) {
	for _, d := range ds {
		d.from.uncharge(d.charge)
		d.from.stack.inflight.remove(d.scmRights)
		dropRights(d.rights)
	}
}

// uncharge gives back the charge of one of s's datagrams, which a
// blocked sender may wait for.
func (s *UnixDgramSocket) uncharge(charge int) {
	s.wmem.Add(-int64(charge))
	mm.Charged.Uncharge(charge)
	s.changed()
}

func (s *UnixDgramSocket) changed() {
	s.mu.Lock()
	fns := s.notifier.Changed()
	s.mu.Unlock()
	fs.Notify(fns)
}

// LocalAddr is the bound name.
func (s *UnixDgramSocket) LocalAddr() (Addr, error) { return unixAddr(s.name()), nil }

// PeerAddr is the connected peer's name; ENOTCONN without one.
func (s *UnixDgramSocket) PeerAddr() (Addr, error) {
	s.mu.Lock()
	peer := s.peer
	s.mu.Unlock()
	if peer == nil {
		return Addr{}, unix.ENOTCONN
	}
	return unixAddr(peer.name()), nil
}

// CheckDestination is nil: a datagram may go to any receiver.
func (s *UnixDgramSocket) CheckDestination() error { return nil }

// SendMsg sends b whole as one datagram to to, or to the peer, with
// ctl's descriptions (the datagram takes references) and credentials.
// EAGAIN while s's datagrams queued reach its SO_SNDBUF or the receiver's
// queue is full; ECONNREFUSED when the receiver is gone (the peer is
// then forgotten), EPERM when it is connected to another socket, EPIPE
// (without SIGPIPE) when it shut down reading or s writing; ETOOMANYREFS
// for descriptions while the caller's user has too many in flight.
func (s *UnixDgramSocket) SendMsg(b []byte, to *Addr, ctl Control, ns Namespace) (int, error) {
	var sender Caller
	if len(ctl.Rights) > 0 {
		sender = ns.Caller()
		s.stack.collectIfOver(sender)
	}
	s.mu.Lock()
	shut, peer := s.shutWr, s.peer
	s.mu.Unlock()
	if shut {
		return 0, QuietErrno(unix.EPIPE)
	}
	o := peer
	if to != nil {
		var err error
		if o, err = s.receiverAt(*to, ns); err != nil {
			return 0, err
		}
	} else if o == nil {
		return 0, unix.ENOTCONN
	}
	if ns != nil {
		if err := s.autobind(ns); err != nil {
			return 0, err
		}
	}
	if s.wmem.Load() >= int64(s.sendBuffer()) {
		return 0, unix.EAGAIN
	}
	if len(ctl.Rights) > 0 && s.stack.inflight.over(sender) {
		return 0, unix.ETOOMANYREFS
	}
	charge := len(b) + unixSegmentOverhead
	cred := sendCred(ctl, ns, s.passcred.Load() || o.passcred.Load())
	sent := len(b)
	// The receiver's filter sees the datagram before anything else does,
	// as Linux's unix_dgram_sendmsg: one it drops is sent all the same.
	b, keep := o.filterSlot.run(b)
	if !keep {
		return sent, nil
	}
	o.mu.Lock()
	switch {
	case o.closed:
		o.mu.Unlock()
		if o == peer {
			s.setPeer(nil)
		}
		return 0, unix.ECONNREFUSED
	case o.peer != nil && o.peer != s:
		o.mu.Unlock()
		return 0, unix.EPERM
	case o.shutRd:
		o.mu.Unlock()
		return 0, QuietErrno(unix.EPIPE)
	case o.peer != s && len(o.queue) > unixMaxDgramQueue:
		o.mu.Unlock()
		s.mu.Lock()
		s.full = o
		s.mu.Unlock()
		return 0, unix.EAGAIN
	}
	if mm.Charged.ChargeBuffer(charge) != nil {
		o.mu.Unlock()
		s.stack.CollectUnixCycles() // what cycles hold, for the next send
		return 0, unix.ENOBUFS
	}
	for _, d := range ctl.Rights {
		d.IncRef()
	}
	s.wmem.Add(int64(charge))
	rights := scmRights{ctl.Rights, sender.UID}
	o.queue = append(o.queue, unixDatagram{data: append([]byte(nil), b...), scmRights: rights, from: s, cred: cred, charge: charge})
	fns := o.notifier.Changed()
	o.mu.Unlock()
	fs.Notify(fns)
	if s.stack.inflight.add(rights) {
		s.stack.CollectUnixCycles()
	}
	s.mu.Lock()
	s.full = nil
	s.mu.Unlock()
	return sent, nil
}

// Write sends b as a datagram to the peer.
func (s *UnixDgramSocket) Write(b []byte) (int, error) {
	if len(b) > s.MaxMessage() {
		return 0, unix.EMSGSIZE
	}
	return s.SendMsg(b, nil, Control{}, nil)
}

// WriteFrom sends src's bytes as one datagram.
func (s *UnixDgramSocket) WriteFrom(src fs.UserIO) (int64, error) {
	return fs.WriteStaged(src, s.Write)
}

// RecvMsg takes the first datagram, as much of it as b holds (the rest is
// dropped), with its sender's name, descriptions and, with SO_PASSCRED,
// credentials. With peek it stays queued and the descriptions come as
// new references, as Linux's peek duplicates them. 0 once s shut down
// reading and nothing is queued.
func (s *UnixDgramSocket) RecvMsg(b []byte, peek bool) (int, Received, error) {
	s.mu.Lock()
	if len(s.queue) == 0 {
		shut := s.shutRd
		s.mu.Unlock()
		if shut {
			return 0, Received{}, nil
		}
		return 0, Received{}, unix.EAGAIN
	}
	d := s.queue[0]
	if !peek {
		s.queue = s.queue[1:]
	}
	fns := s.notifier.Changed()
	s.mu.Unlock()
	fs.Notify(fns)
	n := copy(b, d.data)
	r := Received{Total: len(d.data), From: senderAddr(d.from.name()), Rights: d.rights}
	if s.passcred.Load() {
		r.Cred = &d.cred
	}
	if peek {
		r.Rights = dupRights(d.rights)
	} else {
		d.from.uncharge(d.charge)
		s.stack.inflight.remove(d.scmRights)
	}
	return n, r, nil
}

// ReadTo receives one datagram into dst (a copy that faults loses it, as
// Linux's does).
func (s *UnixDgramSocket) ReadTo(dst fs.UserIO) (int64, error) {
	return fs.ReadStaged(dst, func(b []byte) (int, error) {
		n, r, err := s.RecvMsg(b, false)
		dropRights(r.Rights)
		return n, err
	})
}

// Shutdown shuts down s's own reading, writing or both.
func (s *UnixDgramSocket) Shutdown(how int) error {
	rd, wr, err := shutdownSides(how)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.shutRd = s.shutRd || rd
	s.shutWr = s.shutWr || wr
	fns := s.notifier.Changed()
	s.mu.Unlock()
	fs.Notify(fns)
	return nil
}

// Readiness returns the poll events in mask that hold: readable with a
// datagram queued, writable while s's SO_SNDBUF is three quarters free
// and the receiver it waits for (its peer, or the one whose full queue
// refused its last send) has room, as Linux's unix_dgram_poll.
func (s *UnixDgramSocket) Readiness(mask uint32) uint32 {
	s.mu.Lock()
	var r uint32
	if len(s.queue) > 0 {
		r |= unix.EPOLLIN
	}
	if s.shutRd {
		r |= unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if s.shutRd && s.shutWr {
		r |= unix.EPOLLHUP
	}
	if s.err != nil {
		r |= unix.EPOLLERR
	}
	waitFor := s.full
	if waitFor == nil {
		waitFor = s.peer
	}
	s.mu.Unlock()
	if s.wmem.Load()*4 <= int64(s.sendBuffer()) && (waitFor == nil || waitFor.roomFor(s)) {
		r |= unix.EPOLLOUT
	}
	return r & (mask | unix.EPOLLHUP | unix.EPOLLERR)
}

// roomFor reports whether a send from s would find room in o's queue (or
// fail at once: o is gone or shut down).
func (o *UnixDgramSocket) roomFor(s *UnixDgramSocket) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed || o.shutRd || o.peer == s || len(o.queue) <= unixMaxDgramQueue
}

// Watch calls notify on every change of s, and of the receiver a send
// from s waits for.
func (s *UnixDgramSocket) Watch(notify func()) func() {
	cancel := s.notifier.Watch(&s.mu, notify)
	s.mu.Lock()
	waitFor := s.full
	if waitFor == nil {
		waitFor = s.peer
	}
	s.mu.Unlock()
	if waitFor == nil || waitFor == s {
		return cancel
	}
	cancelPeer := waitFor.notifier.Watch(&waitFor.mu, notify)
	return func() { cancel(); cancelPeer() }
}

// Close closes s: its abstract name is freed, its queued datagrams are
// dropped, and senders waiting for room in its queue wake up to find it
// gone.
func (s *UnixDgramSocket) Close() error {
	s.mu.Lock()
	s.closed = true
	dropped, name := s.queue, s.bound
	s.queue, s.peer, s.full = nil, nil, nil
	fns := s.notifier.Changed()
	s.mu.Unlock()
	fs.Notify(fns)
	s.stack.abstract.release(name, s)
	dropDatagrams(dropped)
	s.DetachFilter()
	return nil
}

// SetIntOption sets SO_SNDBUF and SO_RCVBUF as a Unix stream socket does,
// and SO_PASSCRED.
func (s *UnixDgramSocket) SetIntOption(level, name, v int) error {
	if level != unix.SOL_SOCKET {
		return unix.ENOPROTOOPT
	}
	switch name {
	case unix.SO_SNDBUF:
		s.sndbuf.Store(int64(socketBufferSize(v, minSndbuf)))
	case unix.SO_RCVBUF:
		s.rcvbuf.Store(int64(socketBufferSize(v, minRcvbuf)))
	case unix.SO_SNDBUFFORCE:
		s.sndbuf.Store(int64(forcedBufferSize(v, minSndbuf)))
	case unix.SO_RCVBUFFORCE:
		s.rcvbuf.Store(int64(forcedBufferSize(v, minRcvbuf)))
	case unix.SO_PASSCRED:
		s.passcred.Store(v != 0)
	case unix.SO_REUSEADDR, unix.SO_REUSEPORT, unix.SO_KEEPALIVE, unix.SO_BROADCAST:
	default:
		return unix.ENOPROTOOPT
	}
	s.changed() // a larger SO_SNDBUF may make a blocked sender's room
	return nil
}

func (s *UnixDgramSocket) sendBuffer() int {
	if n := s.sndbuf.Load(); n > 0 {
		return int(n)
	}
	return unixDefaultBuffer
}

// IntOption reads the integer options of a Unix datagram socket.
func (s *UnixDgramSocket) IntOption(level, name int) (int, error) {
	if level != unix.SOL_SOCKET {
		return 0, unix.EOPNOTSUPP
	}
	switch name {
	case unix.SO_ERROR:
		s.mu.Lock()
		defer s.mu.Unlock()
		err := s.err
		s.err = nil
		if errno, ok := err.(unix.Errno); ok {
			return int(errno), nil
		}
		return 0, nil
	case unix.SO_PROTOCOL, unix.SO_ACCEPTCONN:
		return 0, nil
	case unix.SO_TYPE:
		return unix.SOCK_DGRAM, nil
	case unix.SO_DOMAIN:
		return unix.AF_UNIX, nil
	case unix.SO_PASSCRED:
		return boolInt(s.passcred.Load()), nil
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

// PeerCred is SO_PEERCRED: the maker of a pair, else no one.
func (s *UnixDgramSocket) PeerCred() Ucred { return s.peerCred }

// SetLinger is accepted and changes nothing.
func (s *UnixDgramSocket) SetLinger(Linger) error { return nil }

// Linger is ENOPROTOOPT: SO_LINGER is not kept.
func (s *UnixDgramSocket) Linger() (Linger, error) { return Linger{}, unix.ENOPROTOOPT }

// Stat describes the socket as a file.
func (s *UnixDgramSocket) Stat() fs.Stat {
	return fs.Stat{Dev: devSockets, Ino: s.ino, Mode: unix.S_IFSOCK | 0o777, Nlink: 1, Blksize: 4096}
}
