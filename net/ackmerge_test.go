package net

import (
	"encoding/binary"
	"fmt"
	"testing"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
)

// tcpFrame builds an Ethernet frame with an IPv4 TCP segment from port
// srcPort to 80, acknowledging ack, with flags, options and payload.
func tcpFrame(srcPort uint16, ack uint32, flags header.TCPFlags, opts, payload []byte) []byte {
	tcpLen := header.TCPMinimumSize + len(opts)
	f := make([]byte, header.EthernetMinimumSize+header.IPv4MinimumSize+tcpLen+len(payload))
	header.Ethernet(f).Encode(&header.EthernetFields{Type: header.IPv4ProtocolNumber})
	ip := header.IPv4(f[header.EthernetMinimumSize:])
	ip.Encode(&header.IPv4Fields{
		TotalLength: uint16(header.IPv4MinimumSize + tcpLen + len(payload)),
		TTL:         64, Protocol: uint8(header.TCPProtocolNumber),
		SrcAddr: tcpip.AddrFrom4([4]byte{10, 0, 2, 2}), DstAddr: tcpip.AddrFrom4([4]byte{10, 0, 2, 15}),
	})
	tcp := header.TCP(ip[header.IPv4MinimumSize:])
	tcp.Encode(&header.TCPFields{SrcPort: srcPort, DstPort: 80, SeqNum: 1, AckNum: ack,
		DataOffset: uint8(tcpLen), Flags: flags, WindowSize: 65535})
	copy(tcp[header.TCPMinimumSize:], opts)
	copy(tcp[tcpLen:], payload)
	return f
}

// atSeq sets frame's sequence number (tcpFrame's is 1).
func atSeq(frame []byte, seq uint32) []byte {
	header.TCP(frame[header.EthernetMinimumSize+header.IPv4MinimumSize:]).SetSequenceNumber(seq)
	return frame
}

// describe names a frame by its source port, flags, ack and length.
func describe(f []byte) string {
	tcp := header.TCP(f[header.EthernetMinimumSize+header.IPv4MinimumSize:])
	return fmt.Sprintf("%d:%v:%d:%d", tcp.SourcePort(), tcp.Flags(), tcp.AckNumber(), len(f))
}

