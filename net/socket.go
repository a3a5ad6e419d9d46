package net

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"

	"github.com/jiege-go/jiege/fs"
)

// Socket is a TCP socket over netstack, as a file. Its calls never block:
// they return EAGAIN (EINPROGRESS for connect), and the system call layer
// waits for readiness unless the description is non-blocking.
type Socket struct {
	ep  tcpip.Endpoint
	wq  *waiter.Queue
	ino uint64

	corkMu    sync.Mutex
	corked    bool
	corkTimer *time.Timer // pending flush of corked data
}

// corkFlush is how long TCP_CORK may hold data on Linux. netstack's own
// cork timer re-checks the cork when it fires and holds the data again,
// so the socket drains it itself.
const corkFlush = 200 * time.Millisecond

var socketIno atomic.Uint64

// NewTCP opens an IPv4 TCP socket on the stack.
func (s *Stack) NewTCP() (*Socket, error) {
	wq := &waiter.Queue{}
	ep, err := s.Stack.NewEndpoint(tcp.ProtocolNumber, ipv4.ProtocolNumber, wq)
	if err != nil {
		return nil, Errno(err)
	}
	return newSocket(ep, wq), nil
}

func newSocket(ep tcpip.Endpoint, wq *waiter.Queue) *Socket {
	return &Socket{ep: ep, wq: wq, ino: socketIno.Add(1)}
}

// Pending returns how many bytes a read would return now (FIONREAD).
func (so *Socket) Pending() (int, error) {
	n, err := so.ep.GetSockOptInt(tcpip.ReceiveQueueSizeOption)
	return n, Errno(err)
}

// Bind binds the socket to an IPv4 address and port (0.0.0.0: any).
func (so *Socket) Bind(addr [4]byte, port uint16) error {
	fa := tcpip.FullAddress{Port: port}
	if addr != [4]byte{} {
		fa.Addr = tcpip.AddrFrom4(addr)
	}
	return Errno(so.ep.Bind(fa))
}

// Listen makes the socket accept connections.
func (so *Socket) Listen(backlog int) error { return Errno(so.ep.Listen(backlog)) }

// Accept returns the next connection and its peer's address; EAGAIN when
// none is waiting.
func (so *Socket) Accept() (*Socket, [4]byte, uint16, error) {
	var peer tcpip.FullAddress
	ep, wq, err := so.ep.Accept(&peer)
	if err != nil {
		return nil, [4]byte{}, 0, Errno(err)
	}
	return newSocket(ep, wq), addr4(peer.Addr), peer.Port, nil
}

// Connect starts connecting to an IPv4 address and port: EINPROGRESS
// until the socket is writable, when ConnectResult tells how it ended.
func (so *Socket) Connect(addr [4]byte, port uint16) error {
	fa := tcpip.FullAddress{Addr: tcpip.AddrFrom4(addr), Port: port}
	err := so.ep.Connect(fa)
	if _, ok := err.(*tcpip.ErrConnectStarted); ok {
		return unix.EINPROGRESS
	}
	return Errno(err)
}

// ConnectResult is the outcome of a connection attempt (SO_ERROR).
func (so *Socket) ConnectResult() error { return Errno(so.ep.LastError()) }

// LocalAddr and PeerAddr return the socket's addresses.
func (so *Socket) LocalAddr() ([4]byte, uint16, error) {
	a, err := so.ep.GetLocalAddress()
	return addr4(a.Addr), a.Port, Errno(err)
}

// PeerAddr returns the connected peer's address.
func (so *Socket) PeerAddr() ([4]byte, uint16, error) {
	a, err := so.ep.GetRemoteAddress()
	return addr4(a.Addr), a.Port, Errno(err)
}

// addr4 is an IPv4 address's bytes; the unspecified (empty) address is 0.0.0.0.
func addr4(a tcpip.Address) [4]byte {
	if a.Len() != 4 {
		return [4]byte{}
	}
	return a.As4()
}

// SetReuseAddr sets SO_REUSEADDR.
func (so *Socket) SetReuseAddr(v bool) { so.ep.SocketOptions().SetReuseAddress(v) }

