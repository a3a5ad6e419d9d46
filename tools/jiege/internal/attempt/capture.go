package attempt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Capture sums up what a packet capture of the guest's user netdev
// (QEMU's filter-dump, a pcap file of Ethernet frames) shows about the
// TCP connections to the guest's HTTP port: did the client's SYNs
// arrive, did the guest answer them, did the handshake complete, did
// any byte come back.
type Capture struct {
	Packets     int // TCP segments to or from the guest port
	SYNs        int // connection attempts that reached the guest
	SYNACKs     int // the guest's answers to them
	Handshakes  int // connections whose handshake the client completed
	Resets      int // resets the guest sent
	ClientBytes int // payload sent to the guest port
	GuestBytes  int // payload the guest sent back
}

// ReadCapture reads a pcap file written by filter-dump; a record cut
// short at the end (QEMU still writing) ends the read without error.
func ReadCapture(path string, guestPort int) (Capture, error) {
	var c Capture
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if len(b) < 24 {
		return c, errors.New("pcap: no file header")
	}
	var bo binary.ByteOrder
	switch {
	case binary.LittleEndian.Uint32(b) == 0xa1b2c3d4 || binary.LittleEndian.Uint32(b) == 0xa1b23c4d:
		bo = binary.LittleEndian
	case binary.BigEndian.Uint32(b) == 0xa1b2c3d4 || binary.BigEndian.Uint32(b) == 0xa1b23c4d:
		bo = binary.BigEndian
	default:
		return c, errors.New("pcap: bad magic")
	}
	if link := bo.Uint32(b[20:]); link != 1 {
		return c, fmt.Errorf("pcap: link type %d, want Ethernet (1)", link)
	}
	established := map[uint16]bool{} // by the client's port
	answered := map[uint16]bool{}
	for off := 24; off+16 <= len(b); {
		n := int(bo.Uint32(b[off+8:]))
		if off+16+n > len(b) {
			break
		}
		c.add(b[off+16:off+16+n], uint16(guestPort), answered, established)
		off += 16 + n
	}
	c.Handshakes = len(established)
	return c, nil
}

// TCP flags.
const (
	tcpFIN = 1 << iota
	tcpSYN
	tcpRST
	tcpPSH
	tcpACK
)

// add counts one Ethernet frame.
func (c *Capture) add(f []byte, port uint16, answered, established map[uint16]bool) {
	if len(f) < 14+20 || binary.BigEndian.Uint16(f[12:]) != 0x0800 {
		return
	}
	ip := f[14:]
	ihl := int(ip[0]&0xf) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	// The shim captures only the first bytes of each frame (filter-dump's
	// maxlen): the lengths come from the headers.
	if ip[0]>>4 != 4 || ip[9] != 6 || ihl < 20 || len(ip) < ihl+20 || total < ihl+20 {
		return
	}
	tcp := ip[ihl:]
	src, dst := binary.BigEndian.Uint16(tcp), binary.BigEndian.Uint16(tcp[2:])
	doff := int(tcp[12]>>4) * 4
	if doff < 20 || doff > total-ihl {
		return
	}
	flags, payload := tcp[13], total-ihl-doff
	switch port {
	case dst: // client to guest
		c.Packets++
		c.ClientBytes += payload
		switch {
		case flags&tcpSYN != 0 && flags&tcpACK == 0:
			c.SYNs++
		case flags&tcpACK != 0 && answered[src]:
			established[src] = true
		}
	case src: // guest to client
		c.Packets++
		c.GuestBytes += payload
		if flags&tcpSYN != 0 && flags&tcpACK != 0 {
			c.SYNACKs++
			answered[dst] = true
		}
		if flags&tcpRST != 0 {
			c.Resets++
		}
	}
}

// String says what the capture shows, in words.
func (c Capture) String() string {
	var b strings.Builder
	switch {
	case c.Packets == 0:
		return "no TCP packet to or from the guest's HTTP port: no connection reached the guest"
	case c.SYNACKs == 0:
		fmt.Fprintf(&b, "%d connection attempts reached the guest, which answered none with a SYN-ACK", c.SYNs)
		if c.Resets > 0 {
			fmt.Fprintf(&b, " (%d resets: nothing listens on the port)", c.Resets)
		}
		return b.String()
	case c.Handshakes == 0:
		fmt.Fprintf(&b, "the guest answered %d SYNs, but no TCP handshake completed", c.SYNACKs)
	default:
		fmt.Fprintf(&b, "the TCP handshake completed (%d connections), the client sent %d bytes", c.Handshakes, c.ClientBytes)
	}
	if c.GuestBytes == 0 {
		b.WriteString(", and no byte came back")
	} else {
		fmt.Fprintf(&b, ", and the guest sent %d bytes back", c.GuestBytes)
	}
	if c.Resets > 0 {
		fmt.Fprintf(&b, "; the guest reset %d", c.Resets)
	}
	return b.String()
}
