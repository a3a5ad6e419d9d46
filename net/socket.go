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

// Socket is a TCP socket over netstack, as a file. Blocking calls wait on
// the endpoint's waiter queue; a non-blocking socket returns EAGAIN.
type Socket struct {
	ep       tcpip.Endpoint
	wq       *waiter.Queue
	nonblock atomic.Bool
	ino      uint64

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
func (s *Stack) NewTCP(nonblock bool) (*Socket, error) {
	wq := &waiter.Queue{}
	ep, err := s.Stack.NewEndpoint(tcp.ProtocolNumber, ipv4.ProtocolNumber, wq)
	if err != nil {
		return nil, Errno(err)
	}
	return newSocket(ep, wq, nonblock), nil
}

func newSocket(ep tcpip.Endpoint, wq *waiter.Queue, nonblock bool) *Socket {
	so := &Socket{ep: ep, wq: wq, ino: socketIno.Add(1)}
	so.nonblock.Store(nonblock)
	return so
}

// Pending returns how many bytes a read would return now (FIONREAD).
func (so *Socket) Pending() (int, error) {
	n, err := so.ep.GetSockOptInt(tcpip.ReceiveQueueSizeOption)
	return n, Errno(err)
}

// SetNonblock sets O_NONBLOCK.
func (so *Socket) SetNonblock(v bool) { so.nonblock.Store(v) }

// Nonblock reports O_NONBLOCK.
func (so *Socket) Nonblock() bool { return so.nonblock.Load() }

// wait runs op until it stops saying ErrWouldBlock, sleeping on the
// endpoint's events in between; a non-blocking socket returns EAGAIN.
func (so *Socket) wait(mask waiter.EventMask, op func() tcpip.Error) error {
	err := op()
	if _, ok := err.(*tcpip.ErrWouldBlock); !ok || so.nonblock.Load() {
		return Errno(err)
	}
	e, ch := waiter.NewChannelEntry(mask)
	so.wq.EventRegister(&e)
	defer so.wq.EventUnregister(&e)
	for {
		err = op()
		if _, ok := err.(*tcpip.ErrWouldBlock); !ok {
			return Errno(err)
		}
		<-ch
	}
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

// Accept returns the next connection and its peer's address.
func (so *Socket) Accept(nonblock bool) (*Socket, [4]byte, uint16, error) {
	var peer tcpip.FullAddress
	var ep tcpip.Endpoint
	var wq *waiter.Queue
	err := so.wait(waiter.ReadableEvents, func() tcpip.Error {
		var err tcpip.Error
		ep, wq, err = so.ep.Accept(&peer)
		return err
	})
	if err != nil {
		return nil, [4]byte{}, 0, err
	}
	return newSocket(ep, wq, nonblock), addr4(peer.Addr), peer.Port, nil
}

// Connect connects to an IPv4 address and port.
func (so *Socket) Connect(addr [4]byte, port uint16) error {
	fa := tcpip.FullAddress{Addr: tcpip.AddrFrom4(addr), Port: port}
	err := so.ep.Connect(fa)
	if _, ok := err.(*tcpip.ErrConnectStarted); !ok {
		return Errno(err)
	}
	if so.nonblock.Load() {
		return unix.EINPROGRESS
	}
	e, ch := waiter.NewChannelEntry(waiter.WritableEvents)
	so.wq.EventRegister(&e)
	defer so.wq.EventUnregister(&e)
	for so.ep.Readiness(waiter.WritableEvents) == 0 {
		<-ch
	}
	return Errno(so.ep.LastError())
}

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

// Read receives into p; 0 at end of stream.
func (so *Socket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	err := so.wait(waiter.ReadableEvents, func() tcpip.Error {
		w := tcpip.SliceWriter(p)
		r, err := so.ep.Read(&w, tcpip.ReadOptions{})
		n = r.Count
		return err
	})
	if err == errEOF {
		return 0, nil
	}
	return n, err
}

// Write sends all of p unless the socket is non-blocking, when it sends
// what fits and returns EAGAIN only if nothing did.
func (so *Socket) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		var n int64
		err := so.wait(waiter.WritableEvents, func() tcpip.Error {
			var err tcpip.Error
			n, err = so.ep.Write(bytes.NewReader(p[done:]), tcpip.WriteOptions{})
			return err
		})
		done += int(n)
		if n > 0 {
			so.armCork()
		}
		if err != nil {
			if done > 0 && err == unix.EAGAIN {
				return done, nil
			}
			return done, err
		}
	}
	return done, nil
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