// SetNoDelay sets TCP_NODELAY.
func (so *Socket) SetNoDelay(v bool) { so.ep.SocketOptions().SetDelayOption(!v) }

// SetCork sets TCP_CORK: partial segments wait until it is cleared, or
// for corkFlush at most.
func (so *Socket) SetCork(v bool) {
	so.corkMu.Lock()
	defer so.corkMu.Unlock()
	so.corked = v
	if !v && so.corkTimer != nil {
		so.corkTimer.Stop()
		so.corkTimer = nil
	}
	so.ep.SocketOptions().SetCorkOption(v)
}

// armCork starts the flush of data just written under the cork.
func (so *Socket) armCork() {
	so.corkMu.Lock()
	defer so.corkMu.Unlock()
	if !so.corked || so.corkTimer != nil {
		return
	}
	so.corkTimer = time.AfterFunc(corkFlush, func() {
		so.corkMu.Lock()
		defer so.corkMu.Unlock()
		so.corkTimer = nil
		if so.corked {
			// Clearing the cork sends what it held.
			ops := so.ep.SocketOptions()
			ops.SetCorkOption(false)
			ops.SetCorkOption(true)
		}
	})
}

// SetKeepAlive sets SO_KEEPALIVE.
func (so *Socket) SetKeepAlive(v bool) { so.ep.SocketOptions().SetKeepAlive(v) }

// Shutdown shuts down reading, writing or both (SHUT_RD, SHUT_WR, SHUT_RDWR).
func (so *Socket) Shutdown(how int) error {
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
	return Errno(so.ep.Shutdown(f))
}

// Read receives into p; 0 at end of stream, EAGAIN when nothing is there.
func (so *Socket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	w := tcpip.SliceWriter(p)
	r, terr := so.ep.Read(&w, tcpip.ReadOptions{})
	err := Errno(terr)
	if err == errEOF {
		return 0, nil
	}
	return r.Count, err
}

// Peek reads like Read without taking the data (MSG_PEEK).
func (so *Socket) Peek(p []byte) (int, error) {
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
func (so *Socket) Write(p []byte) (int, error) {
	n, err := so.ep.Write(bytes.NewReader(p), tcpip.WriteOptions{})
	if n > 0 {
		so.armCork()
		return int(n), nil
	}
	return 0, Errno(err)
}

// Readiness returns the poll events in mask that hold now (netstack's
// waiter masks are Linux's poll bits).
func (so *Socket) Readiness(mask uint32) uint32 {
	return uint32(so.ep.Readiness(waiter.EventMask(mask)))
}

// Watch calls notify on every event of the endpoint until cancelled.
func (so *Socket) Watch(notify func()) func() {
	e := waiter.NewFunctionEntry(waiter.ReadableEvents|waiter.WritableEvents|waiter.EventErr|waiter.EventHUp|waiter.EventRdHUp,
		func(waiter.EventMask) { notify() })
	so.wq.EventRegister(&e)
	return func() { so.wq.EventUnregister(&e) }
}

// Close closes the endpoint; a connection is shut down gracefully. Corked
// data goes out at once, as on Linux (netstack would hold it for the cork
// timeout first).
func (so *Socket) Close() error {
	so.SetCork(false)
	so.ep.Close()
	return nil
}

// Stat describes the socket as a file.
func (so *Socket) Stat() fs.Stat {
	return fs.Stat{Dev: devSockets, Ino: so.ino, Mode: unix.S_IFSOCK | 0o777, Nlink: 1, Blksize: 4096}
}

// devSockets is st_dev of sockets (Linux's sockfs is an anonymous device too).
const devSockets = 8

// errEOF marks a read on a connection closed for receiving: end of stream.
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
	case *tcpip.ErrBadAddress:
		return unix.EFAULT
	case *tcpip.ErrAddressFamilyNotSupported:
		return unix.EAFNOSUPPORT
	case *tcpip.ErrNotPermitted:
		return unix.EPERM
	}
	return unix.EIO
}
