package net

import (
	"encoding/binary"
	"io"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"

	"github.com/jiege-go/jiege/fs"
)

// TCP_CORK, kept here rather than by netstack, whose cork lost and
// corrupted segments under nginx's tcp_nopush: in a packet capture a
// connection's first full segments after a corked partial one were never
// sent and its retransmission timer resent a later one, so it stalled for
// good, and other bodies arrived whole in length but with wrong bytes
// (TestNginxConcurrentDownloadsSMP; at one hart too). While a connected
// socket is corked, small writes wait in the socket, up to corkHold
// bytes, and go to netstack as one write with what follows: a response's
// headers and body (nginx's writev and sendfile) leave in one segment,
// not two (a fresh connection's frames are QEMU's work and ours), and
// when the program closes the socket still corked, they go with the
// close. Linux holds partial segments the same way; after corkTimeout, as
// on Linux, what waits is sent anyway.
const (
	corkHold    = 4096
	corkTimeout = 200 * time.Millisecond
	// corkRetry is how soon held bytes that the stack had no room for
	// are offered again.
	corkRetry = 5 * time.Millisecond
)

// cork is a socket's held data.
type cork struct {
	mu    sync.Mutex
	held  []byte
	src   payload     // the write under way
	timer *time.Timer // sends held after corkTimeout
	// A shutdown for writing or a close that came while the stack had
	// no room for held: done once held is sent, so that the data goes
	// before the FIN, as Linux sends what it queued before a close.
	shutdownAfter tcpip.ShutdownFlags
	closeAfter    bool
	// A UDP socket's datagram begun with MSG_MORE is held, and its
	// destination (nil: the connected peer), the first send's as on Linux.
	heldTo *Addr
}

// SetCork sets TCP_CORK; clearing it sends what the socket holds.
func (so *InetSocket) SetCork(v bool) {
	so.corked.Store(v)
	if !v {
		so.sendHeld()
	}
}

// SendMore sends b as send(2) with MSG_MORE does. A TCP connection holds
// it as TCP_CORK would, until a send without MSG_MORE or corkTimeout. A
// UDP socket keeps it as the start of a datagram that the next send
// without MSG_MORE completes.
func (so *InetSocket) SendMore(b []byte, to *Addr) (int, error) {
	if !so.dgram {
		return so.write(payload{bytes: b, n: len(b)}, true)
	}
	c := &so.cork
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.held)+len(b) > maxDatagram {
		return 0, unix.EMSGSIZE
	}
	if len(c.held) == 0 {
		if to == nil {
			if _, err := so.ep.GetRemoteAddress(); err != nil {
				return 0, unix.EDESTADDRREQ
			}
		}
		c.heldTo = to
	}
	c.held = append(c.held, b...)
	return len(b), nil
}

// completeDatagram returns b after the datagram MSG_MORE began, and the
// destination to send it to; the socket holds nothing after.
func (so *InetSocket) completeDatagram(b []byte, to *Addr) ([]byte, *Addr, error) {
	c := &so.cork
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.held) == 0 {
		return b, to, nil
	}
	held, heldTo := c.held, c.heldTo
	c.held, c.heldTo = nil, nil
	if len(held)+len(b) > maxDatagram {
		return nil, nil, unix.EMSGSIZE
	}
	return append(held, b...), heldTo, nil
}

// write sends src's bytes after what the socket holds, or holds them too
// (TCP_CORK set, or more: MSG_MORE); it returns how many of src's bytes
// were taken.
func (so *InetSocket) write(src payload, more bool) (int, error) {
	c := &so.cork
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closeAfter || c.shutdownAfter&tcpip.ShutdownWrite != 0 {
		return 0, unix.EPIPE
	}
	n := src.n
	if n == 0 {
		return 0, nil
	}
	c.src = src
	defer func() { c.src = payload{} }() // keep no hold on the caller's memory
	if (more || so.corked.Load()) && len(c.held)+n <= corkHold && (len(c.held) > 0 || so.maySend()) {
		c.takeHeld()
		start := len(c.held)
		c.held = c.held[:start+n]
		if k, err := io.ReadFull(&c.src, c.held[start:]); err != nil {
			c.held = c.held[:start+k]
			if k == 0 {
				if start == 0 {
					c.dropHeld()
				}
				return 0, err
			}
			n = k
		}
		if c.timer == nil {
			c.timer = time.AfterFunc(corkTimeout, so.sendHeld)
		} else if start == 0 {
			c.timer.Reset(corkTimeout)
		}
		return n, nil
	}
	held := len(c.held)
	c.src.held, c.src.n = c.held, held+n
	w, terr := so.ep.Write(&c.src, tcpip.WriteOptions{})
	sent := int(w)
	if sent <= held {
		// The stack took none of src's bytes, and maybe not all held.
		c.held = c.held[:copy(c.held, c.held[sent:])]
		if len(c.held) == 0 {
			c.dropHeld()
		}
		return 0, errorOr(terr, unix.EAGAIN)
	}
	c.dropHeld() // an idle connection keeps no buffer
	return sent - held, nil
}

// payload is what one write hands the stack, n bytes in all: the bytes
// the socket held, then the writer's, from a slice, from user memory
// (copied once, straight into the stack's buffers) or from a reader. A
// socket reuses its own, under cork.mu, so that a write allocates none.
type payload struct {
	held  []byte
	bytes []byte
	user  fs.UserIO
	r     io.Reader
	n     int
}

