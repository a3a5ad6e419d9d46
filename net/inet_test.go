package net

import (
	"bytes"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSocketServerAndClient uses the InetSocket API on both ends of a back-to-back
// pair: bind to the any-address, listen, non-blocking accept, connect,
// read and write, end of stream, and errors as errnos.
func TestSocketServerAndClient(t *testing.T) {
	srvStack, cliStack := pair(t)
	ln, err := srvStack.NewTCP()
	if err != nil {
		t.Fatal(err)
	}
	ln.SetIntOption(unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := ln.Bind(Addr{Family: unix.AF_INET, Port: 80}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ln.Listen(8); err != nil {
		t.Fatal(err)
	}
	if a, err := ln.LocalAddr(); err != nil || a != (Addr{Family: unix.AF_INET, IP: netip.IPv4Unspecified(), Port: 80}) {
		t.Fatalf("LocalAddr = %v %v", a, err)
	}
	if _, _, err := ln.accept(); err != unix.EAGAIN {
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
	conn, peer, err := ln.accept()
	if err != nil || peer.IP != netip.AddrFrom4([4]byte{10, 0, 2, 2}) {
		t.Fatalf("Accept = %v %v", peer, err)
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
func connect(t testing.TB, so *InetSocket, port uint16) error {
	t.Helper()
	if err := so.Connect(Addr{Family: unix.AF_INET, IP: netip.AddrFrom4([4]byte{10, 0, 2, 15}), Port: port}, nil); err != unix.EINPROGRESS {
		return err
	}
	r := watchReady(so, unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP)
	defer r.stop()
	r.wait(t)
	return so.ConnectResult()
}

// TestCorkedDataLeavesWithin200ms: as on Linux, data written under
// TCP_CORK goes out within 200 ms even if the cork stays on. nginx
// (tcp_nopush) corks while it answers and uncorks only once the request
// is done; a request whose body is still to come leaves its answer corked.
func TestCorkedDataLeavesWithin200ms(t *testing.T) {
	conn, cli, _ := acceptedPair(t)
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
func waitPending(t *testing.T, so *InetSocket, n int) {
	t.Helper()
	got := 0
	for end := time.Now().Add(2 * time.Second); got < n && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		got, _ = so.Pending()
	}
	if got != n {
		t.Fatalf("%d bytes readable, want %d", got, n)
	}
}

// acceptedPair connects a client InetSocket on one stack to a server on the
// other and returns the server's end, the client's, and the cable from
// the server to the client.
func acceptedPair(t testing.TB) (conn, cli *InetSocket, toClient *cable) {
	t.Helper()
	srvStack, cliStack, toClient := pairWithCable(t)
	ln, err := srvStack.NewTCP()
	if err != nil {
		t.Fatal(err)
	}
	if err := ln.Bind(Addr{Family: unix.AF_INET, Port: 80}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ln.Listen(8); err != nil {
		t.Fatal(err)
	}
	cli, _ = cliStack.NewTCP()
	if err := connect(t, cli, 80); err != nil {
		t.Fatal(err)
	}
	waitReadable(t, ln)
	if conn, _, err = ln.accept(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); cli.Close(); ln.Close() })
	return conn, cli, toClient
}

// readAll reads so until end of stream, waiting up to 5 s.
func readAll(t testing.TB, so *InetSocket) []byte {
	t.Helper()
	var got []byte
	buf := make([]byte, 4096)
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		n, err := so.Read(buf)
		if err == nil && n == 0 {
			return got
		}
		got = append(got, buf[:n]...)
		if err == unix.EAGAIN {
			time.Sleep(time.Millisecond)
		}
	}
	t.Fatalf("no end of stream after 5 s; %d bytes read", len(got))
	return nil
}

// dataSegments returns the payload sizes of the data segments among segs.
func dataSegments(segs []tcpSegment) []int {
	var sizes []int
	for _, s := range segs {
		if s.payload > 0 {
			sizes = append(sizes, s.payload)
		}
	}
	return sizes
}

// TestCorkJoinsAResponse answers as nginx does with tcp_nopush: cork,
// write the headers, send the body from a file, close still corked. The
// headers, the body and the FIN leave in one segment, as on Linux, and
// arrive whole before the end of the stream.
func TestCorkJoinsAResponse(t *testing.T) {
	conn, cli, toClient := acceptedPair(t)
	before := len(toClient.segments())
	headers, body := strings.Repeat("h", 233), strings.Repeat("b", 256)
	conn.SetCork(true)
	if n, err := conn.Write([]byte(headers)); n != len(headers) || err != nil {
		t.Fatalf("Write = %d %v", n, err)
	}
	if n, err := conn.WriteReader(strings.NewReader(body), len(body)); n != len(body) || err != nil {
		t.Fatalf("WriteFrom = %d %v", n, err)
	}
	conn.Close()
	if got := string(readAll(t, cli)); got != headers+body {
		t.Fatalf("read %d bytes, want the %d written", len(got), len(headers+body))
	}
	segs := toClient.segments()[before:]
	if sizes := dataSegments(segs); len(sizes) != 1 || sizes[0] != len(headers+body) {
		t.Errorf("data segments %v, want one of %d bytes", sizes, len(headers+body))
	}
	for _, s := range segs {
		if s.flags&header.TCPFlagFin != 0 && s.payload != len(headers+body) {
			t.Errorf("a FIN with %d bytes: want it on the data (segments %+v)", s.payload, segs)
		}
	}
}

// TestCorkHoldsUntilCleared: small writes under TCP_CORK wait for the
// cork's removal (or its 200 ms), then leave together; a write larger
// than what the cork holds goes at once, with what was held before it.
func TestCorkHoldsUntilCleared(t *testing.T) {
	conn, cli, toClient := acceptedPair(t)
	before := len(toClient.segments())
	conn.SetCork(true)
	for _, s := range []string{"one ", "two ", "three"} {
		if n, err := conn.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d %v", s, n, err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	if n, _ := cli.Pending(); n != 0 {
		t.Fatalf("%d bytes arrived while corked", n)
	}
	conn.SetCork(false)
	waitPending(t, cli, 13)
	buf := make([]byte, 64<<10)
	if n, _ := cli.Read(buf); string(buf[:n]) != "one two three" {
		t.Fatalf("read %q", buf[:n])
	}
	conn.SetCork(true)
	conn.Write([]byte("held "))
	big := strings.Repeat("x", corkHold)
	if n, err := conn.Write([]byte(big)); n != len(big) || err != nil {
		t.Fatalf("Write of %d bytes = %d %v", len(big), n, err)
	}
	waitPending(t, cli, 5+len(big))
	if n, _ := cli.Read(buf); string(buf[:n]) != "held "+big {
		t.Fatalf("read %d bytes, not what was written", n)
	}
	if sizes := dataSegments(toClient.segments()[before:]); len(sizes) != 1+(5+len(big)+1447)/1448 {
		t.Errorf("data segments %v: want the three words in one, then the held and the large write together", sizes)
	}
}

// TestCorkDoesNotHoldFailingWrites: a write that cannot be sent fails
// under TCP_CORK too, rather than waiting in the socket.
func TestCorkDoesNotHoldFailingWrites(t *testing.T) {
	conn, _, _ := acceptedPair(t)
	conn.SetCork(true)
	if err := conn.Shutdown(unix.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Write([]byte("late")); err != unix.EPIPE {
		t.Fatalf("Write after SHUT_WR = %d %v, want EPIPE", n, err)
	}
	s, _ := pair(t)
	unconnected, err := s.NewTCP()
	if err != nil {
		t.Fatal(err)
	}
	unconnected.SetCork(true)
	if n, err := unconnected.Write([]byte("x")); err == nil {
		t.Fatalf("Write on an unconnected socket = %d, nil", n)
	}
}

// TestCorkedCloseWaitsForRoom: data held under TCP_CORK when the stack's
// send buffer is full still goes, before the FIN, after a close.
func TestCorkedCloseWaitsForRoom(t *testing.T) {
	conn, cli, _ := acceptedPair(t)
	var want []byte
	chunk := []byte(strings.Repeat("f", 16<<10))
	for {
		n, err := conn.Write(chunk)
		want = append(want, chunk[:n]...)
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	conn.SetCork(true)
	if n, err := conn.Write([]byte("tail")); n != 4 || err != nil {
		t.Fatalf("corked Write with the buffer full = %d %v", n, err)
	}
	conn.Close()
	want = append(want, "tail"...)
	if got := readAll(t, cli); !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d written ending in %q", len(got), len(want), "tail")
	}
}

// TestReadinessOnlyInMask: a connection whose peer has shut down its side
// (CLOSE-WAIT) and whose send buffer is full is not ready for EPOLLOUT,
// EPOLLERR or EPOLLHUP. netstack reports EPOLLRDHUP whatever it is asked,
// and a blocked write that took that for room spun without end.
func TestReadinessOnlyInMask(t *testing.T) {
	conn, cli, _ := acceptedPair(t)
	if err := cli.Shutdown(unix.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); conn.Readiness(unix.EPOLLRDHUP) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the peer's shutdown did not arrive")
		}
	}
	chunk := make([]byte, 64<<10)
	for filled := false; !filled; {
		_, err := conn.Write(chunk)
		switch err {
		case nil:
		case unix.EAGAIN:
			filled = true
		default:
			t.Fatalf("Write: %v", err)
		}
	}
	const mask = unix.EPOLLOUT | unix.EPOLLERR | unix.EPOLLHUP
	if r := conn.Readiness(mask); r != 0 {
		t.Fatalf("Readiness(%#x) with the send buffer full = %#x, want 0", mask, r)
	}
}
