package net

import (
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var loopbackAddr = netip.MustParseAddr("127.0.0.1")

// waitReady waits up to 10 s for one of the poll events in mask on so.
func waitReady(t *testing.T, so *InetSocket, mask uint32) {
	t.Helper()
	changed := make(chan struct{}, 1)
	cancel := so.Watch(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancel()
	deadline := time.After(10 * time.Second)
	for so.Readiness(mask) == 0 {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no event %#x after 10 s", mask)
		}
	}
}

// TestLoopbackOnly: a stack without a network device still has 127.0.0.1,
// as Linux's lo; other destinations are unreachable.
func TestLoopbackOnly(t *testing.T) {
	s, err := NewLoopback()
	if err != nil {
		t.Fatal(err)
	}
	if s.HasEthernet() {
		t.Fatal("loopback-only stack claims an Ethernet interface")
	}
	ln, _ := s.NewTCP()
	defer ln.Close()
	if err := ln.Bind(Addr{Family: unix.AF_INET, IP: loopbackAddr}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ln.Listen(4); err != nil {
		t.Fatal(err)
	}
	local, _ := ln.LocalAddr()
	cli, _ := s.NewTCP()
	defer cli.Close()
	if err := cli.Connect(Addr{Family: unix.AF_INET, IP: loopbackAddr, Port: local.Port}, nil); err != nil && err != unix.EINPROGRESS {
		t.Fatal(err)
	}
	waitReady(t, cli, unix.EPOLLOUT|unix.EPOLLERR)
	if err := cli.ConnectResult(); err != nil {
		t.Fatalf("connect to 127.0.0.1: %v", err)
	}
	waitReady(t, ln, unix.EPOLLIN)
	conn, peer, err := ln.accept()
	if err != nil || peer.IP != loopbackAddr {
		t.Fatalf("Accept = %v %v", peer, err)
	}
	defer conn.Close()
	cli.Write([]byte("over lo"))
	waitReady(t, conn, unix.EPOLLIN)
	buf := make([]byte, 16)
	if n, err := conn.Read(buf); string(buf[:n]) != "over lo" || err != nil {
		t.Fatalf("Read = %q %v", buf[:n], err)
	}

	away, _ := s.NewTCP()
	defer away.Close()
	if err := away.Connect(Addr{Family: unix.AF_INET, IP: netip.AddrFrom4([4]byte{10, 0, 2, 2}), Port: 80}, nil); err != unix.ENETUNREACH {
		t.Fatalf("connect to 10.0.2.2 without a device: %v, want ENETUNREACH", err)
	}
}

// TestUDPAcrossEthernet sends datagrams both ways between two stacks wired
// back to back (ARP first), and over the loopback of one of them: sender
// addresses, truncation, peeking, connected sockets.
func TestUDPAcrossEthernet(t *testing.T) {
	guest, host := pair(t)
	srv, err := host.NewUDP()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.Bind(Addr{Family: unix.AF_INET, Port: 5353}, nil); err != nil {
		t.Fatal(err)
	}
	cli, _ := guest.NewUDP()
	defer cli.Close()
	if cli.MaxMessage() == 0 || srv.MaxMessage() == 0 {
		t.Fatal("UDP sockets do not say they are datagram sockets")
	}
	if n, err := cli.SendTo([]byte("query"), netip.AddrFrom4([4]byte{10, 0, 2, 2}), 5353); n != 5 || err != nil {
		t.Fatalf("SendTo = %d %v", n, err)
	}
	waitReady(t, srv, unix.EPOLLIN)
	buf := make([]byte, 3)
	n, total, ip, port, err := srv.RecvFrom(buf, true)
	if err != nil || n != 3 || total != 5 || ip != netip.AddrFrom4([4]byte{10, 0, 2, 15}) || port == 0 {
		t.Fatalf("peek = %d of %d from %v:%d %v", n, total, ip, port, err)
	}
	n, total, _, _, err = srv.RecvFrom(buf, false)
	if err != nil || string(buf[:n]) != "que" || total != 5 {
		t.Fatalf("RecvFrom = %q of %d %v", buf[:n], total, err)
	}
	if _, _, _, _, err := srv.RecvFrom(buf, false); err != unix.EAGAIN {
		t.Fatalf("the truncated rest was not dropped: %v", err)
	}
	if _, err := srv.SendTo([]byte("answer"), ip, port); err != nil {
		t.Fatal(err)
	}
	waitReady(t, cli, unix.EPOLLIN)
	big := make([]byte, 64)
	n, _, from, fromPort, err := cli.RecvFrom(big, false)
	if err != nil || string(big[:n]) != "answer" || from != netip.AddrFrom4([4]byte{10, 0, 2, 2}) || fromPort != 5353 {
		t.Fatalf("answer %q from %v:%d %v", big[:n], from, fromPort, err)
	}

	// Connected to 127.0.0.1 on the same stack: plain writes and reads.
	lo, _ := guest.NewUDP()
	defer lo.Close()
	if err := lo.Bind(Addr{Family: unix.AF_INET, IP: loopbackAddr}, nil); err != nil {
		t.Fatal(err)
	}
	loAddr, _ := lo.LocalAddr()
	if err := cli.Connect(loAddr, nil); err != nil {
		t.Fatalf("connect UDP: %v", err)
	}
	if _, err := cli.Write([]byte("local")); err != nil {
		t.Fatal(err)
	}
	waitReady(t, lo, unix.EPOLLIN)
	if n, err := lo.Read(big); string(big[:n]) != "local" || err != nil {
		t.Fatalf("Read = %q %v", big[:n], err)
	}
	// A socket closed under a reader reads as empty, never "try again":
	// a waiting reader would spin.
	lo.Close()
	if n, _, _, _, err := lo.RecvFrom(big, false); n != 0 || err != nil {
		t.Fatalf("RecvFrom after Close = %d %v, want 0 <nil>", n, err)
	}
	if err := cli.Connect(Addr{Family: unix.AF_UNSPEC}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Write([]byte("x")); err != unix.EDESTADDRREQ {
		t.Fatalf("write after disconnect: %v, want EDESTADDRREQ", err)
	}
}

// TestDeferAcceptRounding checks the rounding against values read from
// Linux (the host's, under qemu-riscv64: setsockopt, then getsockopt).
func TestDeferAcceptRounding(t *testing.T) {
	for _, c := range []struct{ set, get int }{{0, 0}, {-3, 0}, {1, 1}, {2, 3}, {5, 7}, {30, 31}, {100, 127}, {200, 247}} {
		if got := deferAcceptSeconds(c.set); got != c.get {
			t.Errorf("deferAcceptSeconds(%d) = %d, want %d", c.set, got, c.get)
		}
	}
}
