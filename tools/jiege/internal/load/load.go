// Package load owns jiege's HTTP/1.1 load generator: in-process, loopback
// only, bounded in time and count. It speaks HTTP over raw net.Conns with a
// prebuilt request and an allocation-free response parser, so that it is
// never the bottleneck (net/http's client allocates per request).
package load

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Request is one URL the generator fetches, with optional expectations.
type Request struct {
	Path   string
	Size   int64  // expected body size; checked when > 0
	SHA256 string // expected body digest (hex); checked when set
}

// Config describes one load run. Duration or MaxRequests (or both) must be
// set: every run is bounded.
type Config struct {
	Addr     string    // host:port, loopback
	Requests []Request // fetched round robin; default GET /
	Conns    int       // concurrent connections (workers); default 1
	// KeepAlive reuses each connection; otherwise every request opens a
	// fresh connection and sends "Connection: close".
	KeepAlive   bool
	Duration    time.Duration
	MaxRequests int64
	// ConnectTimeout bounds one connection attempt including retries;
	// default 10 s, because QEMU's hostfwd listens with a backlog of 1 and
	// dropped SYNs are only retried after 1, 3 and 7 s.
	ConnectTimeout time.Duration
	// IOTimeout bounds each request's write and response; default 30 s.
	IOTimeout time.Duration
	// Verify, if set, checks each whole body (buffered in memory).
	Verify func(path string, body []byte) error
	// StopOnError ends the run at the first failed request.
	StopOnError bool
}

// MaxConns bounds Config.Conns.
const MaxConns = 1024

// Errors counts failed requests by class.
type Errors struct {
	ConnectFail int64 `json:"connect_fail"` // no connection within ConnectTimeout
	Reset       int64 `json:"reset"`        // closed or reset before the response was complete
	Timeout     int64 `json:"timeout"`      // no complete response within IOTimeout
	BadStatus   int64 `json:"bad_status"`   // a status other than 200 (206 for ranges)
	BadResponse int64 `json:"bad_response"` // not parsable as HTTP/1.1
	BadBody     int64 `json:"bad_body"`     // wrong size, digest, or Verify failed
}

// Total returns the number of failed requests.
func (e Errors) Total() int64 {
	return e.ConnectFail + e.Reset + e.Timeout + e.BadStatus + e.BadResponse + e.BadBody
}

func (e *Errors) add(o Errors) {
	e.ConnectFail += o.ConnectFail
	e.Reset += o.Reset
	e.Timeout += o.Timeout
	e.BadStatus += o.BadStatus
	e.BadResponse += o.BadResponse
	e.BadBody += o.BadBody
}

// Result is the outcome of a run.
type Result struct {
	Requests int64  `json:"requests"` // completed without error
	Errors   Errors `json:"errors"`
	// ConnectRetries counts failed connection attempts that a later attempt
	// recovered from; SlowConnects counts connects that took over 900 ms,
	// the sign of a dropped SYN retried by the host's TCP. Neither is an error.
	ConnectRetries int64         `json:"connect_retries"`
	SlowConnects   int64         `json:"slow_connects"`
	Connections    int64         `json:"connections"` // connections opened
	Bytes          int64         `json:"bytes"`       // body bytes received
	Elapsed        time.Duration `json:"elapsed_ns"`
	ReqPerSec      float64       `json:"req_per_s"`
	MBPerSec       float64       `json:"mb_per_s"` // body bytes, 10^6 per MB
	P50            time.Duration `json:"p50_ns"`
	P90            time.Duration `json:"p90_ns"`
	P99            time.Duration `json:"p99_ns"`
	Max            time.Duration `json:"max_ns"`
	Mean           time.Duration `json:"mean_ns"`
	// Samples holds the first few error messages.
	Samples []string   `json:"samples,omitempty"`
	Hist    *Histogram `json:"-"`
}

