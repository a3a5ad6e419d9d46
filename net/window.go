package net

import (
	"gvisor.dev/gvisor/pkg/tcpip/checksum"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// A TCP segment offers one unit of window less than netstack says. With
// window scaling the window field counts units of 2^scale bytes (128 with
// our buffers), and netstack keeps the right edge it offered from moving
// back in bytes, so the window it has left is seldom a whole number of
// units; it advertises that window rounded down, and tests an arriving
// segment against the same rounded window. Once less than a unit is left
// it advertises 0 and refuses the end of the window it offered before,
// which the peer may well have sent meanwhile. The peer's ACKs then carry
// a sequence number past the zero window and are refused too: an echo
// server blocked in write, waiting for them, never reads again, and the
// connection stalls for good (TestTCPEchoBackToBack, about once in 100
// runs under load). Linux rounds such a window up (tcp_select_window).
// Offering a unit less keeps the peer's right edge a unit inside the
// window netstack tests against, and what the peer sends is taken
// (TestOfferedWindowIsAccepted). SYNs are left alone: their window is
// not scaled, and netstack's first window is a whole number of units.

// offerLess lowers the window that pkt, if a TCP segment, offers by one
// unit, keeping its checksum right where netstack made it (the link makes
// those of segmented packets anew, and loopback checks none).
func offerLess(pkt *stack.PacketBuffer) {
	if pkt.TransportProtocolNumber != header.TCPProtocolNumber {
		return
	}
	tcp := header.TCP(pkt.TransportHeader().Slice())
	if len(tcp) < header.TCPMinimumSize || tcp.Flags()&(header.TCPFlagSyn|header.TCPFlagRst) != 0 {
		return
	}
	w := tcp.WindowSize()
	if w == 0 {
		return
	}
	tcp.SetWindowSize(w - 1)
	// RFC 1624's update for a changed field: HC' = ~(~HC + ~m + m').
	tcp.SetChecksum(^checksum.Combine(checksum.Combine(^tcp.Checksum(), ^w), w-1))
}
