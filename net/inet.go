package net

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv6"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
	"gvisor.dev/gvisor/pkg/waiter"

	"github.com/jiege-go/jiege/fs"
)

// InetSocket is a TCP or UDP socket over netstack, IPv4 or IPv6. An IPv6
// socket sees IPv4 peers as v4-mapped addresses (::ffff:a.b.c.d), as on
// Linux.
type InetSocket struct {
	stack *Stack
	ep    tcpip.Endpoint
	wq    *waiter.Queue
	ino   uint64
	dgram bool // UDP
	v6    bool // AF_INET6

	deferAccept atomic.Int32 // TCP_DEFER_ACCEPT in seconds, as Linux rounds it

	readShut atomic.Bool // shut down for reading (SHUT_RD)

	// oobInline is SO_OOBINLINE as set (off by default, as on Linux);
	// netstack keeps urgent data inline whatever it says.
	oobInline atomic.Bool

	corked  atomic.Bool // TCP_CORK as set
	cork    cork        // what TCP_CORK holds, and the write under way (cork.go)
	reading reading     // the read under way
	link    *link       // the Ethernet link, if the stack has one (finmerge.go)
	tw      *timeWaits  // the stack's (timewait.go)
	Timeouts
}

var _ Socket = (*InetSocket)(nil)

// NewTCP opens an IPv4 TCP socket on the stack.
func (s *Stack) NewTCP() (*InetSocket, error) { return s.NewInet(false, false) }

// TCP reports whether s is a TCP socket (not UDP).
func (s *InetSocket) TCP() bool { return !s.dgram }

// NewUDP opens an IPv4 UDP socket on the stack.
func (s *Stack) NewUDP() (*InetSocket, error) { return s.NewInet(true, false) }

// NewInet opens a TCP or (dgram) UDP socket, IPv6 when v6 is set.
func (s *Stack) NewInet(dgram, v6 bool) (*InetSocket, error) {
	trans, netProto := tcp.ProtocolNumber, ipv4.ProtocolNumber
	if dgram {
		trans = udp.ProtocolNumber
	}
	if v6 {
		netProto = ipv6.ProtocolNumber
	}
	wq := &waiter.Queue{}
	ep, err := s.Stack.NewEndpoint(trans, netProto, wq)
	if err != nil {
		return nil, Errno(err)
	}
	so := s.newInet(ep, wq)
	so.dgram, so.v6, so.link, so.tw = dgram, v6, s.link, &s.tw
	if v6 {
		// Linux's net.ipv6.bindv6only is 0: IPv6 sockets take IPv4 too.
		ep.SocketOptions().SetV6Only(false)
	}
	return so, nil
}

// Family is AF_INET or AF_INET6.
func (so *InetSocket) Family() uint16 {
	if so.v6 {
		return unix.AF_INET6
	}
	return unix.AF_INET
}

// maxDatagram is the largest UDP payload over IPv4.
const maxDatagram = 65507

// MaxMessage is the largest UDP payload over IPv4 for a UDP socket; 0 for
// TCP.
func (so *InetSocket) MaxMessage() int {
	if so.dgram {
		return maxDatagram
	}
	return 0
}

// RecvFrom takes the next datagram into p (MSG_PEEK: leaves it queued). It
// returns how many bytes p got, the datagram's full length, and its sender;
// EAGAIN when none is queued, 0 bytes once it is shut down for reading.
// What does not fit in p is lost, as on Linux.
func (so *InetSocket) RecvFrom(p []byte, peek bool) (n, total int, ip netip.Addr, port uint16, err error) {
	w := tcpip.SliceWriter(p)
	r, terr := so.ep.Read(&w, tcpip.ReadOptions{Peek: peek, NeedRemoteAddr: true})
	if _, ok := terr.(*tcpip.ErrBadBuffer); ok && len(p) == 0 {
		terr = nil // a zero-length read takes the datagram
	}
	if err := Errno(terr); err != nil {
		if err == errEOF { // shut down for reading, or closed: 0, as on Linux
			return 0, 0, so.fromNetstack(tcpip.Address{}), 0, nil
		}
		return 0, 0, netip.Addr{}, 0, err
	}
	return r.Count, r.Total, so.fromNetstack(r.RemoteAddr.Addr), r.RemoteAddr.Port, nil
}