// Err returns an error describing the failures, or nil if there were none.
func (r *Result) Err() error {
	if n := r.Errors.Total(); n > 0 {
		return fmt.Errorf("%d of %d requests failed (%+v): %s", n, n+r.Requests, r.Errors, strings.Join(r.Samples, "; "))
	}
	return nil
}

const maxSamples = 5

// Run performs the load described by c and returns when the duration or
// request cap is reached, or ctx is done. It returns an error only for a
// bad Config; failed requests are counted in Result.Errors.
func Run(ctx context.Context, c Config) (*Result, error) {
	if c.Addr == "" {
		return nil, errors.New("load: no address")
	}
	if c.Duration <= 0 && c.MaxRequests <= 0 {
		return nil, errors.New("load: unbounded run: set Duration or MaxRequests")
	}
	if c.Conns <= 0 {
		c.Conns = 1
	}
	if c.Conns > MaxConns {
		return nil, fmt.Errorf("load: %d connections, at most %d", c.Conns, MaxConns)
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	if c.IOTimeout <= 0 {
		c.IOTimeout = 30 * time.Second
	}
	if len(c.Requests) == 0 {
		c.Requests = []Request{{Path: "/"}}
	}
	reqs := make([]preparedRequest, len(c.Requests))
	for i, r := range c.Requests {
		if !strings.HasPrefix(r.Path, "/") {
			return nil, fmt.Errorf("load: path %q does not start with /", r.Path)
		}
		reqs[i].Request = r
		reqs[i].wire = buildRequest(c.Addr, r.Path, c.KeepAlive)
		if r.SHA256 != "" {
			d, err := hex.DecodeString(r.SHA256)
			if err != nil || len(d) != sha256.Size {
				return nil, fmt.Errorf("load: bad sha256 %q for %s", r.SHA256, r.Path)
			}
			copy(reqs[i].digest[:], d)
			reqs[i].checkDigest = true
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &runner{ctx: ctx, cfg: c, reqs: reqs, start: time.Now()}
	if c.Duration > 0 {
		r.end = r.start.Add(c.Duration)
	}
	workers := make([]*worker, c.Conns)
	for i := range workers {
		workers[i] = newWorker(r)
	}
	stop := context.AfterFunc(ctx, func() {
		r.stopped.Store(true)
		for _, w := range workers {
			w.interrupt()
		}
	})
	defer stop()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run()
		}()
	}
	wg.Wait()
	elapsed := time.Since(r.start)

	res := &Result{Elapsed: elapsed, Hist: &Histogram{}}
	for _, w := range workers {
		res.Requests += w.ok
		res.Errors.add(w.errs)
		res.ConnectRetries += w.retries
		res.SlowConnects += w.slow
		res.Connections += w.conns
		res.Bytes += w.bytes
		res.Hist.Merge(&w.hist)
		for _, s := range w.samples {
			if len(res.Samples) < maxSamples {
				res.Samples = append(res.Samples, s)
			}
		}
	}
	if s := elapsed.Seconds(); s > 0 {
		res.ReqPerSec = float64(res.Requests) / s
		res.MBPerSec = float64(res.Bytes) / s / 1e6
	}
	h := res.Hist
	res.P50, res.P90, res.P99 = h.Quantile(0.50), h.Quantile(0.90), h.Quantile(0.99)
	res.Max, res.Mean = h.Max(), h.Mean()
	return res, nil
}

type preparedRequest struct {
	Request
	wire        []byte
	digest      [sha256.Size]byte
	checkDigest bool
}

func buildRequest(addr, path string, keepAlive bool) []byte {
	var b strings.Builder
	b.WriteString("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: jiege-load\r\nAccept: */*\r\n")
	if !keepAlive {
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

type runner struct {
	ctx     context.Context
	cfg     Config
	reqs    []preparedRequest
	start   time.Time
	end     time.Time // zero: no time bound
	issued  atomic.Int64
	stopped atomic.Bool
}

// next returns the index of the next request to send, or -1 when the run is over.
func (r *runner) next(now time.Time) int {
	if r.stopped.Load() || (!r.end.IsZero() && !now.Before(r.end)) {
		return -1
	}
	n := r.issued.Add(1)
	if r.cfg.MaxRequests > 0 && n > r.cfg.MaxRequests {
		return -1
	}
	return int((n - 1) % int64(len(r.reqs)))
}

// errClass is a request failure's class; see Errors.
type errClass int

const (
	classReset errClass = iota
	classTimeout
	classBadStatus
	classBadResponse
	classBadBody
)

type reqError struct {
	class errClass
	msg   string
}

func (e *reqError) Error() string { return e.msg }

func fail(c errClass, format string, args ...any) error {
	return &reqError{class: c, msg: fmt.Sprintf(format, args...)}
}

// ioFail classifies a read or write error.
func ioFail(err error, what string) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fail(classTimeout, "%s: timeout", what)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fail(classReset, "%s: connection closed", what)
	}
	return fail(classReset, "%s: %v", what, err)
}

// worker owns one connection at a time and its own counters, merged at the end.
type worker struct {
	r    *runner
	mu   sync.Mutex // guards conn against interrupt
	conn net.Conn
	br   *bufReader
	buf  []byte // scratch for hashed or verified bodies
	body []byte // whole body when Verify is set
	sha  hash.Hash
	sum  [sha256.Size]byte
	// deadline is the I/O deadline last set on conn.
	deadline time.Time

	ok, retries, slow, conns, bytes int64
	errs                            Errors
	samples                         []string
	hist                            Histogram
}

func newWorker(r *runner) *worker {
	return &worker{r: r, br: newBufReader(32 << 10), buf: make([]byte, 64<<10), sha: sha256.New()}
}

func (w *worker) interrupt() {
	w.mu.Lock()
	if w.conn != nil {
		w.conn.SetDeadline(time.Unix(1, 0))
	}
	w.mu.Unlock()
}

func (w *worker) setConn(c net.Conn) {
	w.mu.Lock()
	if w.conn != nil {
		w.conn.Close()
	}
	w.conn = c
	stopped := w.r.stopped.Load()
	w.mu.Unlock()
	if c != nil {
		w.br.reset(c)
		w.deadline = time.Time{}
		if stopped {
			c.SetDeadline(time.Unix(1, 0))
		}
	}
}

func (w *worker) record(err error) {
	if w.r.cfg.StopOnError {
		w.r.stopped.Store(true)
	}
	var re *reqError
	if !errors.As(err, &re) {
		re = &reqError{class: classReset, msg: err.Error()}
	}
	switch re.class {
	case classReset:
		w.errs.Reset++
	case classTimeout:
		w.errs.Timeout++
	case classBadStatus:
		w.errs.BadStatus++
	case classBadResponse:
		w.errs.BadResponse++
	case classBadBody:
		w.errs.BadBody++
	}
	if len(w.samples) < maxSamples {
		w.samples = append(w.samples, re.msg)
	}
}

func (w *worker) run() {
	defer w.setConn(nil)
	cfg := &w.r.cfg
	for {
		now := time.Now()
		i := w.r.next(now)
		if i < 0 {
			return
		}
		if w.conn == nil {
			if !w.dial() {
				if w.r.stopped.Load() {
					return
				}
				w.errs.ConnectFail++
				if cfg.StopOnError {
					w.r.stopped.Store(true)
				}
				continue
			}
			now = time.Now()
		}
		// Setting a deadline costs a timer update: refresh it only when
		// less than half of IOTimeout is left.
		if w.deadline.Sub(now) < cfg.IOTimeout/2 {
			w.deadline = now.Add(cfg.IOTimeout)
			w.conn.SetDeadline(w.deadline)
		}
		keep, err := w.do(&w.r.reqs[i])
		if err != nil {
			if w.r.stopped.Load() {
				w.setConn(nil)
				return
			}
			w.record(err)
			w.setConn(nil)
			continue
		}
		w.ok++
		w.hist.Record(time.Since(now))
		if !keep || !cfg.KeepAlive {
			if !cfg.KeepAlive {
				w.awaitClose()
			}
			w.setConn(nil)
		}
	}
}

// DialStats tells how a connection was obtained.
type DialStats struct {
	Retries int  // failed attempts before the one that succeeded
	Slow    bool // the successful attempt took over 900 ms (a dropped SYN retried)
}

// Dial connects to addr within timeout, retrying refused or failed
// attempts with a growing pause; ctx cancels it.
func Dial(ctx context.Context, addr string, timeout time.Duration) (net.Conn, DialStats, error) {
	var st DialStats
	limit := time.Now().Add(timeout)
	backoff := 10 * time.Millisecond
	for {
		start := time.Now()
		d := net.Dialer{Deadline: limit}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			st.Slow = time.Since(start) > 900*time.Millisecond
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetNoDelay(true)
			}
			return c, st, nil
		}
		if ctx.Err() != nil || time.Now().Add(backoff).After(limit) {
			return nil, st, err
		}
		st.Retries++
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, st, ctx.Err()
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// dial connects the worker, counting retries and slow connects.
func (w *worker) dial() bool {
	c, st, err := Dial(w.r.ctx, w.r.cfg.Addr, w.r.cfg.ConnectTimeout)
	w.retries += int64(st.Retries)
	if err != nil {
		if len(w.samples) < maxSamples && w.r.ctx.Err() == nil {
			w.samples = append(w.samples, fmt.Sprintf("connect: %v", err))
		}
		return false
	}
	if st.Slow {
		w.slow++
	}
	w.conns++
	w.setConn(c)
	return true
}

// awaitClose waits briefly for the server to close a "Connection: close"
// connection, so that TIME_WAIT lands on the server side and a long
// fresh-connection run does not exhaust the client's ephemeral ports.
func (w *worker) awaitClose() {
	w.conn.SetReadDeadline(time.Now().Add(time.Second))
	w.br.discardUntilEOF()
}

// do sends one request and reads its response. keep reports whether the
// connection may be reused.
func (w *worker) do(p *preparedRequest) (keep bool, err error) {
	if _, err := w.conn.Write(p.wire); err != nil {
		return false, ioFail(err, "write")
	}
	resp, err := w.br.readHead()
	if err != nil {
		return false, err
	}
	if resp.status != 200 {
		return false, fail(classBadStatus, "GET %s: status %d", p.Path, resp.status)
	}
	verify := w.r.cfg.Verify
	hashing := p.checkDigest
	if hashing {
		w.sha.Reset()
	}
	w.body = w.body[:0]
	var n int64
	consume := func(b []byte) {
		n += int64(len(b))
		if hashing {
			w.sha.Write(b)
		}
		if verify != nil {
			w.body = append(w.body, b...)
		}
	}
	if resp.chunked {
		err = w.br.readChunked(consume, w.buf)
	} else if resp.length >= 0 {
		if hashing || verify != nil {
			err = w.br.readN(resp.length, consume, w.buf)
		} else {
			err = w.br.discard(resp.length)
			n = resp.length
		}
	} else {
		// No length: the body ends when the server closes.
		err = w.br.readToEOF(consume, w.buf)
		resp.close = true
	}
	if err != nil {
		return false, err
	}
	w.bytes += n
	if p.Size > 0 && n != p.Size {
		return false, fail(classBadBody, "GET %s: %d body bytes, want %d", p.Path, n, p.Size)
	}
	if hashing && [sha256.Size]byte(w.sha.Sum(w.sum[:0])) != p.digest {
		return false, fail(classBadBody, "GET %s: sha256 mismatch", p.Path)
	}
	if verify != nil {
		if err := verify(p.Path, w.body); err != nil {
			return false, fail(classBadBody, "GET %s: %v", p.Path, err)
		}
	}
	return !resp.close, nil
}
