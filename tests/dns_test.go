package tests

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serveDNS answers A queries for jiege.test with 192.0.2.7 and everything
// else with NXDOMAIN on a UDP port of the host's loopback, until the test
// ends. It returns the port and the count of queries answered.
func serveDNS(t *testing.T) (int, *atomic.Int32) {
	t.Helper()
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return conn.LocalAddr().(*net.UDPAddr).Port, answerDNS(t, conn, map[string][4]byte{"jiege.test": {192, 0, 2, 7}})
}

// answerDNS answers queries on conn until the test ends: an A query for
// a name of names with its address, another type for one of them with no
// record (NODATA), any other name with NXDOMAIN. It returns the count of
// queries answered.
func answerDNS(t *testing.T, conn net.PacketConn, names map[string][4]byte) *atomic.Int32 {
	t.Cleanup(func() { conn.Close() })
	var answered atomic.Int32
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			q := buf[:n]
			var labels []string
			end := 12
			for end < n && q[end] != 0 {
				if end+1+int(q[end]) > n {
					break
				}
				labels = append(labels, strings.ToLower(string(q[end+1:end+1+int(q[end])])))
				end += int(q[end]) + 1
			}
			end += 5 // the root label, type, class
			if n < 12 || end > n {
				continue
			}
			qtype := int(q[end-4])<<8 | int(q[end-3])
			r := append([]byte(nil), q[:end]...)
			r[2], r[3] = 0x81, 0x80 // QR, RD, RA, NOERROR
			r[4], r[5], r[6], r[7] = 0, 1, 0, 0
			r[8], r[9], r[10], r[11] = 0, 0, 0, 0
			addr, known := names[strings.Join(labels, ".")]
			switch {
			case known && qtype == 1:
				r[7] = 1
				r = append(r, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, addr[0], addr[1], addr[2], addr[3])
			case !known:
				r[3] = 0x83 // NXDOMAIN
			}
			conn.WriteTo(r, from)
			answered.Add(1)
		}
	}()
	return &answered
}

// TestNetDNSFromGuest resolves names with glibc's resolver in a guest
// program, over UDP through the virtio network to a name server the test
// runs on the host's loopback (10.0.2.2 from the guest), and compares the
// answers with the same program under qemu-riscv64 asking 127.0.0.1. No
// query leaves the machine.
func TestNetDNSFromGuest(t *testing.T) {
	port, answered := serveDNS(t)
	bin := crossCompile(t, "dnsclient.c")

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dnsserver"), []byte(fmt.Sprintf("127.0.0.1 %d\n", port)), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "init")
	if err := os.WriteFile(prog, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	want, wantCode := runOracle(t, dir, prog)
	if !strings.Contains(want, "192.0.2.7") {
		t.Fatalf("the oracle did not resolve through the test's server:\n%s", want)
	}
	byOracle := answered.Load()

	initrd := initramfs(t, bin, map[string]string{"dnsserver": fmt.Sprintf("10.0.2.2 %d\n", port)})
	r := bootKernel(t, "256M", "", 3*time.Minute, "-initrd", initrd,
		"-global", "virtio-mmio.force-legacy=false",
		"-netdev", "user,id=n0", "-device", "virtio-net-device,netdev=n0")
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	compareWithOracle(t, r, want, wantCode)
	if got := answered.Load() - byOracle; got != 3 {
		t.Errorf("the server answered %d queries from the guest, want 3", got)
	}
}
