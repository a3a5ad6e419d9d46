package probe

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/load"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// Bars are the published stability bars; every one must pass with zero errors.
type Bars struct {
	KeepAlive  int // sequential keep-alive requests on one connection
	Concurrent int // connections open at once, each answering requests sent to all at once
	Fresh      int // requests, each on a fresh connection
	Checked    int // requests in flight at once, one per connection, bodies checksummed
}

// concurrentRounds is how many times every connection of the concurrent
// bar is sent a request at the same moment.
const concurrentRounds = 2

// DefaultBars are the published bars.
var DefaultBars = Bars{KeepAlive: 3000, Concurrent: 50, Fresh: 320, Checked: 100}

// connectTimeout is the connect timeout under load: QEMU's hostfwd listens
// with a backlog of 1, so SYNs are dropped and the host's TCP retries them
// 1, 3, 7 and 15 s after the first.
const connectTimeout = 20 * time.Second

// checkedMax is the largest file the checksummed bar fetches.
const checkedMax = 2 << 20

// Stability runs the bars against t.Addr: the keep-alive bar, the
// concurrent-connections bar, the fresh-connections bar, and the
// checksummed concurrent bar. Any failed request fails the stage. Connect
// retries (refused or slow connects the dialer recovered from) are
// reported in the metrics, not counted as errors; a connection closed or
// reset mid-response, a bad status or a wrong body is an error.
//
// The concurrent bars connect all their connections at once. With QEMU's
// hostfwd listening with a backlog of 1, such a burst failed even Debian's
// Linux (50 simultaneous connects: 29 reset after 90 s), which is why jiege
// widens that backlog (package qemu) before probing.
func Stability(ctx context.Context, t Target, bars Bars) report.Stage {
	ctx, cancel := context.WithTimeout(ctx, StabilityTimeout)
	defer cancel()
	start := time.Now()
	m := map[string]float64{}
	fail := func(class, format string, args ...any) report.Stage {
		s := report.Failf(report.StageStability, class, time.Since(start), format, args...)
		s.Metrics = m
		return s
	}
	// The reference body of / comes from one GET; every later answer must equal it.
	ref, err := get(ctx, t.Addr, "/")
	if err != nil {
		return fail(classOf(err), "GET /: %v", err)
	}
	if ref.Status != 200 {
		return fail(report.ClassBadStatus, "GET /: status %d", ref.Status)
	}
	sum := sha256.Sum256(ref.Body)
	index := load.Request{Path: "/", Size: int64(len(ref.Body)), SHA256: hex.EncodeToString(sum[:])}
	checked := []load.Request{index}
	for _, f := range t.Files {
		if f.Size <= checkedMax && f.Size > 0 && f.SHA256 != "" {
			checked = append(checked, load.Request{Path: f.URLPath, Size: f.Size, SHA256: f.SHA256})
		}
	}

	// A server configured with keep-alive off (nginx's keepalive_timeout
	// 0) is measured with the requests it allows: the keep-alive bar as
	// sequential fresh connections, the concurrent bars one request per
	// connection.
	off, err := keepAliveOff(ctx, t.Addr)
	if err != nil {
		return fail(classOf(err), "GET / on a keep-alive connection: %v", err)
	}
	var lines []string
	if off {
		lines = append(lines, "keep-alive off in the server's configuration (it answers `Connection: close`): measured with fresh connections")
	}
	// bar runs one load bar and returns a failed stage, or nil.
	bar := func(name string, cfg load.Config) *report.Stage {
		if cfg.MaxRequests <= 0 {
			return nil
		}
		cfg.Addr = t.Addr
		cfg.ConnectTimeout = connectTimeout
		cfg.IOTimeout = 30 * time.Second
		cfg.StopOnError = true
		res, err := load.Run(ctx, cfg)
		if err != nil {
			s := fail(report.ClassInternal, "%s: %v", name, err)
			return &s
		}
		answersFor(ctx, t.Addr).recordLoad(res)
		m[name+"_ok"] = float64(res.Requests)
		m[name+"_errors"] = float64(res.Errors.Total())
		m[name+"_connect_retries"] = float64(res.ConnectRetries + res.SlowConnects)
		m[name+"_req_per_s"] = res.ReqPerSec
		if err := res.Err(); err != nil {
			s := fail(report.ClassStabilityErrors, "%s bar: %v", name, err)
			return &s
		}
		if res.Requests != cfg.MaxRequests {
			s := fail(report.ClassTimeout, "%s bar: %d of %d requests done before the deadline", name, res.Requests, cfg.MaxRequests)
			return &s
		}
		lines = append(lines, fmt.Sprintf("%s %d/%d (%.0f req/s, %d connect retries)",
			name, res.Requests, cfg.MaxRequests, res.ReqPerSec, res.ConnectRetries+res.SlowConnects))
		return nil
	}
	seq := load.Config{Conns: 1, KeepAlive: true, MaxRequests: int64(bars.KeepAlive), Requests: []load.Request{index}}
	rounds := concurrentRounds
	if off {
		seq.KeepAlive, seq.MaxRequests, rounds = false, int64(min(bars.KeepAlive, bars.Fresh)), 1
	}
	if f := bar("keepalive", seq); f != nil {
		return *f
	}
	// together runs one of the concurrent bars.
	together := func(name string, conns, rounds int, reqs []load.Request) *report.Stage {
		if conns <= 0 {
			return nil
		}
		ok, retries, err := concurrent(ctx, t.Addr, conns, rounds, reqs, off)
		m[name+"_ok"], m[name+"_connect_retries"] = float64(ok), float64(retries)
		if err != nil {
			s := fail(report.ClassStabilityErrors, "%s bar (%d connections): %d requests answered, then %v", name, conns, ok, err)
			return &s
		}
		lines = append(lines, fmt.Sprintf("%s %d connections x %d (%d connect retries)", name, conns, rounds, retries))
		return nil
	}
	if f := together("concurrent", bars.Concurrent, rounds, []load.Request{index}); f != nil {
		return *f
	}
	if f := bar("fresh", load.Config{Conns: 4, MaxRequests: int64(bars.Fresh), Requests: []load.Request{index}}); f != nil {
		return *f
	}
	if f := together("checked", bars.Checked, 1, checked); f != nil {
		return *f
	}
	s := report.Passf(report.StageStability, time.Since(start), "%s; zero errors", strings.Join(lines, ", "))
	s.Metrics = m
	return s
}

