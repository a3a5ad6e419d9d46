package net

import "encoding/binary"

// Merging acknowledgements on receive. QEMU's user network acknowledges
// every segment it receives, and while the guest is busy sending, the
// receive ring fills with such ACKs (46 a batch on average over the
// bench's 64 MiB download, one per frame sent): each took netstack's whole
// input path. Within one batch from the card, a pure ACK is held back
// while the next frame is a pure ACK of the same connection that
// acknowledges more; then only the later one goes up. TCP loses nothing
// it uses: the acknowledgement is cumulative, the window is the latest,
// netstack counts the segments an ACK covers (slow start grows as much),
// and duplicate ACKs (no advance) all go up, for fast retransmit. Only
// IPv4 ACKs without IP options and with no TCP option but timestamps are
// merged; anything else (data, SYN, FIN, RST, SACK blocks) goes up in
// order, after the ACK held. This is a NIC's receive offload (as
// FreeBSD's LRO compresses ACKs), done in the driver's batch.
//
// A pure ACK held is also left out when the next frame is data or a FIN
// of the same connection at the same sequence number that acknowledges
// at least as much: that segment carries the acknowledgement, the window
// and the timestamps again, newer. A fresh connection's client sends two
// such pairs back to back (the ACK ending the handshake then its request;
// the ACK of the answer then its FIN), and each ACK took netstack's whole
// input path (and the second, its FIN-WAIT-2 timer): netstack completes
// the handshake on the request's ACK and goes from FIN-WAIT-1 to
// TIME-WAIT on the FIN's, as TCP specifies, and answers what it answered
// to the two. What the ACK left out cannot be counted as is a duplicate
// ACK for fast retransmit; the segment after it could not either.

// ackFrameMax is the largest frame held: Ethernet, IPv4 and TCP headers
// without IP options and with at most 40 bytes of TCP options.
const ackFrameMax = 14 + 20 + 60

// ackMerger is the frame held back; only the receive goroutine uses it.
type ackMerger struct {
	held [ackFrameMax]byte
	n    int // bytes held; 0: none
}

// pureACK reports whether frame is a mergeable pure ACK, and its
// acknowledgement number.
func pureACK(frame []byte) (uint32, bool) {
	const eth, ipLen = 14, 20
	if len(frame) < eth+ipLen+20 || binary.BigEndian.Uint16(frame[12:]) != 0x0800 {
		return 0, false
	}
	ip := frame[eth:]
	// Version 4 without options, TCP, not a fragment.
	if ip[0] != 0x45 || ip[9] != 6 || binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 {
		return 0, false
	}
	tcp := ip[ipLen:]
	tcpLen := int(tcp[12]>>4) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if tcpLen < 20 || total != ipLen+tcpLen || len(ip) < total || eth+total > ackFrameMax {
		return 0, false
	}
	if tcp[13] != 0x10 || tcp[12]&0x0f != 0 { // ACK alone, no reserved bits or NS
		return 0, false
	}
	for opts := tcp[20:tcpLen]; len(opts) > 0; {
		switch {
		case opts[0] == 0: // end of options
			opts = nil
		case opts[0] == 1: // no-op
			opts = opts[1:]
		case opts[0] == 8 && len(opts) >= 10 && opts[1] == 10: // timestamps
			opts = opts[10:]
		default:
			return 0, false
		}
	}
	return binary.BigEndian.Uint32(tcp[8:]), true
}

// carriesACK reports whether frame, which is not a pure ACK, is a segment
// of held's connection with data or a FIN at held's sequence number
// acknowledging at least as much as held, the pure ACK held: so that
// held tells netstack nothing that frame does not.
func carriesACK(frame, held []byte) bool {
	const eth, ipLen = 14, 20
	if len(frame) < eth+ipLen+20 || binary.BigEndian.Uint16(frame[12:]) != 0x0800 {
		return false
	}
	ip := frame[eth:]
	if ip[0] != 0x45 || ip[9] != 6 || binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 || !sameConnection(held, frame) {
		return false
	}
	tcp, heldTCP := ip[ipLen:], held[eth+ipLen:]
	const ack, synRstUrg = 0x10, 0x02 | 0x04 | 0x20
	if tcp[13]&ack == 0 || tcp[13]&synRstUrg != 0 {
		return false
	}
	seq, heldSeq := binary.BigEndian.Uint32(tcp[4:]), binary.BigEndian.Uint32(heldTCP[4:])
	acked, heldAcked := binary.BigEndian.Uint32(tcp[8:]), binary.BigEndian.Uint32(heldTCP[8:])
	return seq == heldSeq && int32(acked-heldAcked) >= 0
}

// sameConnection reports whether two IPv4 TCP frames without IP options
// belong to one connection: the same addresses and ports.
func sameConnection(a, b []byte) bool {
	const addrs = 14 + 12 // IPv4 source and destination, then the ports
	return string(a[addrs:addrs+12]) == string(b[addrs:addrs+12])
}

// add takes a received frame: it holds a pure ACK back, and passes to
// deliver, in order, what must go up now: the ACK held before unless
// frame supersedes it, and frame unless it is held.
func (m *ackMerger) add(frame []byte, deliver func([]byte)) {
	ack, ok := pureACK(frame)
	if !ok {
		if m.n > 0 && carriesACK(frame, m.held[:m.n]) {
			m.n = 0
		}
		m.flush(deliver)
		deliver(frame)
		return
	}
	if m.n > 0 {
		held := m.held[:m.n]
		heldAck, _ := pureACK(held)
		if !sameConnection(held, frame) || int32(ack-heldAck) <= 0 {
			deliver(held)
		}
	}
	m.n = copy(m.held[:], frame)
}

// flush delivers the frame held, if any.
func (m *ackMerger) flush(deliver func([]byte)) {
	if m.n > 0 {
		n := m.n
		m.n = 0
		deliver(m.held[:n])
	}
}
