// Package load owns jiege's HTTP/1.1 load generator: in-process, loopback
// only, bounded in time and count. It speaks HTTP over non-blocking sockets
// driven by epoll event loops (one per processor, as wrk does), with
// prebuilt requests and an allocation-free response parser, so that it is
// never the bottleneck: net/http's client allocates per request, and Go's
// netpoller costs a failed read and a goroutine switch per request.
package load

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"runtime"
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
	Addr     string    // host:port; the host must be a loopback address
	Requests []Request // fetched round robin; default GET /
	Conns    int       // concurrent connections; default 1
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
	BadStatus   int64 `json:"bad_status"`   // a status other than 200
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
	if err := checkLoopback(c.Addr); err != nil {
		return nil, err
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

	r := &runner{cfg: c, reqs: reqs, start: time.Now()}
	if c.Duration > 0 {
		r.end = r.start.Add(c.Duration)
	}
	stop := context.AfterFunc(ctx, func() { r.stopped.Store(true) })
	defer stop()
	// One event loop per processor but one, each owning a share of the
	// connections. With a processor left idle, the runtime's sysmon leaves
	// the loops' processors alone while they block in epoll_wait; with none
	// idle it takes them away after 20 µs, again and again. On 2 cores
	// against nginx, one loop beat two in 4 of 4 alternating runs at 100
	// connections and used about 15% less CPU per request.
	n := max(1, min(runtime.GOMAXPROCS(0)-1, c.Conns))
	engines := make([]*engine, n)
	for i := range engines {
		conns := c.Conns / n
		if i < c.Conns%n {
			conns++
		}
		e, err := newEngine(r, conns)
		if err != nil {
			for _, e := range engines[:i] {
				e.close()
			}
			return nil, err
		}
		engines[i] = e
	}
	var wg sync.WaitGroup
	for _, e := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			e.run()
		}()
	}
	wg.Wait()
	elapsed := time.Since(r.start)

	res := &Result{Elapsed: elapsed, Hist: &Histogram{}}
	for _, e := range engines {
		e.close()
		st := &e.stats
		res.Requests += st.ok
		res.Errors.add(st.errs)
		res.ConnectRetries += st.retries
		res.SlowConnects += st.slow
		res.Connections += st.conns
		res.Bytes += st.bytes
		res.Hist.Merge(&st.hist)
		for _, s := range st.samples {
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

// stats are one engine's counters, merged when the run ends.
type stats struct {
	ok, retries, slow, conns, bytes int64
	errs                            Errors
	samples                         []string
	hist                            Histogram
}

func (st *stats) sample(msg string) {
	if len(st.samples) < maxSamples {
		st.samples = append(st.samples, msg)
	}
}

func (st *stats) record(err *reqError) {
	switch err.class {
	case classReset:
		st.errs.Reset++
	case classTimeout:
		st.errs.Timeout++
	case classBadStatus:
		st.errs.BadStatus++
	case classBadResponse:
		st.errs.BadResponse++
	case classBadBody:
		st.errs.BadBody++
	}
	st.sample(err.msg)
}

// DialStats tells how a connection was obtained.
type DialStats struct {
	Retries int  // failed attempts before the one that succeeded
	Slow    bool // the successful attempt took over 900 ms (a dropped SYN retried)
}

// checkLoopback refuses addresses off this machine: jiege only ever talks
// to QEMU's forwarded ports and host-side oracles on loopback.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("load: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("load: address %q is not a numeric loopback address", addr)
	}
	return nil
}

// Dial connects to addr (loopback only) within timeout, retrying refused
// or failed attempts with a growing pause; ctx cancels it.
func Dial(ctx context.Context, addr string, timeout time.Duration) (net.Conn, DialStats, error) {
	var st DialStats
	if err := checkLoopback(addr); err != nil {
		return nil, st, err
	}
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