// SendTo sends p as one datagram to ip:port.
func (so *InetSocket) SendTo(p []byte, ip netip.Addr, port uint16) (int, error) {
	to, err := so.toNetstack(ip, port)
	if err != nil {
		return 0, err
	}
	n, terr := so.ep.Write(bytes.NewReader(p), tcpip.WriteOptions{To: &to})
	if terr != nil {
		return 0, Errno(terr)
	}
	return int(n), nil
}

// disconnect dissolves a UDP socket's association (connect to AF_UNSPEC).
func (so *InetSocket) disconnect() error { return Errno(so.ep.Disconnect()) }

// UnspecDisconnects reports whether the socket is a UDP socket, which
// connect(2) to AF_UNSPEC dissolves.
func (so *InetSocket) UnspecDisconnects() bool { return so.dgram }

func (s *Stack) newInet(ep tcpip.Endpoint, wq *waiter.Queue) *InetSocket {
	return &InetSocket{stack: s, ep: ep, wq: wq, ino: s.newSocketIno()}
}

// Pending returns how many bytes a read would return now (FIONREAD).
func (so *InetSocket) Pending() (int, error) {
	n, err := so.ep.GetSockOptInt(tcpip.ReceiveQueueSizeOption)
	return n, Errno(err)
}

// Bind binds the socket to an address and port (the unspecified
// address: any).
func (so *InetSocket) Bind(a Addr, _ Namespace) error {
	fa, err := so.toNetstack(a.IP, a.Port)
	if err != nil {
		return err
	}
	return Errno(so.ep.Bind(fa))
}

// toNetstack turns an address of the socket's family into netstack's
// form: IPv4 addresses (v4-mapped on IPv6 sockets) as 4 bytes, the
// unspecified address as none. EAFNOSUPPORT for an IPv6 address on an
// IPv4 socket; ENETUNREACH for a v4-mapped one on an IPV6_V6ONLY socket.
func (so *InetSocket) toNetstack(ip netip.Addr, port uint16) (tcpip.FullAddress, error) {
	fa := tcpip.FullAddress{Port: port}
	switch {
	case !ip.IsValid() || ip.IsUnspecified():
	case ip.Is4() || ip.Is4In6():
		if ip.Is4In6() && so.ep.SocketOptions().GetV6Only() {
			return fa, unix.ENETUNREACH
		}
		fa.Addr = tcpip.AddrFrom4(ip.Unmap().As4())
	case !so.v6:
		return fa, unix.EAFNOSUPPORT
	default:
		fa.Addr = tcpip.AddrFrom16(ip.As16())
	}
	return fa, nil
}

// fromNetstack is the address as the socket's family shows it.
func (so *InetSocket) fromNetstack(a tcpip.Address) netip.Addr {
	var ip netip.Addr
	switch a.Len() {
	case 4:
		ip = netip.AddrFrom4(a.As4())
		if so.v6 {
			ip = netip.AddrFrom16(ip.As16())
		}
		return ip
	case 16:
		return netip.AddrFrom16(a.As16())
	}
	if so.v6 {
		return netip.IPv6Unspecified()
	}
	return netip.IPv4Unspecified()
}

// Listen makes the socket accept connections.
func (so *InetSocket) Listen(backlog int) error {
	// Linux caps the backlog at net.core.somaxconn (4096), as it takes a
	// negative one, and queues one connection more (sk_acceptq_is_full).
	if backlog < 0 || backlog > somaxconn {
		backlog = somaxconn
	}
	return Errno(so.ep.Listen(backlog + 1))
}

// somaxconn is Linux's default net.core.somaxconn.
const somaxconn = 4096

// Accept returns the next connection and its peer's address; EAGAIN when
// none is waiting.
func (so *InetSocket) Accept() (Socket, Addr, error) {
	conn, peer, err := so.accept()
	if err != nil {
		return nil, Addr{}, err
	}
	return conn, peer, nil
}

func (so *InetSocket) accept() (*InetSocket, Addr, error) {
	listener, ok := so.ep.(*tcp.Endpoint)
	if !ok {
		return nil, Addr{}, unix.EOPNOTSUPP // as netstack's UDP endpoint answers
	}
	var peer tcpip.FullAddress // on the stack: through the interface it escaped
	ep, wq, err := listener.Accept(&peer)
	if err != nil {
		return nil, Addr{}, Errno(err)
	}
	conn := so.stack.newInet(ep, wq)
	conn.link, conn.tw = so.link, so.tw
	conn.v6 = so.v6
	return conn, so.addr(peer), nil
}

