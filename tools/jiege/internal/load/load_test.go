package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer is a minimal keep-alive HTTP/1.1 server that answers every
// request with body, or with what respond writes when set (closing the
// connection if it returns true). It reads requests by their blank line,
// so it is cheap enough for benchmarks.
type rawServer struct {
	addr    string
	ln      net.Listener
	served  atomic.Int64
	respond func(n int64, w *bufio.Writer, close bool) (hangUp bool)
}

func startRaw(t testing.TB, body []byte, respond func(n int64, w *bufio.Writer, close bool) bool) *rawServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{addr: ln.Addr().String(), ln: ln, respond: respond}
	if s.respond == nil {
		head := []byte("HTTP/1.1 200 OK\r\nServer: raw\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
		s.respond = func(_ int64, w *bufio.Writer, close bool) bool {
			w.Write(head)
			w.Write(body)
			return false
		}
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *rawServer) serve(c net.Conn) {
	defer c.Close()
	br, bw := bufio.NewReader(c), bufio.NewWriter(c)
	for {
		close := false
		for {
			l, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if bytes.EqualFold(bytes.TrimSpace(l), []byte("Connection: close")) {
				close = true
			}
			if len(l) <= 2 {
				break
			}
		}
		hangUp := s.respond(s.served.Add(1), bw, close)
		if bw.Flush() != nil || close || hangUp {
			return
		}
	}
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestKeepAliveCount(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 1000)
	s := startRaw(t, body, nil)
	r, err := Run(ctx(t), Config{Addr: s.addr, Conns: 4, KeepAlive: true, MaxRequests: 2000,
		Requests: []Request{{Path: "/", Size: 1000, SHA256: digest(body)}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 2000 || r.Errors.Total() != 0 || s.served.Load() != 2000 {
		t.Fatalf("requests %d errors %+v served %d: %v", r.Requests, r.Errors, s.served.Load(), r.Samples)
	}
	if r.Connections != 4 {
		t.Errorf("%d connections for 4 keep-alive workers", r.Connections)
	}
	if r.Bytes != 2000*1000 || r.ReqPerSec <= 0 || r.P50 <= 0 || r.P99 < r.P50 || r.Max < r.P99 {
		t.Errorf("bytes %d rps %.0f p50 %v p99 %v max %v", r.Bytes, r.ReqPerSec, r.P50, r.P99, r.Max)
	}
}

func TestFreshConnections(t *testing.T) {
	s := startRaw(t, []byte("hello"), nil)
	r, err := Run(ctx(t), Config{Addr: s.addr, Conns: 3, MaxRequests: 90})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 90 || r.Connections != 90 || r.Errors.Total() != 0 {
		t.Fatalf("requests %d connections %d errors %+v %v", r.Requests, r.Connections, r.Errors, r.Samples)
	}
}

func TestDurationBound(t *testing.T) {
	s := startRaw(t, []byte("hello"), nil)
	start := time.Now()
	r, err := Run(ctx(t), Config{Addr: s.addr, Conns: 2, KeepAlive: true, Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 2*time.Second {
		t.Errorf("ran %v for a 300ms duration", d)
	}
	if r.Requests < 10 || r.Errors.Total() != 0 {
		t.Errorf("requests %d errors %+v", r.Requests, r.Errors)
	}
}

func TestContextCancelStopsBlockedRequests(t *testing.T) {
	// The server accepts and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	c, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err := Run(c, Config{Addr: ln.Addr().String(), Conns: 2, KeepAlive: true, MaxRequests: 10})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancel took %v", d)
	}
	if r.Requests != 0 {
		t.Errorf("%d requests answered by a mute server", r.Requests)
	}
}

func TestBadConfig(t *testing.T) {
	for _, c := range []Config{
		{},
		{Addr: "10.0.2.15:80", MaxRequests: 1},
		{Addr: "localhost:80", MaxRequests: 1},
		{Addr: "127.0.0.1:1"},
		{Addr: "127.0.0.1:1", MaxRequests: 1, Conns: MaxConns + 1},
		{Addr: "127.0.0.1:1", MaxRequests: 1, Requests: []Request{{Path: "x"}}},
		{Addr: "127.0.0.1:1", MaxRequests: 1, Requests: []Request{{Path: "/", SHA256: "zz"}}},
	} {
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

func TestErrorClasses(t *testing.T) {
	body := []byte("0123456789")
	cases := []struct {
		name    string
		respond func(n int64, w *bufio.Writer, close bool) bool
		req     Request
		check   func(e Errors) int64
	}{
		{"bad status", func(n int64, w *bufio.Writer, _ bool) bool {
			w.WriteString("HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n")
			return false
		}, Request{Path: "/"}, func(e Errors) int64 { return e.BadStatus }},
		{"bad response", func(n int64, w *bufio.Writer, _ bool) bool {
			w.WriteString("SSH-2.0-nope\r\n\r\n")
			return false
		}, Request{Path: "/"}, func(e Errors) int64 { return e.BadResponse }},
		{"wrong size", func(n int64, w *bufio.Writer, _ bool) bool {
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n012345678")
			return false
		}, Request{Path: "/", Size: 10}, func(e Errors) int64 { return e.BadBody }},
		{"wrong digest", func(n int64, w *bufio.Writer, _ bool) bool {
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456780")
			return false
		}, Request{Path: "/", SHA256: digest(body)}, func(e Errors) int64 { return e.BadBody }},
		{"cut short", func(n int64, w *bufio.Writer, _ bool) bool {
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n01234")
			return true
		}, Request{Path: "/"}, func(e Errors) int64 { return e.Reset }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startRaw(t, nil, c.respond)
			r, err := Run(ctx(t), Config{Addr: s.addr, Conns: 1, KeepAlive: true, MaxRequests: 5, Requests: []Request{c.req}})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.check(r.Errors); got != 5 || r.Errors.Total() != 5 || r.Requests != 0 {
				t.Fatalf("errors %+v, requests %d, samples %v", r.Errors, r.Requests, r.Samples)
			}
			if r.Err() == nil {
				t.Error("Err() is nil with errors")
			}
		})
	}
}

func TestResetClassification(t *testing.T) {
	// The server closes every connection after reading the request.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			bufio.NewReader(c).ReadString('\n')
			c.Close()
		}
	}()
	r, err := Run(ctx(t), Config{Addr: ln.Addr().String(), Conns: 1, KeepAlive: true, MaxRequests: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors.Reset != 3 {
		t.Fatalf("errors %+v %v", r.Errors, r.Samples)
	}
}

func TestDialLoopbackOnly(t *testing.T) {
	if _, _, err := Dial(context.Background(), "192.0.2.1:80", time.Second); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("Dial to a non-loopback address: %v", err)
	}
}

func TestConnectFailAndStopOnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := time.Now()
	r, err := Run(ctx(t), Config{Addr: addr, MaxRequests: 100, ConnectTimeout: 200 * time.Millisecond, StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors.ConnectFail != 1 || r.ConnectRetries == 0 {
		t.Fatalf("errors %+v retries %d", r.Errors, r.ConnectRetries)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestConnectRetryIsNotAnError(t *testing.T) {
	// Nothing listens for the first 300 ms.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	go func() {
		time.Sleep(300 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
		t.Cleanup(func() { srv.Close() })
		srv.Serve(ln)
	}()
	r, err := Run(ctx(t), Config{Addr: addr, MaxRequests: 5, KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 5 || r.Errors.Total() != 0 || r.ConnectRetries == 0 {
		t.Fatalf("requests %d errors %+v retries %d %v", r.Requests, r.Errors, r.ConnectRetries, r.Samples)
	}
}

func TestChunkedAndVerify(t *testing.T) {
	want := strings.Repeat("chunky ", 5000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Flushing part-way makes net/http send chunked encoding.
		io.WriteString(w, want[:100])
		w.(http.Flusher).Flush()
		io.WriteString(w, want[100:])
	}))
	defer srv.Close()
	var seen atomic.Int64
	r, err := Run(ctx(t), Config{Addr: srv.Listener.Addr().String(), Conns: 2, KeepAlive: true, MaxRequests: 20,
		Requests: []Request{{Path: "/a", SHA256: digest([]byte(want))}, {Path: "/b"}},
		Verify: func(path string, body []byte) error {
			seen.Add(1)
			if string(body) != want {
				return errors.New("body differs")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 20 || r.Errors.Total() != 0 || seen.Load() != 20 {
		t.Fatalf("requests %d errors %+v verified %d %v", r.Requests, r.Errors, seen.Load(), r.Samples)
	}
	if r.Bytes != int64(20*len(want)) {
		t.Errorf("bytes %d", r.Bytes)
	}
}

func TestParseHelpers(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1f": 31, "FF; ext=1": 255, " a ": 10} {
		if got, ok := parseHex([]byte(in)); !ok || got != want {
			t.Errorf("parseHex(%q) = %d, %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "g", "1234567890123456"} {
		if _, ok := parseHex([]byte(bad)); ok {
			t.Errorf("parseHex(%q) accepted", bad)
		}
	}
	if _, ok := parseUint([]byte("12a")); ok {
		t.Error("parseUint accepted 12a")
	}
}

func TestHistogram(t *testing.T) {
	var h Histogram
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	for q, want := range map[float64]time.Duration{0.5: 500 * time.Microsecond, 0.9: 900 * time.Microsecond, 0.99: 990 * time.Microsecond} {
		got := h.Quantile(q)
		if d := got - want; d < -want/30 || d > want/30 {
			t.Errorf("q%.2f = %v, want %v within 3.3%%", q, got, want)
		}
	}
	if h.Max() != time.Millisecond || h.Count() != 1000 {
		t.Errorf("max %v count %d", h.Max(), h.Count())
	}
	// Every bucket index maps back to a range holding its values.
	for _, v := range []int64{0, 1, 63, 64, 65, 1000, 123456789, 1 << 40} {
		i := histIndex(v)
		lo, w := histRange(i)
		if v < lo || v >= lo+w || i >= histBuckets {
			t.Errorf("value %d: bucket %d [%d,%d)", v, i, lo, lo+w)
		}
	}
	var o Histogram
	o.Record(time.Second)
	h.Merge(&o)
	if h.Max() != time.Second || h.Count() != 1001 {
		t.Errorf("merge: max %v count %d", h.Max(), h.Count())
	}
}

func TestAllocsPerRequest(t *testing.T) {
	body := bytes.Repeat([]byte("y"), 600)
	s := startRaw(t, body, nil)
	run := func(n int64) {
		r, err := Run(ctx(t), Config{Addr: s.addr, Conns: 1, KeepAlive: true, MaxRequests: n,
			Requests: []Request{{Path: "/", SHA256: digest(body)}}})
		if err != nil || r.Requests != n {
			t.Fatalf("%v %+v", err, r)
		}
	}
	small := testing.AllocsPerRun(3, func() { run(10) })
	large := testing.AllocsPerRun(3, func() { run(2010) })
	perReq := (large - small) / 2000
	t.Logf("allocations: %.0f per run of 10, %.3f per extra request", small, perReq)
	if perReq > 0.05 {
		t.Errorf("%.3f allocations per request, want ~0", perReq)
	}
}

// BenchmarkKeepAlive measures the generator against an in-process server.
func BenchmarkKeepAlive(b *testing.B) {
	s := startRaw(b, bytes.Repeat([]byte("z"), 612), nil)
	b.ReportAllocs()
	b.ResetTimer()
	r, err := Run(context.Background(), Config{Addr: s.addr, Conns: 8, KeepAlive: true, MaxRequests: int64(b.N)})
	if err != nil || r.Requests != int64(b.N) {
		b.Fatalf("%v %+v", err, r)
	}
	b.ReportMetric(r.ReqPerSec, "req/s")
	b.ReportMetric(float64(r.P99.Microseconds()), "p99-µs")
}

// Example_result shows how a result reports failures.
func Example_result() {
	r := Result{Requests: 9, Errors: Errors{Reset: 1}, Samples: []string{"body: connection closed"}}
	fmt.Println(r.Err())
	// Output: 1 of 10 requests failed ({ConnectFail:0 Reset:1 Timeout:0 BadStatus:0 BadResponse:0 BadBody:0}): body: connection closed
}

// The parser gives the same result however the bytes are split across reads.
func TestParserSplits(t *testing.T) {
	cases := []struct {
		name, in, body string
		close, eof     bool // close: connection must close after; eof: body ends at EOF
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: x\r\n\r\nhello", "hello", false, false},
		{"empty", "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", "", false, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\nA\r\n0123456789\r\n0\r\nT: v\r\n\r\n", "abc0123456789", false, false},
		{"close header", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", "ok", true, false},
		{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok", true, false},
		{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", "ok", false, false},
		{"until eof", "HTTP/1.1 200 OK\nX: y\n\nbody until close", "body until close", true, true},
	}
	for _, c := range cases {
		for _, step := range []int{1, 2, 3, 7, 1 << 20} {
			var p respParser
			sha := sha256.New()
			p.reset(sha, true)
			in := []byte(c.in)
			for off := 0; off < len(in); off += step {
				chunk := in[off:min(off+step, len(in))]
				used, err := p.feed(chunk)
				if err != nil {
					t.Fatalf("%s/%d: %v", c.name, step, err)
				}
				if used != len(chunk) {
					t.Fatalf("%s/%d: used %d of %d", c.name, step, used, len(chunk))
				}
			}
			if c.eof {
				if p.done() {
					t.Fatalf("%s/%d: done before EOF", c.name, step)
				}
				if err := p.eof(); err != nil {
					t.Fatalf("%s/%d: eof: %v", c.name, step, err)
				}
			}
			if !p.done() || string(p.body) != c.body || p.n != int64(len(c.body)) || p.head.close != c.close {
				t.Fatalf("%s/%d: done %v body %q n %d close %v", c.name, step, p.done(), p.body, p.n, p.head.close)
			}
			if hex.EncodeToString(sha.Sum(nil)) != digest([]byte(c.body)) {
				t.Fatalf("%s/%d: digest", c.name, step)
			}
		}
	}
}

func TestParserErrors(t *testing.T) {
	cases := []struct {
		name, in string
		class    errClass
	}{
		{"status", "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\n", classBadStatus},
		{"not http", "SSH-2.0-x\r\n", classBadResponse},
		{"header", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", classBadResponse},
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", classBadResponse},
		{"chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", classBadResponse},
		{"chunk overrun", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", classBadResponse},
		// A line without its end may not grow past maxLine in memory.
		{"long line", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxLine), classBadResponse},
	}
	for _, c := range cases {
		var p respParser
		p.reset(nil, false)
		_, err := p.feed([]byte(c.in))
		var re *reqError
		if !errors.As(err, &re) || re.class != c.class {
			t.Errorf("%s: error %v, want class %d", c.name, err, c.class)
		}
	}
	var p respParser
	p.reset(nil, false)
	if err := p.eof(); err == nil || !strings.Contains(err.Error(), "before the response") {
		t.Errorf("eof before anything: %v", err)
	}
	p.feed([]byte("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc"))
	if err := p.eof(); err == nil || !strings.Contains(err.Error(), "mid-response") {
		t.Errorf("eof mid-body: %v", err)
	}
}