// concurrent connects n connections at once and keeps them all open; then,
// rounds times, it sends a request on every connection at the same moment
// (connection i fetches reqs[i%len(reqs)]) and checks every answer's
// status, size and sha256. It returns how many requests were answered
// correctly and the connect retries. closeOK accepts answers that close
// the connection (a server with keep-alive off; rounds is then 1).
func concurrent(ctx context.Context, addr string, n, rounds int, reqs []load.Request, closeOK bool) (int, int, error) {
	conns := make([]*conn, n)
	errs := make([]error, n)
	stats := make([]load.DialStats, n)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	each := func(f func(i int) error) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = f(i)
			}()
		}
		wg.Wait()
	}
	each(func(i int) (err error) {
		conns[i], stats[i], err = dialStats(ctx, addr)
		return err
	})
	retries := 0
	for _, st := range stats {
		retries += st.Retries
		if st.Slow {
			retries++
		}
	}
	for i, err := range errs {
		if err != nil {
			return 0, retries, fmt.Errorf("connection %d: %v", i, err)
		}
	}
	ok := 0
	for round := 0; round < rounds; round++ {
		each(func(i int) error { return fetch(conns[i], reqs[i%len(reqs)], closeOK) })
		for i, err := range errs {
			if err != nil {
				return ok, retries, fmt.Errorf("round %d, connection %d: %v", round+1, i, err)
			}
			ok++
		}
	}
	return ok, retries, nil
}

// fetch GETs q on c and checks status, size and digest, and that the
// connection stays open unless closeOK.
func fetch(c *conn, q load.Request, closeOK bool) error {
	h := sha256.New()
	r, err := c.do("GET", q.Path, "", h)
	switch {
	case err != nil:
		return err
	case r.Status != 200:
		return fmt.Errorf("GET %s: status %d", q.Path, r.Status)
	case q.Size > 0 && r.N != q.Size:
		return fmt.Errorf("GET %s: %d bytes, want %d", q.Path, r.N, q.Size)
	case q.SHA256 != "" && hex.EncodeToString(h.Sum(nil)) != q.SHA256:
		return fmt.Errorf("GET %s: sha256 mismatch", q.Path)
	}
	if v, _ := r.Get("Connection"); strings.EqualFold(v, "close") && !closeOK {
		return fmt.Errorf("GET %s: the server closed a keep-alive connection", q.Path)
	}
	return nil
}

// keepAliveOff reports whether the server answers a keep-alive HTTP/1.1
// GET / with "Connection: close".
func keepAliveOff(ctx context.Context, addr string) (bool, error) {
	c, err := dial(ctx, addr)
	if err != nil {
		return false, err
	}
	defer c.Close()
	r, err := c.do("GET", "/", "", nil)
	if err != nil {
		return false, err
	}
	v, _ := r.Get("Connection")
	return strings.EqualFold(v, "close"), nil
}
