package net

import (
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkFreshConnection is nginx's answer to a fresh connection, both
// ends on netstack across a cable: connect, accept, a request, a corked
// answer and close, the client reading to the end and closing.
func BenchmarkFreshConnection(b *testing.B) {
	srvStack, cliStack := pair(b)
	srvStack.SetMaxTimeWait(2048)
	b.ResetTimer()
	freshConnections(b, srvStack, cliStack, b.N)
}

// freshConnections makes n fresh connections from cliStack to a server on
// srvStack, as BenchmarkFreshConnection describes.
func freshConnections(b testing.TB, srvStack, cliStack *Stack, n int) {
	ln, err := srvStack.NewTCP()
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	ln.SetIntOption(unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := ln.Bind(Addr{Family: unix.AF_INET, Port: 80}, nil); err != nil {
		b.Fatal(err)
	}
	if err := ln.Listen(128); err != nil {
		b.Fatal(err)
	}
	request := []byte("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	answer := make([]byte, 489)
	buf := make([]byte, 4096)
	for range n {
		cli, _ := cliStack.NewTCP()
		if err := connect(b, cli, 80); err != nil {
			b.Fatal(err)
		}
		cli.Write(request)
		waitReadable(b, ln)
		conn, _, err := ln.accept()
		if err != nil {
			b.Fatal(err)
		}
		waitReadable(b, conn)
		conn.Read(buf)
		conn.SetIntOption(unix.IPPROTO_TCP, unix.TCP_CORK, 1)
		conn.Write(answer)
		conn.Close()
		got := 0
		for {
			waitReadable(b, cli)
			n, err := cli.Read(buf)
			if err != nil || n == 0 {
				break
			}
			got += n
		}
		if got != len(answer) {
			b.Fatalf("%d bytes, want %d", got, len(answer))
		}
		cli.Close()
	}
}

// BenchmarkKeepAliveRequest is nginx's answer to a request on a
// connection kept alive: the request in, the answer out under TCP_CORK.
// Both ends are watched once, as nginx's epoll watches a connection.
func BenchmarkKeepAliveRequest(b *testing.B) {
	conn, cli, _ := acceptedPair(b)
	request := []byte("GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
	answer := make([]byte, 489)
	buf := make([]byte, 4096)
	connIn, cliIn := watchReady(conn, unix.EPOLLIN|unix.EPOLLHUP), watchReady(cli, unix.EPOLLIN|unix.EPOLLHUP)
	defer connIn.stop()
	defer cliIn.stop()
	for b.Loop() {
		cli.Write(request)
		connIn.wait(b)
		conn.Read(buf)
		conn.SetIntOption(unix.IPPROTO_TCP, unix.TCP_CORK, 1)
		conn.Write(answer)
		conn.SetIntOption(unix.IPPROTO_TCP, unix.TCP_CORK, 0)
		for got := 0; got < len(answer); {
			cliIn.wait(b)
			n, err := cli.Read(buf)
			if err != nil || n == 0 {
				b.Fatalf("read: %d %v", n, err)
			}
			got += n
		}
	}
}