func TestACKMerging(t *testing.T) {
	ack := header.TCPFlagAck
	timestamps := []byte{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2}
	sack := []byte{1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2}
	for _, c := range []struct {
		name  string
		batch [][]byte
		want  []int // indexes of the frames that go up, in order
	}{
		{"advancing ACKs: the last", [][]byte{tcpFrame(1, 100, ack, nil, nil), tcpFrame(1, 200, ack, nil, nil), tcpFrame(1, 300, ack, nil, nil)}, []int{2}},
		{"with timestamps", [][]byte{tcpFrame(1, 100, ack, timestamps, nil), tcpFrame(1, 200, ack, timestamps, nil)}, []int{1}},
		{"duplicates all go up", [][]byte{tcpFrame(1, 100, ack, nil, nil), tcpFrame(1, 200, ack, nil, nil), tcpFrame(1, 200, ack, nil, nil), tcpFrame(1, 200, ack, nil, nil)}, []int{1, 2, 3}},
		{"an older ACK is not merged", [][]byte{tcpFrame(1, 200, ack, nil, nil), tcpFrame(1, 100, ack, nil, nil)}, []int{0, 1}},
		{"across the sequence wrap", [][]byte{tcpFrame(1, 0xffffff00, ack, nil, nil), tcpFrame(1, 0x100, ack, nil, nil)}, []int{1}},
		{"connections apart", [][]byte{tcpFrame(1, 100, ack, nil, nil), tcpFrame(2, 200, ack, nil, nil), tcpFrame(1, 300, ack, nil, nil)}, []int{0, 1, 2}},
		{"data keeps its place", [][]byte{tcpFrame(1, 100, ack, nil, nil), atSeq(tcpFrame(1, 200, ack|header.TCPFlagPsh, nil, []byte("x")), 2), tcpFrame(1, 300, ack, nil, nil)}, []int{0, 1, 2}},
		{"SACK is not merged", [][]byte{tcpFrame(1, 100, ack, sack, nil), tcpFrame(1, 100, ack, sack, nil), tcpFrame(1, 200, ack, nil, nil)}, []int{0, 1, 2}},
		{"a FIN elsewhere is not merged", [][]byte{tcpFrame(1, 100, ack, nil, nil), atSeq(tcpFrame(1, 200, ack|header.TCPFlagFin, nil, nil), 2), tcpFrame(1, 300, ack, nil, nil)}, []int{0, 1, 2}},
		{"RST is not merged", [][]byte{tcpFrame(1, 100, ack, nil, nil), tcpFrame(1, 200, ack|header.TCPFlagRst, nil, nil)}, []int{0, 1}},
		// The ACK ending a handshake then the request; the ACK of the
		// answer then the FIN: the second carries the first's ACK.
		{"data at the ACK's sequence carries it", [][]byte{tcpFrame(1, 100, ack, nil, nil), tcpFrame(1, 100, ack|header.TCPFlagPsh, nil, []byte("GET /"))}, []int{1}},
		{"a FIN at the ACK's sequence carries it", [][]byte{tcpFrame(1, 100, ack, timestamps, nil), tcpFrame(1, 100, ack|header.TCPFlagFin, timestamps, nil)}, []int{1}},
		{"data acknowledging less does not", [][]byte{tcpFrame(1, 200, ack, nil, nil), tcpFrame(1, 100, ack|header.TCPFlagPsh, nil, []byte("x"))}, []int{0, 1}},
		{"data of another connection does not", [][]byte{tcpFrame(1, 100, ack, nil, nil), tcpFrame(2, 100, ack|header.TCPFlagPsh, nil, []byte("x"))}, []int{0, 1}},
		{"a RST does not", [][]byte{tcpFrame(1, 100, ack, nil, nil), tcpFrame(1, 100, ack|header.TCPFlagRst, nil, nil)}, []int{0, 1}},
		{"a SYN does not", [][]byte{tcpFrame(1, 100, ack, nil, nil), tcpFrame(1, 100, ack|header.TCPFlagSyn, nil, nil)}, []int{0, 1}},
		{"a segment without ACK does not", [][]byte{tcpFrame(1, 100, ack, nil, nil), tcpFrame(1, 100, header.TCPFlagFin, nil, nil)}, []int{0, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m ackMerger
			var got []string
			deliver := func(f []byte) { got = append(got, describe(f)) }
			for _, f := range c.batch {
				m.add(f, deliver)
			}
			m.flush(deliver)
			var want []string
			for _, i := range c.want {
				want = append(want, describe(c.batch[i]))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("delivered %v, want %v", got, want)
			}
		})
	}
}

func TestACKMergingLeavesOtherFramesAlone(t *testing.T) {
	ack := tcpFrame(1, 100, header.TCPFlagAck, nil, nil)
	withOptions := append([]byte(nil), ack...)
	withOptions[header.EthernetMinimumSize] = 0x46 // an IP header with options
	fragment := append([]byte(nil), ack...)
	binary.BigEndian.PutUint16(fragment[header.EthernetMinimumSize+6:], 0x2000) // more fragments
	arp := append([]byte(nil), ack...)
	binary.BigEndian.PutUint16(arp[12:], 0x0806)
	for name, f := range map[string][]byte{"IP options": withOptions, "fragment": fragment, "ARP": arp, "short": ack[:40]} {
		if _, ok := pureACK(f); ok {
			t.Errorf("%s: taken for a pure ACK", name)
		}
	}
	if n, ok := pureACK(ack); !ok || n != 100 {
		t.Errorf("a pure ACK: %d, %v", n, ok)
	}
}
