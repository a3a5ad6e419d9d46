package net

import (
	"sync"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/checksum"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// Device is a network card as the Ethernet interface drives it.
type Device interface {
	// Send queues one frame, the concatenation of parts, which it copies
	// before it returns. While the device's queue is full it waits; it
	// reports false when it dropped the frame instead.
	Send(parts [][]byte) (bool, error)
	// Flush tells the device that frames were queued.
	Flush()
}

// gsoMaxSize is the largest TCP packet netstack hands the link: 44 frames
// of 1460 bytes. An IPv4 total length must stay below 64 KiB.
const gsoMaxSize = 1<<16 - 1 - header.EthernetMinimumSize - header.IPv4MaximumHeaderSize - header.TCPHeaderMaximumSize

// link is the Ethernet interface's link endpoint. It offers netstack TCP
// segmentation (GSO, with the checksum left to the link): TCP hands it
// packets of up to gsoMaxSize, and link cuts them into frames of the MSS,
// each with its own headers and checksum, and queues them on the device
// with one notification. The card QEMU gives offers no offloads behind
// its user network, so this is Linux's software GSO: one pass through
// the stack per 44 frames instead of per frame, and one copy of the
// payload (into the device's buffer) instead of three.
type link struct {
	dev  Device
	mtu  uint32
	addr tcpip.LinkAddress

	mu         sync.RWMutex
	dispatcher stack.NetworkDispatcher

	txMu  sync.Mutex
	fin   finMerge // a data frame held for its FIN (finmerge.go)
	parts [][]byte // the frame being sent, as slices of a packet
	hdr   []byte   // a segment's headers
	data  [][]byte // a packet's payload

	silenced connKey // while silent, its RST frames are dropped (timewait.go)
	silent   bool
}

var (
	_ stack.LinkEndpoint = (*link)(nil)
	_ stack.GSOEndpoint  = (*link)(nil)
)

func newLink(dev Device, mtu uint32, addr tcpip.LinkAddress) *link {
	return &link{dev: dev, mtu: mtu, addr: addr}
}

// deliver hands a received frame to the stack, which owns pkt then.
func (l *link) deliver(pkt *stack.PacketBuffer) {
	l.mu.RLock()
	d := l.dispatcher
	l.mu.RUnlock()
	if d != nil {
		d.DeliverNetworkPacket(0, pkt)
	}
}

// MTU counts the Ethernet header, which the ethernet endpoint above takes off.
func (l *link) MTU() uint32                      { return l.mtu + header.EthernetMinimumSize }
func (l *link) SetMTU(mtu uint32)                {}
func (l *link) MaxHeaderLength() uint16          { return 0 }
func (l *link) LinkAddress() tcpip.LinkAddress   { return l.addr }
func (l *link) SetLinkAddress(tcpip.LinkAddress) {}
func (l *link) Capabilities() stack.LinkEndpointCapabilities {
	return 0
}
func (l *link) GSOMaxSize() uint32                      { return gsoMaxSize }
func (l *link) SupportedGSO() stack.SupportedGSO        { return stack.HostGSOSupported }
func (l *link) Wait()                                   {}
func (l *link) ARPHardwareType() header.ARPHardwareType { return header.ARPHardwareNone }
func (l *link) AddHeader(*stack.PacketBuffer)           {}
func (l *link) ParseHeader(*stack.PacketBuffer) bool    { return true }
func (l *link) Close()                                  {}
func (l *link) SetOnCloseAction(func())                 {}

func (l *link) Attach(d stack.NetworkDispatcher) {
	l.mu.Lock()
	l.dispatcher = d
	l.mu.Unlock()
}

func (l *link) IsAttached() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.dispatcher != nil
}

// WritePackets sends every packet, segmenting the TCP ones netstack made
// larger than the MSS, then notifies the device once.
func (l *link) WritePackets(pkts stack.PacketBufferList) (int, tcpip.Error) {
	l.txMu.Lock()
	defer l.txMu.Unlock()
	for _, pkt := range pkts.AsSlice() {
		l.parts = appendSlices(l.parts[:0], pkt)
		var err error
		switch pkt.GSOOptions.Type {
		case stack.GSOTCPv4, stack.GSOTCPv6:
			err = l.segment(pkt)
		default:
			_, err = l.send(l.parts)
		}
		if err != nil {
			l.dev.Flush()
			return 0, &tcpip.ErrAborted{}
		}
	}
	l.dev.Flush()
	return pkts.Len(), nil
}

