package fakehttp

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLastAnswerSurvivesPipelinedRequests: a client pipelines a request
// for a large file, an HTTP/1.0 request (after which the server closes)
// and a long one, then reads slowly. The server must close as nginx does,
// dropping the request it will not answer, not reset the connection with
// it unread: the reset could cut the large answer short in flight.
func TestLastAnswerSurvivesPipelinedRequests(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	s, err := Start(Options{Files: map[string][]byte{"/big": big, "/index.html": []byte("index")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A small receive buffer keeps most of the large answer in the
	// server's send queue, which a reset would throw away.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := d.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	// The third request is long: the server's reader has not taken it
	// all in when it closes.
	third := "GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + strings.Repeat("x", 64<<10) + "\r\n\r\n"
	if _, err := io.WriteString(c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.0\r\n\r\n"+third); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the server answers the second request and closes meanwhile
	br := bufio.NewReader(c)
	for i, want := range [][]byte{big, []byte("index")} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(body, want) {
			t.Fatalf("answer %d: %d of %d bytes, %v", i+1, len(body), len(want), err)
		}
	}
	if _, err := http.ReadResponse(br, nil); err == nil {
		t.Error("an answer to the request after HTTP/1.0's")
	}
}