// addr is a netstack address as the socket's family shows it.
func (so *InetSocket) addr(a tcpip.FullAddress) Addr {
	return Addr{Family: so.Family(), IP: so.fromNetstack(a.Addr), Port: a.Port}
}

// Connect starts connecting to an address and port: EINPROGRESS until
// the socket is writable, when ConnectResult tells how it ended. A UDP
// socket is associated at once, or dissolved by AF_UNSPEC.
func (so *InetSocket) Connect(to Addr, _ Namespace) error {
	if to.Family == unix.AF_UNSPEC {
		return so.disconnect()
	}
	fa, err := so.toNetstack(to.IP, to.Port)
	if err != nil {
		return err
	}
	if st := tcp.EndpointState(so.ep.State()); !so.dgram && (st == tcp.StateEstablished || st == tcp.StateCloseWait) {
		return unix.EISCONN // netstack accepts a connect to the same peer again
	}
	terr := so.ep.Connect(fa)
	if _, ok := terr.(*tcpip.ErrConnectStarted); ok {
		return unix.EINPROGRESS
	}
	return Errno(terr)
}

// ConnectResult is the outcome of a connection attempt (SO_ERROR); it
// clears the error. netstack records a failed connection's error twice
// (hard and last error), Linux reports it once: both copies go.
func (so *InetSocket) ConnectResult() error {
	err := so.ep.LastError()
	if err != nil {
		so.ep.LastError()
	}
	return Errno(err)
}

// LocalAddr returns the socket's own address.
func (so *InetSocket) LocalAddr() (Addr, error) {
	a, err := so.ep.GetLocalAddress()
	return so.addr(a), Errno(err)
}

// PeerAddr returns the connected peer's address.
func (so *InetSocket) PeerAddr() (Addr, error) {
	a, err := so.ep.GetRemoteAddress()
	return so.addr(a), Errno(err)
}

// CheckDestination lets a send name a destination: a UDP socket sends
// there, a TCP socket ignores it, as Linux does.
func (so *InetSocket) CheckDestination() error { return nil }

