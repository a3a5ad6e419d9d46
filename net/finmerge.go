package net

import (
	"encoding/binary"

	"gvisor.dev/gvisor/pkg/tcpip/checksum"
	"gvisor.dev/gvisor/pkg/tcpip/header"
)

// Data and FIN in one frame. netstack always sends a FIN as a segment of
// its own; Linux puts it on the last data segment when the program
// closes before that segment left, as nginx does with tcp_nopush: it
// corks, writes the headers, sends the file and closes, still corked. A
// fresh connection's answer then takes four frames on Linux, five here.
// While a corked socket sends what it held and closes (InetSocket.close),
// the link holds the data frame back; when the next frame of that
// connection is its FIN alone, continuing the data, the two leave as one
// frame with the FIN on the data. The peer sees what Linux would send;
// netstack, which counts two segments, sees both acknowledged at once,
// and should the frame be lost it retransmits them as it sent them.

// finMerge is the link's frame held back; the link's txMu guards it.
type finMerge struct {
	holds   map[connKey]int // connections whose InetSocket.close is under way
	pending []byte          // the data frame held, whole; empty: none
	buf     []byte          // pending's storage
	scratch []byte          // a frame flattened
	one     [1][]byte       // the parts of a frame sent whole (sendFrame)
}

// connKey names a connection as its frames do: the IPv4 source and
// destination addresses, then the ports (an IPv4 frame's bytes 26-37).
type connKey [12]byte

// frameConn returns frame's connKey.
func frameConn(frame []byte) connKey {
	const addrs = header.EthernetMinimumSize + 12
	return connKey(frame[addrs : addrs+12])
}

// tcpSeg is what finMerge reads of an IPv4 TCP frame without IP
// options.
type tcpSeg struct {
	seq     uint32
	flags   header.TCPFlags
	payload int
}

// parseTCPSeg reads frame's TCP header; false for anything else.
func parseTCPSeg(frame []byte) (tcpSeg, bool) {
	const eth, ipLen = header.EthernetMinimumSize, header.IPv4MinimumSize
	if len(frame) < eth+ipLen+header.TCPMinimumSize || binary.BigEndian.Uint16(frame[12:]) != uint16(header.IPv4ProtocolNumber) {
		return tcpSeg{}, false
	}
	ip := frame[eth:]
	if ip[0] != 0x45 || ip[9] != uint8(header.TCPProtocolNumber) || binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 {
		return tcpSeg{}, false
	}
	total := int(binary.BigEndian.Uint16(ip[2:]))
	tcp := ip[ipLen:]
	tcpLen := int(tcp[12]>>4) * 4
	if total > len(ip) || tcpLen < header.TCPMinimumSize || ipLen+tcpLen > total {
		return tcpSeg{}, false
	}
	return tcpSeg{seq: binary.BigEndian.Uint32(tcp[4:]), flags: header.TCPFlags(tcp[13]), payload: total - ipLen - tcpLen}, true
}

// hold starts holding c's data frames back (InetSocket.close).
func (l *link) hold(c connKey) {
	l.txMu.Lock()
	if l.fin.holds == nil {
		l.fin.holds = map[connKey]int{}
	}
	l.fin.holds[c]++
	l.txMu.Unlock()
}

// release ends a hold: c's data frame, if still held, leaves.
func (l *link) release(c connKey) {
	l.txMu.Lock()
	defer l.txMu.Unlock()
	if l.fin.holds[c]--; l.fin.holds[c] > 0 {
		return
	}
	delete(l.fin.holds, c)
	if len(l.fin.pending) > 0 && frameConn(l.fin.pending) == c {
		l.sendPending()
		l.dev.Flush()
	}
}

// sendPending sends the frame held; txMu is held.
func (l *link) sendPending() {
	l.sendFrame(l.fin.pending)
	l.fin.pending = l.fin.pending[:0]
}

// sendFrame sends frame, whole, on the device; txMu is held. Its parts
// are a field: a slice literal passed to the Device would be allocated
// at each call.
func (l *link) sendFrame(frame []byte) (bool, error) {
	l.fin.one[0] = frame
	sent, err := l.dev.Send(l.fin.one[:])
	l.fin.one[0] = nil
	return sent, err
}

// send queues one frame on the device. While its connection is held, a
// data frame may wait for the connection's FIN to join it.
func (l *link) send(parts [][]byte) (bool, error) {
	m := &l.fin
	if len(m.holds) == 0 && !l.silent {
		return l.dev.Send(parts)
	}
	m.scratch = m.scratch[:0]
	for _, p := range parts {
		m.scratch = append(m.scratch, p...)
	}
	frame := m.scratch
	seg, ok := parseTCPSeg(frame)
	if ok && l.silentRST(frame, seg) {
		return true, nil
	}
	if !ok || m.holds[frameConn(frame)] == 0 {
		return l.sendFrame(frame)
	}
	if len(m.pending) > 0 && sameConnection(frame, m.pending) {
		held, _ := parseTCPSeg(m.pending)
		if seg.flags == header.TCPFlagFin|header.TCPFlagAck && seg.payload == 0 && seg.seq == held.seq+uint32(held.payload) {
			joinFIN(m.pending, frame)
			sent, err := l.sendFrame(m.pending)
			m.pending = m.pending[:0]
			return sent, err
		}
		l.sendPending()
	}
	const dataFlags = header.TCPFlagAck | header.TCPFlagPsh
	if seg.payload > 0 && seg.flags&^dataFlags == 0 && len(m.pending) == 0 {
		m.buf = append(m.buf[:0], frame...)
		m.pending = m.buf
		return true, nil
	}
	return l.sendFrame(frame)
}

// joinFIN puts the FIN of fin, the frame that follows data on its
// connection, on data, with fin's acknowledgement and window, and makes
// data's checksum anew.
func joinFIN(data, fin []byte) {
	const tcpOff = header.EthernetMinimumSize + header.IPv4MinimumSize
	ip := header.IPv4(data[header.EthernetMinimumSize:])
	tcp := header.TCP(data[tcpOff : header.EthernetMinimumSize+int(ip.TotalLength())])
	from := header.TCP(fin[tcpOff:])
	tcp.SetFlags(uint8(tcp.Flags() | header.TCPFlagFin))
	tcp.SetAckNumber(from.AckNumber())
	tcp.SetWindowSize(from.WindowSize())
	tcp.SetChecksum(0)
	xsum := header.PseudoHeaderChecksum(header.TCPProtocolNumber, ip.SourceAddress(), ip.DestinationAddress(), uint16(len(tcp)))
	tcp.SetChecksum(^checksum.Checksum(tcp, xsum))
}
