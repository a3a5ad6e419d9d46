package net

import (
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSocketServerAndClient uses the Socket API on both ends of a back-to-back
// pair: bind to the any-address, listen, non-blocking accept, connect,
// read and write, end of stream, and errors as errnos.
func TestSocketServerAndClient(t *testing.T) {
	srvStack, cliStack := pair(t)
	ln, err := srvStack.NewTCP()
	if err != nil {
		t.Fatal(err)
	}
	ln.SetIntOption(unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := ln.Bind(netip.Addr{}, 80); err != nil {
		t.Fatal(err)
	}
	if err := ln.Listen(8); err != nil {
		t.Fatal(err)
	}
	if ip, port, err := ln.LocalAddr(); err != nil || ip != netip.IPv4Unspecified() || port != 80 {
		t.Fatalf("LocalAddr = %v:%d %v", ip, port, err)
	}
	if _, _, _, err := ln.Accept(); err != unix.EAGAIN {
		t.Fatalf("accept with nothing pending: %v", err)
	}

	cli, err := cliStack.NewTCP()
	if err != nil {
		t.Fatal(err)
	}
	if err := connect(t, cli, 81); err != unix.ECONNREFUSED {
		t.Fatalf("connect to a closed port: %v", err)
	}
	cli.Close()
	cli, _ = cliStack.NewTCP()
	if err := connect(t, cli, 80); err != nil {
		t.Fatal(err)
	}
	waitReadable(t, ln)
	conn, ip, _, err := ln.Accept()
	if err != nil || ip != netip.AddrFrom4([4]byte{10, 0, 2, 2}) {
		t.Fatalf("Accept = %v %v", ip, err)
	}
	if n, err := cli.Write([]byte("GET / HTTP/1.0\r\n\r\n")); n != 18 || err != nil {
		t.Fatalf("Write = %d %v", n, err)
	}
	// FIONREAD: what a read would return, once it has arrived.
	pending := 0
	for end := time.Now().Add(10 * time.Second); pending < 18 && time.Now().Before(end); time.Sleep(time.Millisecond) {
		if pending, err = conn.Pending(); err != nil {
			t.Fatalf("Pending: %v", err)
		}
	}
	if pending != 18 {
		t.Fatalf("Pending = %d, want 18", pending)
	}
	buf := make([]byte, 64)
	waitReadable(t, conn)
	n, err := conn.Read(buf)
	if err != nil || string(buf[:n]) != "GET / HTTP/1.0\r\n\r\n" {
		t.Fatalf("Read = %q %v", buf[:n], err)
	}
	if pending, err = conn.Pending(); pending != 0 || err != nil {
		t.Fatalf("Pending after the read = %d %v", pending, err)
	}
	conn.Write([]byte("bye"))
	conn.Close()
	got := ""
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		waitReadable(t, cli)
		n, err := cli.Read(buf)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if n == 0 {
			break
		}
		got += string(buf[:n])
	}
	if got != "bye" {
		t.Fatalf("client read %q before end of stream", got)
	}
	if err := cli.Shutdown(99); err != unix.EINVAL {
		t.Fatalf("Shutdown(99): %v", err)
	}
	if st := cli.Stat(); st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		t.Fatalf("Stat mode %#o", st.Mode)
	}
}

// connect connects so to 10.0.2.15:port as a blocking connect(2) does:
// start, wait until writable (up to 10 s), take the result.
func connect(t *testing.T, so *Socket, port uint16) error {
	t.Helper()
	if err := so.Connect(netip.AddrFrom4([4]byte{10, 0, 2, 15}), port); err != unix.EINPROGRESS {
		return err
	}
	changed := make(chan struct{}, 1)
	cancel := so.Watch(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancel()
	deadline := time.After(10 * time.Second)
	for so.Readiness(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("connect: no answer after 10 s")
		}
	}
	return so.ConnectResult()
}

// TestCorkedDataLeavesWithin200ms: as on Linux, data written under
// TCP_CORK goes out within 200 ms even if the cork stays on (here at once:
// SetCork holds nothing). nginx (tcp_nopush) corks while it answers and
// uncorks only once the request is done; a request whose body is still to
// come leaves its answer corked.
func TestCorkedDataLeavesWithin200ms(t *testing.T) {
	srvStack, cliStack := pair(t)
	ln, err := srvStack.NewTCP()
	if err != nil {
		t.Fatal(err)
	}
	if err := ln.Bind(netip.Addr{}, 80); err != nil {
		t.Fatal(err)
	}
	if err := ln.Listen(8); err != nil {
		t.Fatal(err)
	}
	cli, _ := cliStack.NewTCP()
	if err := connect(t, cli, 80); err != nil {
		t.Fatal(err)
	}
	waitReadable(t, ln)
	conn, _, _, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	defer cli.Close()
	// A first segment in flight, so that the next one would wait.
	if _, err := conn.Write([]byte("first")); err != nil {
		t.Fatal(err)
	}
	waitPending(t, cli, 5)
	buf := make([]byte, 64)
	cli.Read(buf)
	for round := 0; round < 2; round++ {
		conn.SetCork(true)
		if _, err := conn.Write([]byte("corked")); err != nil {
			t.Fatal(err)
		}
		waitPending(t, cli, 6)
		if n, err := cli.Read(buf); n != 6 || err != nil {
			t.Fatalf("Read = %q %v", buf[:n], err)
		}
	}
}

// waitPending waits up to 2 s for n bytes to be readable on so.
func waitPending(t *testing.T, so *Socket, n int) {
	t.Helper()
	got := 0
	for end := time.Now().Add(2 * time.Second); got < n && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		got, _ = so.Pending()
	}
	if got != n {
		t.Fatalf("%d bytes readable, want %d", got, n)
	}
}
