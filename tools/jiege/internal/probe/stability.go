package probe

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/load"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// Bars are the published stability bars; every one must pass with zero errors.
type Bars struct {
	KeepAlive  int // sequential keep-alive requests on one connection
	Concurrent int // connections open at the same time, each answered
	Fresh      int // requests, each on a fresh connection
	Checked    int // concurrent requests on fresh connections, bodies checksummed
}

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

	var lines []string
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
	if f := bar("keepalive", load.Config{Conns: 1, KeepAlive: true, MaxRequests: int64(bars.KeepAlive), Requests: []load.Request{index}}); f != nil {
		return *f
	}
	n, retries, err := concurrent(ctx, t.Addr, bars.Concurrent, ref.Body)
	m["concurrent_ok"], m["concurrent_connect_retries"] = float64(n), float64(retries)
	if err != nil {
		return fail(report.ClassStabilityErrors, "%d concurrent connections: %d answered; %v", bars.Concurrent, n, err)
	}
	lines = append(lines, fmt.Sprintf("concurrent %d/%d (%d connect retries)", n, bars.Concurrent, retries))
	if f := bar("fresh", load.Config{Conns: 4, MaxRequests: int64(bars.Fresh), Requests: []load.Request{index}}); f != nil {
		return *f
	}
	if f := bar("checked", load.Config{Conns: bars.Checked, MaxRequests: int64(bars.Checked), Requests: checked}); f != nil {
		return *f
	}
	s := report.Passf(report.StageStability, time.Since(start), "%s; zero errors", strings.Join(lines, ", "))
	s.Metrics = m
	return s
}

// concurrent opens n connections at once, waits until all are open, then
// sends GET / on every one of them at the same time and checks each body.
// It returns how many were answered correctly and the connect retries.
func concurrent(ctx context.Context, addr string, n int, want []byte) (int, int, error) {
	if n <= 0 {
		return 0, 0, nil
	}
	conns := make([]net.Conn, n)
	errs := make([]error, n)
	retries := make([]int, n)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, st, err := load.Dial(ctx, addr, connectTimeout)
			conns[i], errs[i] = c, err
			retries[i] = st.Retries
			if st.Slow {
				retries[i]++
			}
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	total := 0
	for _, r := range retries {
		total += r
	}
	for i, err := range errs {
		if err != nil {
			return 0, total, fmt.Errorf("connection %d: connect: %v", i, err)
		}
	}
	ok := make([]bool, n)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d, has := ctx.Deadline(); has {
				c.SetDeadline(d)
			}
			pc := &conn{addr: addr, c: c, br: newReader(c)}
			r, err := pc.do("GET", "/", "", nil)
			switch {
			case err != nil:
				errs[i] = err
			case r.Status != 200:
				errs[i] = fmt.Errorf("status %d", r.Status)
			case !bytes.Equal(r.Body, want):
				errs[i] = fmt.Errorf("body differs")
			default:
				ok[i] = true
			}
		}()
	}
	wg.Wait()
	good := 0
	var first error
	for i := range ok {
		if ok[i] {
			good++
		} else if first == nil {
			first = fmt.Errorf("connection %d: %v", i, errs[i])
		}
	}
	return good, total, first
}
