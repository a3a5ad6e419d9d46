package net

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
)

// cable is the Device of one end of a cable: every frame it sends
// arrives at the other end's stack, in order, delivered by a goroutine of
// its own as a card's interrupt would. It fails the test on a frame
// larger than Ethernet allows. A frame's buffer is used again once
// delivered (the stack copies it), as a card's ring.
type cable struct {
	t      testing.TB
	frames chan []byte
	free   chan []byte // buffers of frames delivered
	sent   atomic.Int64

	mu  sync.Mutex
	tcp []tcpSegment // what the TCP frames sent carried, in order
}

// tcpSegment is what a TCP frame carried.
type tcpSegment struct {
	flags   header.TCPFlags
	payload int
}

func newCable(t testing.TB) *cable {
	return &cable{t: t, frames: make(chan []byte, 1024), free: make(chan []byte, 1024)}
}

func (c *cable) Send(parts [][]byte) (bool, error) {
	var f []byte
	select {
	case f = <-c.free:
	default:
	}
	for _, p := range parts {
		f = append(f, p...)
	}
	if len(f) > 1514 {
		c.t.Errorf("a %d-byte frame: larger than Ethernet's 1514", len(f))
	}
	c.sent.Add(1)
	if eth := header.Ethernet(f); len(f) > header.EthernetMinimumSize && eth.Type() == header.IPv4ProtocolNumber {
		if ip := header.IPv4(f[header.EthernetMinimumSize:]); ip.IsValid(len(ip)) && ip.TransportProtocol() == header.TCPProtocolNumber {
			tcp := header.TCP(ip.Payload())
			c.mu.Lock()
			c.tcp = append(c.tcp, tcpSegment{tcp.Flags(), len(tcp) - int(tcp.DataOffset())})
			c.mu.Unlock()
		}
	}
	c.frames <- f
	return true, nil
}

func (c *cable) Flush() {}

// segments returns what the TCP frames sent so far carried.
func (c *cable) segments() []tcpSegment {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]tcpSegment(nil), c.tcp...)
}

// plug delivers the cable's frames to s until the test ends.
func (c *cable) plug(s *Stack) {
	done := make(chan struct{})
	c.t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case f := <-c.frames:
				// The frames queued by now are one batch, as a card's ring.
				c.deliver(s, f)
				for more := true; more; {
					select {
					case f := <-c.frames:
						c.deliver(s, f)
					default:
						more = false
					}
				}
				s.EndOfBatch()
			case <-done:
				return
			}
		}
	}()
}

// deliver hands f to s and keeps its buffer for a frame to come.
func (c *cable) deliver(s *Stack, f []byte) {
	s.Deliver(f)
	select {
	case c.free <- f[:0]:
	default:
	}
}

// pair wires two stacks back to back, as a cable would.
func pair(t testing.TB) (a, b *Stack) {
	a, b, _ = pairWithCable(t)
	return a, b
}

// pairWithCable is pair, with the cable from a to b.
func pairWithCable(t testing.TB) (a, b *Stack, ab *cable) {
	t.Helper()
	ab, ba := newCable(t), newCable(t)
	var err error
	ca := Config{MAC: [6]byte{2, 0, 0, 0, 0, 1}, Addr: [4]byte{10, 0, 2, 15}, Prefix: 24, Gateway: [4]byte{10, 0, 2, 2}, MTU: 1500}
	cb := Config{MAC: [6]byte{2, 0, 0, 0, 0, 2}, Addr: [4]byte{10, 0, 2, 2}, Prefix: 24, Gateway: [4]byte{10, 0, 2, 15}, MTU: 1500}
	if a, err = New(ca, ab); err != nil {
		t.Fatal(err)
	}
	if b, err = New(cb, ba); err != nil {
		t.Fatal(err)
	}
	ab.plug(b)
	ba.plug(a)
	return a, b, ab
}

// TestTCPEchoBackToBack runs a TCP echo server on one stack and clients on
// the other, with ARP, the handshake, 1 MiB per connection and FIN.
func TestTCPEchoBackToBack(t *testing.T) {
	server, client := pair(t)
	ln, err := gonet.ListenTCP(server.Stack, tcpip.FullAddress{Port: 7}, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := gonet.DialContextTCP(ctx, client.Stack, tcpip.FullAddress{Addr: tcpip.AddrFrom4([4]byte{10, 0, 2, 15}), Port: 7}, ipv4.ProtocolNumber)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			data := make([]byte, 1<<20)
			rng := rand.New(rand.NewPCG(seed, seed))
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			go c.Write(data)
			got := make([]byte, len(data))
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.ReadFull(c, got); err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(got, data) {
				errs <- io.ErrUnexpectedEOF
			}
		}(uint64(i))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSegmentationOffload sends 4 MiB one way and checks that netstack
// handed the link TCP packets larger than a frame (many more frames left
// than TCP counted segments) and that the frames link cut from them
// arrive whole: the receiving stack checks every checksum and sequence
// number, and the bytes read must be the bytes written.
func TestSegmentationOffload(t *testing.T) {
	server, client, toClient := pairWithCable(t)
	ln, err := gonet.ListenTCP(server.Stack, tcpip.FullAddress{Port: 80}, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	data := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write(data)
		c.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := gonet.DialContextTCP(ctx, client.Stack, tcpip.FullAddress{Addr: tcpip.AddrFrom4([4]byte{10, 0, 2, 15}), Port: 80}, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read %d bytes, then %v", len(got), err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(data))
	}
	segments := server.Stack.Stats().TCP.SegmentsSent.Value()
	frames := uint64(toClient.sent.Load())
	t.Logf("TCP sent %d segments as %d frames", segments, frames)
	if frames < uint64(len(data)/1460) {
		t.Errorf("%d frames carried %d bytes: more than 1460 a frame", frames, len(data))
	}
	if frames < 4*segments {
		t.Errorf("TCP sent %d segments as %d frames: netstack did not hand the link packets larger than a frame", segments, frames)
	}
}