// SendMsg sends b: a datagram to to, or to the connected peer. An inet
// socket passes no descriptions.
func (so *InetSocket) SendMsg(b []byte, to *Addr, _ Control, _ Namespace) (int, error) {
	if !so.dgram {
		if to != nil {
			return so.SendTo(b, to.IP, to.Port)
		}
		return so.Write(b)
	}
	datagram, dest, err := so.completeDatagram(b, to)
	if err != nil {
		return 0, err
	}
	if dest != nil {
		_, err = so.SendTo(datagram, dest.IP, dest.Port)
	} else {
		_, err = so.Write(datagram)
	}
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// RecvMsg receives a datagram and its sender, or what a stream holds.
func (so *InetSocket) RecvMsg(b []byte, peek bool) (int, Received, error) {
	if so.dgram {
		n, total, ip, port, err := so.RecvFrom(b, peek)
		return n, Received{Total: total, From: Addr{Family: so.Family(), IP: ip, Port: port}}, err
	}
	read := so.Read
	if peek {
		read = so.Peek
	}
	n, err := read(b)
	return n, Received{}, err
}

// SetIntOption sets an integer socket option, level and name as
// setsockopt(2) takes them: ENOPROTOOPT for one the socket does not have.
func (so *InetSocket) SetIntOption(level, name, v int) error {
	ops := so.ep.SocketOptions()
	on := v != 0
	switch {
	case level == unix.SOL_SOCKET && name == unix.SO_REUSEADDR:
		ops.SetReuseAddress(on)
	case level == unix.SOL_SOCKET && name == unix.SO_REUSEPORT:
		ops.SetReusePort(on)
	case level == unix.SOL_SOCKET && name == unix.SO_KEEPALIVE:
		ops.SetKeepAlive(on)
	case level == unix.SOL_SOCKET && name == unix.SO_BROADCAST:
		ops.SetBroadcast(on)
	case level == unix.SOL_SOCKET && name == unix.SO_OOBINLINE:
		so.oobInline.Store(on)
	// Clamped as Linux clamps them (unix.go): netstack takes any size,
	// and a send buffer of 0 bytes never has room.
	case level == unix.SOL_SOCKET && name == unix.SO_RCVBUF:
		ops.SetReceiveBufferSize(int64(socketBufferSize(v, minRcvbuf)), true)
	case level == unix.SOL_SOCKET && name == unix.SO_RCVBUFFORCE:
		ops.SetReceiveBufferSize(int64(forcedBufferSize(v, minRcvbuf)), true)
	case level == unix.SOL_SOCKET && name == unix.SO_SNDBUF:
		ops.SetSendBufferSize(int64(socketBufferSize(v, minSndbuf)), true)
	case level == unix.SOL_SOCKET && name == unix.SO_SNDBUFFORCE:
		ops.SetSendBufferSize(int64(forcedBufferSize(v, minSndbuf)), true)
	case level == unix.IPPROTO_IPV6 && name == unix.IPV6_V6ONLY && so.v6:
		ops.SetV6Only(on)
	case level == unix.IPPROTO_IP && name == unix.IP_RECVERR:
		ops.SetIPv4RecvError(on)
	case level == unix.IPPROTO_IPV6 && name == unix.IPV6_RECVERR && so.v6:
		ops.SetIPv6RecvError(on)
	case level == unix.IPPROTO_IP && name == unix.IP_MTU_DISCOVER:
		// Accepted; path MTU discovery is netstack's own.
	case level != unix.IPPROTO_TCP || so.dgram:
		return unix.ENOPROTOOPT
	case name == unix.TCP_NODELAY:
		ops.SetDelayOption(!on)
	case name == unix.TCP_CORK:
		so.SetCork(on)
	case name == unix.TCP_DEFER_ACCEPT:
		secs := deferAcceptSeconds(v)
		opt := tcpip.TCPDeferAcceptOption(time.Duration(secs) * time.Second)
		if err := so.ep.SetSockOpt(&opt); err != nil {
			return Errno(err)
		}
		so.deferAccept.Store(int32(secs))
	default:
		return unix.ENOPROTOOPT
	}
	return nil
}

// IntOption reads an integer socket option, as getsockopt(2) names it.
// SO_ERROR reports and clears the pending error.
func (so *InetSocket) IntOption(level, name int) (int, error) {
	ops := so.ep.SocketOptions()
	switch {
	case level == unix.SOL_SOCKET && name == unix.SO_ERROR:
		if errno, ok := so.ConnectResult().(unix.Errno); ok {
			return int(errno), nil
		}
		return 0, nil
	case level == unix.SOL_SOCKET && name == unix.SO_TYPE:
		if so.dgram {
			return unix.SOCK_DGRAM, nil
		}
		return unix.SOCK_STREAM, nil
	case level == unix.SOL_SOCKET && name == unix.SO_DOMAIN:
		if so.v6 {
			return unix.AF_INET6, nil
		}
		return unix.AF_INET, nil
	case level == unix.SOL_SOCKET && name == unix.SO_PROTOCOL:
		if so.dgram {
			return unix.IPPROTO_UDP, nil
		}
		return unix.IPPROTO_TCP, nil
	case level == unix.SOL_SOCKET && name == unix.SO_ACCEPTCONN:
		return boolInt(!so.dgram && tcp.EndpointState(so.ep.State()) == tcp.StateListen), nil
	case level == unix.SOL_SOCKET && name == unix.SO_REUSEADDR:
		return boolInt(ops.GetReuseAddress()), nil
	case level == unix.SOL_SOCKET && name == unix.SO_REUSEPORT:
		return boolInt(ops.GetReusePort()), nil
	case level == unix.SOL_SOCKET && name == unix.SO_KEEPALIVE:
		return boolInt(ops.GetKeepAlive()), nil
	case level == unix.SOL_SOCKET && name == unix.SO_BROADCAST:
		return boolInt(ops.GetBroadcast()), nil
	case level == unix.SOL_SOCKET && name == unix.SO_OOBINLINE:
		return boolInt(so.oobInline.Load()), nil
	case level == unix.SOL_SOCKET && name == unix.SO_RCVBUF:
		return int(ops.GetReceiveBufferSize()), nil
	case level == unix.SOL_SOCKET && name == unix.SO_SNDBUF:
		return int(ops.GetSendBufferSize()), nil
	case level == unix.IPPROTO_IPV6 && name == unix.IPV6_V6ONLY && so.v6:
		return boolInt(ops.GetV6Only()), nil
	case level == unix.IPPROTO_IP && name == unix.IP_RECVERR:
		return boolInt(ops.GetIPv4RecvError()), nil
	case level == unix.IPPROTO_IPV6 && name == unix.IPV6_RECVERR && so.v6:
		return boolInt(ops.GetIPv6RecvError()), nil
	case level != unix.IPPROTO_TCP || so.dgram:
		return 0, so.unknownOption(level)
	case name == unix.TCP_NODELAY:
		return boolInt(!ops.GetDelayOption()), nil
	case name == unix.TCP_DEFER_ACCEPT:
		return int(so.deferAccept.Load()), nil
	case name == unix.TCP_CORK:
		return boolInt(so.corked.Load()), nil
	}
	return 0, unix.ENOPROTOOPT
}

// unknownOption is getsockopt's errno for an option the socket does not
// have: ENOPROTOOPT at a level it has, EOPNOTSUPP at another, as Linux's
// ip_getsockopt answers a level that is not its own.
func (so *InetSocket) unknownOption(level int) error {
	switch {
	case level == unix.SOL_SOCKET, level == unix.IPPROTO_IP,
		level == unix.IPPROTO_IPV6 && so.v6,
		level == unix.IPPROTO_TCP && !so.dgram,
		level == unix.IPPROTO_UDP && so.dgram:
		return unix.ENOPROTOOPT
	}
	return unix.EOPNOTSUPP
}

// deferAcceptSeconds rounds a TCP_DEFER_ACCEPT time up as Linux does:
// Linux keeps it as a count of SYN-ACK retransmissions (timeouts of 1, 2,
// 4 ... s, at most 120 s each, at most 255 of them) and reports the time
// those take.
func deferAcceptSeconds(secs int) int {
	if secs <= 0 {
		return 0
	}
	timeout, period := 1, 1
	for retrans := 1; secs > period && retrans < 255; retrans++ {
		timeout = min(2*timeout, 120)
		period += timeout
	}
	return period
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SetLinger sets SO_LINGER.
func (so *InetSocket) SetLinger(l Linger) error {
	so.ep.SocketOptions().SetLinger(tcpip.LingerOption{Enabled: l.On, Timeout: time.Duration(l.Seconds) * time.Second})
	return nil
}

// Linger reads SO_LINGER.
func (so *InetSocket) Linger() (Linger, error) {
	l := so.ep.SocketOptions().GetLinger()
	return Linger{On: l.Enabled, Seconds: int(l.Timeout / time.Second)}, nil
}

// Shutdown shuts down reading, writing or both (SHUT_RD, SHUT_WR, SHUT_RDWR).
func (so *InetSocket) Shutdown(how int) error {
	var f tcpip.ShutdownFlags
	switch how {
	case unix.SHUT_RD:
		f = tcpip.ShutdownRead
	case unix.SHUT_WR:
		f = tcpip.ShutdownWrite
	case unix.SHUT_RDWR:
		f = tcpip.ShutdownRead | tcpip.ShutdownWrite
	default:
		return unix.EINVAL
	}
	err := Errno(so.shutdown(f))
	if f&tcpip.ShutdownRead != 0 && (err == nil || so.dgram) {
		// Linux marks the socket shut down for reading even when an
		// unconnected UDP socket's shutdown fails with ENOTCONN; poll
		// then says EPOLLIN and EPOLLRDHUP, which netstack does not.
		so.readShut.Store(true)
		so.wq.Notify(waiter.ReadableEvents | waiter.EventRdHUp)
	}
	return err
}

// ReadTo receives into dst. A connection's bytes go from the stack's
// buffers straight to user memory, the bytes before a fault taken, as
// Linux's tcp_recvmsg; a datagram is staged through a buffer, for it is
// taken whole or not at all.
func (so *InetSocket) ReadTo(dst fs.UserIO) (int64, error) {
	if so.dgram {
		return fs.ReadStaged(dst, so.Read)
	}
	if dst.Len() == 0 {
		return 0, nil
	}
	so.reading.mu.Lock()
	defer so.reading.mu.Unlock()
	so.reading.user = userSink{dst}
	defer func() { so.reading.user = userSink{} }() // keep no hold on the caller's memory
	n, err := so.readInto(&so.reading.user)
	return int64(n), err
}

// WriteFrom sends src's bytes: a connection's are copied once, from user
// memory into the stack's buffers; a datagram's are staged.
func (so *InetSocket) WriteFrom(src fs.UserIO) (int64, error) {
	if so.dgram {
		return fs.WriteStaged(src, so.Write)
	}
	n, err := so.write(payload{user: src, n: int(min(src.Len(), fs.IOChunk))}, false)
	return int64(n), err
}

// Read receives into p; 0 at end of stream, EAGAIN when nothing is there.
func (so *InetSocket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	so.reading.mu.Lock()
	defer so.reading.mu.Unlock()
	so.reading.slice = tcpip.SliceWriter(p)
	defer func() { so.reading.slice = nil }()
	return so.readInto(&so.reading.slice)
}

// reading is what a socket's reads reuse, one read at a time (as Linux's
// socket lock orders them), so that a read allocates no writer.
type reading struct {
	mu    sync.Mutex
	slice tcpip.SliceWriter
	user  userSink
}

// userSink writes the stack's bytes to user memory: short, with EFAULT,
// at a page it may not write, and io.ErrShortWrite once it is full, which
// ends the stack's read there.
type userSink struct{ dst fs.UserIO }

func (u *userSink) Write(p []byte) (int, error) {
	n, err := u.dst.CopyOut(p[:min(int64(len(p)), u.dst.Len())])
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return n, err
}

// readInto receives into w (so.reading is held).
func (so *InetSocket) readInto(w io.Writer) (int, error) {
	r, terr := so.ep.Read(w, tcpip.ReadOptions{})
	err := Errno(terr)
	switch err {
	case errEOF:
		return 0, nil
	case unix.EAGAIN:
		// netstack delivers a loopback segment in its own goroutines,
		// where Linux delivers it before the send returns: a program
		// that polls with MSG_DONTWAIT (LTP's send02) would keep them
		// off the hart until the next tick, 30 ms a segment.
		runtime.Gosched()
	}
	return r.Count, err
}

// Peek reads like Read without taking the data (MSG_PEEK).
func (so *InetSocket) Peek(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	w := tcpip.SliceWriter(p)
	r, terr := so.ep.Read(&w, tcpip.ReadOptions{Peek: true})
	err := Errno(terr)
	if err == errEOF {
		return 0, nil
	}
	return r.Count, err
}

// Write sends what fits of p; EAGAIN when nothing does.
func (so *InetSocket) Write(p []byte) (int, error) {
	if !so.dgram {
		return so.write(payload{bytes: p, n: len(p)}, false)
	}
	n, err := so.ep.Write(bytes.NewReader(p), tcpip.WriteOptions{})
	if n > 0 {
		return int(n), nil
	}
	return 0, Errno(err)
}

// WriteReader sends what fits of the n bytes r holds, read straight into
// the stack's buffers (sendfile's path: no copy between the file and the
// socket); EAGAIN when nothing fits. r must yield its n bytes or fail:
// the stack reads until it has them.
func (so *InetSocket) WriteReader(r io.Reader, n int) (int, error) {
	if !so.dgram {
		return so.write(payload{r: r, n: n}, false)
	}
	w, err := so.ep.Write(sizedReader{r, n}, tcpip.WriteOptions{})
	if w > 0 {
		return int(w), nil
	}
	return 0, Errno(err)
}

// sizedReader is a reader that says how much it holds (tcpip.Payloader).
type sizedReader struct {
	io.Reader
	n int
}

func (r sizedReader) Len() int { return r.n }

// Readiness returns the poll events in mask that hold now (netstack's
// waiter masks are Linux's poll bits). netstack sets EPOLLRDHUP once the
// peer has shut down, whatever the mask: a write waiting for room on such
// a connection saw it as ready, tried again, and spun where no signal
// could end it.
func (so *InetSocket) Readiness(mask uint32) uint32 {
	r := uint32(so.ep.Readiness(waiter.EventMask(mask))) & mask
	if so.readShut.Load() {
		r |= (unix.EPOLLIN | unix.EPOLLRDHUP) & mask
	}
	return r
}

// Watch calls notify on every event of the endpoint until cancelled.
func (so *InetSocket) Watch(notify func()) func() {
	w := &inetWatch{wq: so.wq, notify: notify}
	w.entry.Init(w, waiter.ReadableEvents|waiter.WritableEvents|waiter.EventErr|waiter.EventHUp|waiter.EventRdHUp)
	so.wq.EventRegister(&w.entry)
	return w.cancel
}

// inetWatch is one Watch of a socket: its entry in the socket's queue
// and the function to call, in one object (a function entry and two
// closures were three).
type inetWatch struct {
	entry  waiter.Entry
	wq     *waiter.Queue
	notify func()
}

func (w *inetWatch) NotifyEvent(waiter.EventMask) { w.notify() }

func (w *inetWatch) cancel() { w.wq.EventUnregister(&w.entry) }

// Close closes the endpoint; a connection is shut down gracefully, after
// what TCP_CORK held.
func (so *InetSocket) Close() error {
	so.close()
	return nil
}

// Stat describes the socket as a file.
func (so *InetSocket) Stat() fs.Stat {
	return fs.Stat{Dev: devSockets, Ino: so.ino, Mode: unix.S_IFSOCK | 0o777, Nlink: 1, Blksize: 4096}
}

// devSockets is st_dev of sockets (Linux's sockfs is an anonymous device too).
const devSockets = 8

// errEOF marks a read on a connection closed for receiving: end of stream
// (a sentinel value, never changed).
var errEOF = errors.New("end of stream")

// Errno maps a netstack error to a Linux errno (nil for nil).
func Errno(err tcpip.Error) error {
	switch err.(type) {
	case nil:
		return nil
	case *tcpip.ErrClosedForReceive:
		return errEOF
	case *tcpip.ErrWouldBlock:
		return unix.EAGAIN
	case *tcpip.ErrConnectionRefused:
		return unix.ECONNREFUSED
	case *tcpip.ErrConnectionReset:
		return unix.ECONNRESET
	case *tcpip.ErrConnectionAborted, *tcpip.ErrAborted:
		return unix.ECONNABORTED
	case *tcpip.ErrClosedForSend:
		return unix.EPIPE
	case *tcpip.ErrNotConnected:
		return unix.ENOTCONN
	case *tcpip.ErrAlreadyConnected:
		return unix.EISCONN
	case *tcpip.ErrAlreadyConnecting, *tcpip.ErrConnectStarted:
		return unix.EALREADY
	case *tcpip.ErrPortInUse, *tcpip.ErrAlreadyBound:
		return unix.EADDRINUSE
	case *tcpip.ErrBadLocalAddress:
		return unix.EADDRNOTAVAIL
	case *tcpip.ErrNetworkUnreachable, *tcpip.ErrNoNet:
		return unix.ENETUNREACH
	case *tcpip.ErrHostUnreachable, *tcpip.ErrHostDown:
		return unix.EHOSTUNREACH
	case *tcpip.ErrTimeout:
		return unix.ETIMEDOUT
	case *tcpip.ErrInvalidEndpointState, *tcpip.ErrInvalidOptionValue:
		return unix.EINVAL
	case *tcpip.ErrNoBufferSpace:
		return unix.ENOBUFS
	case *tcpip.ErrNotSupported, *tcpip.ErrQueueSizeNotSupported:
		return unix.EOPNOTSUPP
	case *tcpip.ErrMessageTooLong:
		return unix.EMSGSIZE
	case *tcpip.ErrNoPortAvailable:
		return unix.EAGAIN
	case *tcpip.ErrBadAddress, *tcpip.ErrBadBuffer:
		return unix.EFAULT
	case *tcpip.ErrAddressFamilyNotSupported:
		return unix.EAFNOSUPPORT
	case *tcpip.ErrNotPermitted:
		return unix.EPERM
	case *tcpip.ErrDestinationRequired:
		return unix.EDESTADDRREQ
	case *tcpip.ErrBroadcastDisabled:
		return unix.EACCES
	case *tcpip.ErrUnknownProtocolOption:
		return unix.ENOPROTOOPT
	}
	return unix.EIO
}
