package net

import (
	"bytes"
	"fmt"
	"testing"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/checksum"
	"gvisor.dev/gvisor/pkg/tcpip/header"
)

// recorder is a Device that keeps the frames sent, in order.
type recorder struct{ frames [][]byte }

func (r *recorder) Send(parts [][]byte) (bool, error) {
	r.frames = append(r.frames, bytes.Join(parts, nil))
	return true, nil
}
func (r *recorder) Flush() {}

// segmentFrom builds a frame from 10.0.2.15:80 to 10.0.2.2:port with a
// valid TCP checksum.
func segmentFrom(port uint16, seq, ack uint32, flags header.TCPFlags, window uint16, payload string) []byte {
	f := make([]byte, header.EthernetMinimumSize+header.IPv4MinimumSize+header.TCPMinimumSize+len(payload))
	header.Ethernet(f).Encode(&header.EthernetFields{Type: header.IPv4ProtocolNumber})
	ip := header.IPv4(f[header.EthernetMinimumSize:])
	src, dst := tcpip.AddrFrom4([4]byte{10, 0, 2, 15}), tcpip.AddrFrom4([4]byte{10, 0, 2, 2})
	ip.Encode(&header.IPv4Fields{TotalLength: uint16(len(ip)), TTL: 64, Protocol: uint8(header.TCPProtocolNumber), SrcAddr: src, DstAddr: dst})
	tcp := header.TCP(ip[header.IPv4MinimumSize:])
	tcp.Encode(&header.TCPFields{SrcPort: 80, DstPort: port, SeqNum: seq, AckNum: ack, DataOffset: header.TCPMinimumSize, Flags: flags, WindowSize: window})
	copy(tcp[header.TCPMinimumSize:], payload)
	xsum := header.PseudoHeaderChecksum(header.TCPProtocolNumber, src, dst, uint16(len(tcp)))
	tcp.SetChecksum(^checksum.Checksum(tcp, xsum))
	return f
}

// validChecksum reports whether frame's TCP checksum is right.
func validChecksum(frame []byte) bool {
	ip := header.IPv4(frame[header.EthernetMinimumSize:])
	tcp := header.TCP(ip.Payload())
	xsum := header.PseudoHeaderChecksum(header.TCPProtocolNumber, ip.SourceAddress(), ip.DestinationAddress(), uint16(len(tcp)))
	return checksum.Checksum(tcp, xsum) == 0xffff
}

func TestFINJoinsHeldData(t *testing.T) {
	const data, ack, fin = header.TCPFlagAck | header.TCPFlagPsh, header.TCPFlagAck, header.TCPFlagAck | header.TCPFlagFin
	cases := []struct {
		name   string
		frames [][]byte
		want   []string // "port:flags:payload" per frame out, in order
	}{
		{"data then its FIN", [][]byte{
			segmentFrom(1000, 100, 7, data, 500, "hello"),
			segmentFrom(1000, 105, 9, fin, 600, ""),
		}, []string{"1000:FPA:5"}},
		{"another connection passes", [][]byte{
			segmentFrom(1000, 100, 7, data, 500, "hello"),
			segmentFrom(2000, 1, 1, ack, 500, ""),
			segmentFrom(2000, 1, 1, data, 500, "other"),
			segmentFrom(1000, 105, 7, fin, 500, ""),
		}, []string{"2000:A:0", "2000:PA:5", "1000:FPA:5"}},
		{"more data first", [][]byte{
			segmentFrom(1000, 100, 7, data, 500, "hello"),
			segmentFrom(1000, 105, 7, data, 500, "world"),
			segmentFrom(1000, 110, 7, fin, 500, ""),
		}, []string{"1000:PA:5", "1000:FPA:5"}},
		{"a FIN that does not continue the data", [][]byte{
			segmentFrom(1000, 100, 7, data, 500, "hello"),
			segmentFrom(1000, 200, 7, fin, 500, ""),
		}, []string{"1000:PA:5", "1000:FA:0"}},
		{"an ACK of the connection", [][]byte{
			segmentFrom(1000, 100, 7, data, 500, "hello"),
			segmentFrom(1000, 105, 8, ack, 500, ""),
		}, []string{"1000:PA:5", "1000:A:0"}},
		{"held until the release", [][]byte{
			segmentFrom(1000, 100, 7, data, 500, "hello"),
		}, []string{"1000:PA:5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dev := &recorder{}
			l := newLink(dev, 1500, "")
			held := frameConn(c.frames[0])
			l.hold(held)
			for _, f := range c.frames {
				l.txMu.Lock()
				l.send([][]byte{f[:20], f[20:]})
				l.txMu.Unlock()
			}
			l.release(held)
			var got []string
			for _, f := range dev.frames {
				tcp := header.TCP(header.IPv4(f[header.EthernetMinimumSize:]).Payload())
				got = append(got, fmtSegment(tcp))
				if !validChecksum(f) {
					t.Errorf("frame %s: bad TCP checksum", fmtSegment(tcp))
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("frames %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("frames %v, want %v", got, c.want)
				}
			}
		})
	}
	// The joined frame takes the FIN's acknowledgement and window.
	dev := &recorder{}
	l := newLink(dev, 1500, "")
	held := frameConn(segmentFrom(1000, 0, 0, 0, 0, ""))
	l.hold(held)
	l.txMu.Lock()
	l.send([][]byte{segmentFrom(1000, 100, 7, data, 500, "hello")})
	l.send([][]byte{segmentFrom(1000, 105, 9, fin, 600, "")})
	l.txMu.Unlock()
	l.release(held)
	tcp := header.TCP(header.IPv4(dev.frames[0][header.EthernetMinimumSize:]).Payload())
	if tcp.AckNumber() != 9 || tcp.WindowSize() != 600 || string(tcp.Payload()) != "hello" {
		t.Errorf("joined frame: ack %d window %d payload %q", tcp.AckNumber(), tcp.WindowSize(), tcp.Payload())
	}
	// Without a hold on its connection nothing waits.
	dev = &recorder{}
	l = newLink(dev, 1500, "")
	l.hold(held)
	l.txMu.Lock()
	l.send([][]byte{segmentFrom(2000, 100, 7, data, 500, "hello")})
	l.txMu.Unlock()
	if len(dev.frames) != 1 {
		t.Errorf("%d frames of another connection sent during a hold, want 1", len(dev.frames))
	}
	l.release(held)
}

// fmtSegment is "port:flags:payload".
func fmtSegment(tcp header.TCP) string {
	flags := ""
	for _, f := range []struct {
		bit  header.TCPFlags
		name string
	}{{header.TCPFlagFin, "F"}, {header.TCPFlagSyn, "S"}, {header.TCPFlagRst, "R"}, {header.TCPFlagPsh, "P"}, {header.TCPFlagAck, "A"}} {
		if tcp.Flags()&f.bit != 0 {
			flags += f.name
		}
	}
	return fmt.Sprintf("%d:%s:%d", tcp.DestinationPort(), flags, len(tcp.Payload()))
}