// appendSlices appends the slices that hold pkt, headers first.
func appendSlices(parts [][]byte, pkt *stack.PacketBuffer) [][]byte {
	views, skip := pkt.AsViewList()
	for v := views.Front(); v != nil; v = v.Next() {
		b := v.AsSlice()
		if skip >= len(b) {
			skip -= len(b)
			continue
		}
		parts = append(parts, b[skip:])
		skip = 0
	}
	return parts
}

// segment sends a GSO packet, whose slices are in l.parts, as frames of
// at most the MSS of payload, each with its own IP length (and IPv4 id
// and checksum), sequence number and TCP checksum; FIN and PSH only on
// the last.
func (l *link) segment(pkt *stack.PacketBuffer) error {
	ethLen := len(pkt.LinkHeader().Slice())
	ipLen := len(pkt.NetworkHeader().Slice())
	tcpLen := len(pkt.TransportHeader().Slice())
	hdrLen := ethLen + ipLen + tcpLen
	if cap(l.hdr) < hdrLen {
		l.hdr = make([]byte, hdrLen)
	}
	l.hdr = l.hdr[:hdrLen]
	l.data = l.data[:0]
	off := 0
	for _, b := range l.parts {
		if off < hdrLen {
			n := copy(l.hdr[off:], b)
			off += n
			b = b[n:]
		}
		if len(b) > 0 {
			l.data = append(l.data, b)
		}
	}
	payload := pkt.Data().Size()
	mss := int(pkt.GSOOptions.MSS)
	if mss <= 0 || mss > payload {
		mss = payload
	}
	ip := l.hdr[ethLen : ethLen+ipLen]
	tcp := header.TCP(l.hdr[ethLen+ipLen:])
	seq, flags := tcp.SequenceNumber(), uint8(tcp.Flags())
	var id uint16
	var src, dst tcpip.Address
	v4 := pkt.GSOOptions.Type == stack.GSOTCPv4
	if v4 {
		id, src, dst = header.IPv4(ip).ID(), header.IPv4(ip).SourceAddress(), header.IPv4(ip).DestinationAddress()
	} else {
		src, dst = header.IPv6(ip).SourceAddress(), header.IPv6(ip).DestinationAddress()
	}
	for done, i := 0, 0; done < payload || i == 0; i++ {
		n := min(mss, payload-done)
		if v4 {
			h := header.IPv4(ip)
			h.SetTotalLength(uint16(ipLen + tcpLen + n))
			h.SetID(id + uint16(i))
			h.SetChecksum(0)
			h.SetChecksum(^h.CalculateChecksum())
		} else {
			header.IPv6(ip).SetPayloadLength(uint16(ipLen - header.IPv6MinimumSize + tcpLen + n))
		}
		tcp.SetSequenceNumber(seq + uint32(done))
		f := flags
		if done+n < payload {
			f &^= uint8(header.TCPFlagFin | header.TCPFlagPsh)
		}
		tcp.SetFlags(f)
		l.parts = append(l.parts[:0], l.hdr)
		l.parts = appendRange(l.parts, l.data, done, n)
		var sum checksum.Checksumer
		for _, b := range l.parts[1:] {
			sum.Add(b)
		}
		tcp.SetChecksum(0)
		xsum := header.PseudoHeaderChecksum(header.TCPProtocolNumber, src, dst, uint16(tcpLen+n))
		xsum = checksum.Checksum(tcp[:tcpLen], xsum)
		tcp.SetChecksum(^checksum.Combine(xsum, sum.Checksum()))
		if _, err := l.send(l.parts); err != nil {
			return err
		}
		done += n
	}
	return nil
}

// appendRange appends the slices of data that hold its bytes [off, off+n).
func appendRange(parts, data [][]byte, off, n int) [][]byte {
	for _, b := range data {
		if n == 0 {
			break
		}
		if off >= len(b) {
			off -= len(b)
			continue
		}
		b = b[off:]
		off = 0
		if len(b) > n {
			b = b[:n]
		}
		parts = append(parts, b)
		n -= len(b)
	}
	return parts
}