func (p *payload) Len() int { return p.n }

func (p *payload) Read(b []byte) (int, error) {
	if p.n == 0 {
		return 0, io.EOF
	}
	b = b[:min(len(b), p.n)]
	var k int
	var err error
	switch {
	case len(p.held) > 0:
		k = copy(b, p.held)
		p.held = p.held[k:]
	case p.user != nil:
		k, err = p.user.CopyIn(b)
	case p.r != nil:
		k, err = p.r.Read(b)
	default:
		k = copy(b, p.bytes)
		p.bytes = p.bytes[k:]
	}
	p.n -= k
	return k, err
}

// heldBufs are the buffers of connections that hold bytes: one a
// connection while it holds any, so that an idle one keeps none and a
// corked write allocates none.
var heldBufs = sync.Pool{New: func() any { return new([corkHold]byte) }}

// takeHeld gives a connection that holds nothing a buffer; mu is held.
func (c *cork) takeHeld() {
	if c.held == nil {
		c.held = heldBufs.Get().(*[corkHold]byte)[:0]
	}
}

// dropHeld empties held and gives a connection's buffer back; mu is held.
func (c *cork) dropHeld() {
	if cap(c.held) == corkHold {
		heldBufs.Put((*[corkHold]byte)(c.held[:corkHold]))
	}
	c.held = nil
}

// sendHeld sends what the socket holds (on TCP_CORK's removal, its
// timeout, or a retry), then the shutdown or close that waited for it.
func (so *InetSocket) sendHeld() {
	c := &so.cork
	c.mu.Lock()
	so.sendHeldLocked()
	var shutdown tcpip.ShutdownFlags
	var closing bool
	if len(c.held) == 0 {
		shutdown, closing = c.shutdownAfter, c.closeAfter
		c.shutdownAfter, c.closeAfter = 0, false
	}
	c.mu.Unlock()
	if shutdown != 0 {
		so.ep.Shutdown(shutdown)
	}
	if closing {
		so.closeEndpoint()
	}
}

// sendHeldLocked gives the held bytes to netstack; what it has no room
// for now is offered again after corkRetry. A write that fails for good
// (the connection reset) drops them, as a reset drops what Linux queued.
func (so *InetSocket) sendHeldLocked() {
	c := &so.cork
	if len(c.held) == 0 {
		return
	}
	c.src = payload{held: c.held, n: len(c.held)}
	w, err := so.ep.Write(&c.src, tcpip.WriteOptions{})
	c.src = payload{}
	c.held = c.held[:copy(c.held, c.held[w:])]
	if _, full := err.(*tcpip.ErrWouldBlock); full && len(c.held) > 0 {
		c.timer.Reset(corkRetry)
		return
	}
	if err != nil || len(c.held) == 0 {
		c.dropHeld()
	}
}

// maySend reports whether the socket is a connection that may send: a
// write that would fail (not connected, shut down) is not held but fails.
func (so *InetSocket) maySend() bool {
	switch tcp.EndpointState(so.ep.State()) {
	case tcp.StateEstablished, tcp.StateCloseWait:
		return true
	}
	return false
}

// shutdown shuts the endpoint down after what the socket holds, at once
// when the stack takes it all now.
func (so *InetSocket) shutdown(f tcpip.ShutdownFlags) tcpip.Error {
	c := &so.cork
	c.mu.Lock()
	so.sendHeldLocked()
	if len(c.held) > 0 && f&tcpip.ShutdownWrite != 0 {
		c.shutdownAfter |= f
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	return so.ep.Shutdown(f)
}

// close closes the endpoint after what the socket holds, which leaves
// with the FIN in one frame when the stack sends both now.
func (so *InetSocket) close() {
	c := &so.cork
	c.mu.Lock()
	if key, ok := endpointConnKey(so.ep); ok && so.link != nil && len(c.held) > 0 {
		so.link.hold(key)
		defer so.link.release(key)
	}
	so.sendHeldLocked()
	if len(c.held) > 0 {
		c.closeAfter = true
		c.mu.Unlock()
		return
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	so.closeEndpoint()
}

// closeEndpoint closes the socket's endpoint, which may then wait in
// TIME-WAIT (timewait.go).
func (so *InetSocket) closeEndpoint() {
	so.ep.Close()
	if ep, ok := so.ep.(*tcp.Endpoint); ok && so.tw != nil {
		so.tw.add(ep, so.link)
	}
}

// endpointConnKey names ep's connection as its IPv4 frames out do; false
// for IPv6 and an unconnected endpoint.
func endpointConnKey(ep tcpip.Endpoint) (connKey, bool) {
	local, err := ep.GetLocalAddress()
	if err != nil {
		return connKey{}, false
	}
	remote, err := ep.GetRemoteAddress()
	if err != nil || local.Addr.Len() != 4 || remote.Addr.Len() != 4 {
		return connKey{}, false
	}
	var k connKey
	copy(k[0:], local.Addr.AsSlice())
	copy(k[4:], remote.Addr.AsSlice())
	binary.BigEndian.PutUint16(k[8:], local.Port)
	binary.BigEndian.PutUint16(k[10:], remote.Port)
	return k, true
}

// errorOr returns err's errno, or alt when netstack gave none.
func errorOr(err tcpip.Error, alt error) error {
	if err != nil {
		return Errno(err)
	}
	return alt
}
