package probe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"strconv"
	"strings"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/load"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// header is one response header line, in the order received.
type header struct{ Name, Value string }

// response is a parsed HTTP/1.x response with its headers in wire order.
type response struct {
	Proto   string
	Status  int
	Headers []header
	Body    []byte // nil when streamed to a sink
	N       int64  // body bytes received
}

// Get returns the first value of the named header (case-insensitive).
func (r *response) Get(name string) (string, bool) {
	for _, h := range r.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value, true
		}
	}
	return "", false
}

// Names returns the header names in order.
func (r *response) Names() []string {
	n := make([]string, len(r.Headers))
	for i, h := range r.Headers {
		n[i] = h.Name
	}
	return n
}

// probeError carries a failure class with its message, and the error it
// quotes, if any, so that errors.Is still sees how a connection ended.
type probeError struct {
	class string
	msg   string
	cause error
}

func (e *probeError) Error() string { return e.msg }

func (e *probeError) Unwrap() error { return e.cause }

func perr(class, format string, args ...any) error {
	e := &probeError{class: class, msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok {
			e.cause = err
		}
	}
	return e
}

// classOf returns err's failure class.
func classOf(err error) string {
	var pe *probeError
	if errors.As(err, &pe) {
		return pe.class
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return report.ClassTimeout
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return report.ClassTimeout
	}
	return report.ClassBadResponse
}

// conn is one client connection that carries requests in sequence.
type conn struct {
	addr    string
	c       net.Conn
	br      *bufio.Reader
	stop    func() bool // unregisters the cancellation hook
	answers *Answers    // counts the requests to a followed server; nil if not followed
}

// dial connects with the load generator's retrying dialer, bounded by ctx.
func dial(ctx context.Context, addr string) (*conn, error) {
	c, _, err := dialStats(ctx, addr)
	return c, err
}

// dialStats is dial that also tells how the connection was obtained.
func dialStats(ctx context.Context, addr string) (*conn, load.DialStats, error) {
	timeout := connectTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	answers := answersFor(ctx, addr)
	c, st, err := load.Dial(ctx, addr, timeout)
	if err != nil {
		class := report.ClassConnectRefused
		if classOf(err) == report.ClassTimeout {
			class = report.ClassTimeout
		}
		err = perr(class, "connect %s: %v", addr, err)
		answers.record(err)
		return nil, st, err
	}
	if d, ok := ctx.Deadline(); ok {
		c.SetDeadline(d)
	}
	// Cancellation must end a blocked read or write too.
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	return &conn{addr: addr, c: c, br: newReader(c), stop: stop, answers: answers}, st, nil
}

func (c *conn) Close() error {
	if c.stop != nil {
		c.stop()
	}
	return c.c.Close()
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReaderSize(c, 64<<10) }

// maxBody bounds bodies kept in memory; larger ones must go to a sink.
const maxBody = 16 << 20

// do sends one request (extra holds additional header lines, each ending
// in CRLF) and reads the response; with sink set the body is streamed
// into it instead of kept.
func (c *conn) do(method, path, extra string, sink io.Writer) (*response, error) {
	req := method + " " + path + " HTTP/1.1\r\nHost: " + c.addr + "\r\nUser-Agent: jiege-probe\r\nAccept: */*\r\n" + extra + "\r\n"
	if _, err := io.WriteString(c.c, req); err != nil {
		c.answers.lose(lostReset)
		return nil, fmt.Errorf("%s %s: write: %w", method, path, err)
	}
	r, err := readResponse(c.br, method, sink)
	c.answers.record(err)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return r, nil
}

func readResponse(br *bufio.Reader, method string, sink io.Writer) (*response, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		if line == "" && (errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)) {
			return nil, perr(report.ClassNoHTTPResponse, "connection closed before any response byte")
		}
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/1.") || err != nil || len(code) != 3 {
		return nil, perr(report.ClassBadResponse, "bad status line %q", trunc(line))
	}
	r := &response{Proto: proto, Status: status}
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return nil, perr(report.ClassBadResponse, "headers cut short: %v", err)
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			break
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, perr(report.ClassBadResponse, "bad header line %q", trunc(l))
		}
		r.Headers = append(r.Headers, header{name, strings.TrimSpace(value)})
	}
	var body io.Reader
	te, _ := r.Get("Transfer-Encoding")
	cl, hasCL := r.Get("Content-Length")
	switch {
	case method == "HEAD" || status == 304 || status == 204 || status < 200:
		return r, nil
	case strings.EqualFold(te, "chunked"):
		body = httputil.NewChunkedReader(br)
	case hasCL:
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil || n < 0 {
			return nil, perr(report.ClassBadResponse, "bad Content-Length %q", cl)
		}
		body = io.LimitReader(br, n)
	default:
		body = br // until the server closes
	}
	if sink == nil {
		var b bytes.Buffer
		n, err := io.Copy(&b, io.LimitReader(body, maxBody+1))
		if n > maxBody {
			return nil, perr(report.ClassBadResponse, "body over %d bytes", maxBody)
		}
		r.Body, r.N = b.Bytes(), n
		if err != nil {
			return nil, perr(report.ClassBadResponse, "body: %v", err)
		}
	} else {
		n, err := io.Copy(sink, body)
		r.N = n
		if err != nil {
			return nil, perr(report.ClassBadResponse, "body: %v", err)
		}
	}
	if strings.EqualFold(te, "chunked") {
		// The chunked reader stops after the last chunk's size line:
		// the trailer and its blank line are still to be read.
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return nil, perr(report.ClassBadResponse, "chunked trailer: %v", err)
			}
			if strings.TrimRight(l, "\r\n") == "" {
				break
			}
		}
	}
	if hasCL && !strings.EqualFold(te, "chunked") {
		if n, _ := strconv.ParseInt(cl, 10, 64); r.N != n {
			return nil, perr(report.ClassBadResponse, "body cut short: %d of %d bytes", r.N, n)
		}
	}
	return r, nil
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
