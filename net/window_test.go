package net

import (
	"bytes"
	"net"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/checksum"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
)

// tap is a Device whose frames the test reads.
type tap chan []byte

func (c tap) Send(parts [][]byte) (bool, error) {
	c <- bytes.Join(parts, nil)
	return true, nil
}
func (c tap) Flush() {}

// rawPeer is a TCP peer at 10.0.2.2:40000 that the test drives a segment at
// a time, connected to port 7 of a stack at 10.0.2.15.
type rawPeer struct {
	t        *testing.T
	s        *Stack
	from     tap
	nxt, ack uint32 // the next sequence number to send; the stack's, acknowledged
	scale    uint8  // the stack's window scale
}

var (
	peerAddr  = tcpip.AddrFrom4([4]byte{10, 0, 2, 2})
	stackAddr = tcpip.AddrFrom4([4]byte{10, 0, 2, 15})
)

const peerPort = 40000

// send delivers one segment to the stack.
func (p *rawPeer) send(seq uint32, flags header.TCPFlags, opts, payload []byte) {
	tcpLen := header.TCPMinimumSize + len(opts)
	f := make([]byte, header.EthernetMinimumSize+header.IPv4MinimumSize+tcpLen+len(payload))
	header.Ethernet(f).Encode(&header.EthernetFields{Type: header.IPv4ProtocolNumber,
		SrcAddr: tcpip.LinkAddress([]byte{2, 0, 0, 0, 0, 2}), DstAddr: tcpip.LinkAddress([]byte{2, 0, 0, 0, 0, 1})})
	ip := header.IPv4(f[header.EthernetMinimumSize:])
	ip.Encode(&header.IPv4Fields{TotalLength: uint16(len(ip)), TTL: 64, Protocol: uint8(header.TCPProtocolNumber), SrcAddr: peerAddr, DstAddr: stackAddr})
	ip.SetChecksum(^ip.CalculateChecksum())
	tcp := header.TCP(ip[header.IPv4MinimumSize:])
	tcp.Encode(&header.TCPFields{SrcPort: peerPort, DstPort: 7, SeqNum: seq, AckNum: p.ack,
		DataOffset: uint8(tcpLen), Flags: flags, WindowSize: 65535})
	copy(tcp[header.TCPMinimumSize:], opts)
	copy(tcp[tcpLen:], payload)
	xsum := header.PseudoHeaderChecksum(header.TCPProtocolNumber, peerAddr, stackAddr, uint16(len(tcp)))
	tcp.SetChecksum(^checksum.Checksum(tcp, xsum))
	p.s.Deliver(f)
	p.s.EndOfBatch()
}

// sendData sends n bytes from p.nxt on, in segments of at most 1460.
func (p *rawPeer) sendData(n int) {
	for n > 0 {
		size := min(n, 1460)
		p.send(p.nxt, header.TCPFlagAck, nil, make([]byte, size))
		p.nxt += uint32(size)
		n -= size
	}
}

// receive returns the next segment the stack sent the peer, or nil after
// 5 s without one.
func (p *rawPeer) receive() header.TCP {
	timeout := time.After(5 * time.Second)
	for {
		select {
		case f := <-p.from:
			if header.Ethernet(f).Type() != header.IPv4ProtocolNumber {
				continue
			}
			ip := header.IPv4(f[header.EthernetMinimumSize:])
			if tcp := header.TCP(ip.Payload()); ip.TransportProtocol() == header.TCPProtocolNumber && tcp.DestinationPort() == peerPort {
				if !validChecksum(f) {
					p.t.Errorf("a segment with a bad checksum: %v, ack %d, window %d", tcp.Flags(), tcp.AckNumber(), tcp.WindowSize())
				}
				return tcp
			}
		case <-timeout:
			return nil
		}
	}
}

// acknowledgement waits for the stack to acknowledge all the peer sent,
// and returns the right edge of the window it then offers.
func (p *rawPeer) acknowledgement() uint32 {
	p.t.Helper()
	acked := p.ack
	for {
		tcp := p.receive()
		if tcp == nil {
			p.t.Fatalf("the stack acknowledges %d, the peer sent up to %d", acked, p.nxt)
		}
		if acked = tcp.AckNumber(); acked == p.nxt {
			return acked + uint32(tcp.WindowSize())<<p.scale
		}
	}
}

// connect makes the handshake, offering window scaling, and returns the
// window the stack's SYN-ACK offers.
func (p *rawPeer) connect() uint32 {
	p.t.Helper()
	opts := make([]byte, 8)
	n := header.EncodeMSSOption(1460, opts)
	n += header.EncodeNOP(opts[n:])
	header.EncodeWSOption(0, opts[n:])
	p.nxt = 1000
	p.send(p.nxt, header.TCPFlagSyn, opts, nil)
	p.nxt++
	synAck := p.receive()
	if synAck == nil {
		p.t.Fatal("no answer to the SYN")
	}
	if synAck.Flags() != header.TCPFlagSyn|header.TCPFlagAck || synAck.AckNumber() != p.nxt {
		p.t.Fatalf("answer to the SYN: %v, ack %d", synAck.Flags(), synAck.AckNumber())
	}
	synOpts := header.ParseSynOptions(synAck.Options(), true)
	if synOpts.WS <= 0 {
		p.t.Fatalf("the stack offered no window scale (%d)", synOpts.WS)
	}
	p.scale = uint8(synOpts.WS)
	p.ack = synAck.SequenceNumber() + 1
	p.send(p.nxt, header.TCPFlagAck, nil, nil)
	return p.nxt + uint32(synAck.WindowSize())
}

// TestOfferedWindowIsAccepted fills the window a program does not read
// from, to one byte short of its edge each time the stack offers more;
// when the stack's acknowledgement then closes the window, a segment sent
// before it arrived carries the byte left, and the stack must take it: it
// offered that byte. netstack keeps its window from shrinking in bytes
// but tests a segment against the window it advertised, rounded down to
// its scale (128 bytes here): a window of less than one unit left
// advertises 0 and refuses the data the peer had every right to send.
// The peer's ACKs, whose sequence number is then past the zero window,
// were refused too, and an echo server blocked in write, waiting for
// them, never read again (TestTCPEchoBackToBack stalled for good).
func TestOfferedWindowIsAccepted(t *testing.T) {
	from := make(tap, 4096)
	s, err := New(Config{MAC: [6]byte{2, 0, 0, 0, 0, 1}, Addr: [4]byte{10, 0, 2, 15}, Prefix: 24, Gateway: [4]byte{10, 0, 2, 2}, MTU: 1500}, from)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stack.AddStaticNeighbor(ethernetNIC, ipv4.ProtocolNumber, peerAddr, tcpip.LinkAddress([]byte{2, 0, 0, 0, 0, 2})); err != nil {
		t.Fatal(err)
	}
	ln, err := gonet.ListenTCP(s.Stack, tcpip.FullAddress{Port: 7}, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The connection is accepted and never read.
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	defer func() {
		select {
		case c := <-accepted:
			c.Close()
		default:
		}
	}()
	p := &rawPeer{t: t, s: s, from: from}
	edge := p.connect()
	for range 100 {
		p.sendData(int(edge-p.nxt) - 1)
		if edge = p.acknowledgement(); edge != p.nxt {
			continue
		}
		// The window closed with a byte of the last offer left.
		p.sendData(1)
		p.acknowledgement()
		return
	}
	t.Fatal("the window never closed")
}
