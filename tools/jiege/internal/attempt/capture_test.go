package attempt

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pcapWriter builds a capture of IPv4/TCP Ethernet frames, as QEMU's
// filter-dump writes them (little-endian host).
type pcapWriter struct{ b []byte }

func newPcap() *pcapWriter {
	h := make([]byte, 24)
	binary.LittleEndian.PutUint32(h, 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], 65535)
	binary.LittleEndian.PutUint32(h[20:], 1)
	return &pcapWriter{h}
}

// tcp adds a segment; frames are cut to 96 bytes, as the shim captures them.
func (w *pcapWriter) tcp(src, dst uint16, flags byte, payload int) {
	f := make([]byte, 14+20+20+payload)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(40+payload))
	ip[8], ip[9] = 64, 6
	tcp := ip[20:]
	binary.BigEndian.PutUint16(tcp, src)
	binary.BigEndian.PutUint16(tcp[2:], dst)
	tcp[12], tcp[13] = 5<<4, flags
	rec := make([]byte, 16)
	n := min(len(f), captureLen)
	binary.LittleEndian.PutUint32(rec[8:], uint32(n))
	binary.LittleEndian.PutUint32(rec[12:], uint32(len(f)))
	w.b = append(append(w.b, rec...), f[:n]...)
}

func (w *pcapWriter) read(t *testing.T) Capture {
	p := filepath.Join(t.TempDir(), "c.pcap")
	os.WriteFile(p, w.b, 0o644)
	c, err := ReadCapture(p, 80)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReadCapture(t *testing.T) {
	w := newPcap()
	if c := w.read(t); c.String() != "no TCP packet to or from the guest's HTTP port: no connection reached the guest" {
		t.Errorf("empty: %s", c)
	}
	w.tcp(40000, 80, tcpSYN, 0)
	w.tcp(80, 40000, tcpRST|tcpACK, 0)
	w.tcp(40001, 80, tcpSYN, 0)
	if c := w.read(t); c.SYNs != 2 || c.SYNACKs != 0 || !strings.Contains(c.String(), "2 connection attempts reached the guest, which answered none with a SYN-ACK (1 resets") {
		t.Errorf("refused: %+v %s", c, c)
	}
	w.tcp(80, 40001, tcpSYN|tcpACK, 0)
	w.tcp(40001, 80, tcpACK, 0)
	w.tcp(40001, 80, tcpACK|tcpPSH, 77)
	w.tcp(22, 40002, tcpACK|tcpPSH, 500) // another port: not counted
	if c := w.read(t); c.Handshakes != 1 || c.ClientBytes != 77 || c.GuestBytes != 0 ||
		!strings.HasPrefix(c.String(), "the TCP handshake completed (1 connections), the client sent 77 bytes, and no byte came back") {
		t.Errorf("silent: %+v %s", c, c)
	}
	w.tcp(80, 40001, tcpACK|tcpPSH, 300)
	w.b = append(w.b, make([]byte, 20)...) // a record QEMU is still writing
	if c := w.read(t); c.GuestBytes != 300 || !strings.Contains(c.String(), "the guest sent 300 bytes back") {
		t.Errorf("answered: %+v %s", c, c)
	}
	if _, err := ReadCapture(filepath.Join(t.TempDir(), "none"), 80); err == nil {
		t.Error("missing file read")
	}
}
