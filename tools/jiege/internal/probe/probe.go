// Package probe owns jiege's verification stages over HTTP: port open,
// first 200, nginx fingerprint, content, stability and survival. Each stage
// runs against a base address (127.0.0.1:port), honours the context's
// deadline (adding its own default), and returns a report.Stage whose
// failure class names what went wrong.
package probe

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// File is a file of the root filesystem that the server must serve; the
// same fields as rootfs.File, so one converts to the other.
type File struct {
	URLPath string
	Size    int64
	SHA256  string // hex
	Content []byte // only for small files
}

// Target is what the stages probe.
type Target struct {
	Addr string // 127.0.0.1:port of the server under test
	// Oracle, if set, is the address of a reference nginx serving the same
	// root filesystem (nginx under qemu-riscv64); the fingerprint compares
	// the target's responses with its responses.
	Oracle string
	// NginxVersion, if set, is the version the Server header must name.
	NginxVersion string
	Files        []File
	Nonce        *File // a file generated for this run only
	// OwnRoot says the target serves its own root filesystem (an
	// attempt): only "/" is known to be the same file as the oracle's.
	OwnRoot bool
	// Seed seeds the fingerprint's random requests; 0 draws one.
	Seed uint64
}

// Default stage timeouts, used when the context has a later deadline.
const (
	PortOpenTimeout    = 90 * time.Second
	First200Timeout    = 90 * time.Second
	FingerprintTimeout = 240 * time.Second
	ContentTimeout     = 120 * time.Second
	StabilityTimeout   = 300 * time.Second
	SurvivalTimeout    = 15 * time.Second
)

// pollEvery is how often polling stages start a new attempt; once an
// attempt has ended within quickAnswer, every fastPollEvery.
const (
	pollEvery     = 250 * time.Millisecond
	quickAnswer   = 100 * time.Millisecond
	fastPollEvery = 10 * time.Millisecond
)

// attemptTimeout bounds one poll attempt's wait for response bytes.
const attemptTimeout = 5 * time.Second

// maxInFlight bounds the attempts of one poll running at once.
const maxInFlight = 2 * int(attemptTimeout/pollEvery)

// poll starts attempt every pollEvery without waiting for earlier attempts
// to end: before the guest's network is up, QEMU's hostfwd accepts and then
// holds a connection for seconds, and the time of the first success must
// not depend on that. Once an attempt ends quickly (the guest answered,
// if only with a reset because nothing listens yet), attempts no longer
// pile up and start every fastPollEvery, so that the first success is
// seen within that of the server's readiness, not within pollEvery. It
// returns when an attempt first succeeded (zero if none did before ctx
// ended), how many attempts started, and the last error.
func poll(ctx context.Context, attempt func(context.Context) error) (time.Time, int, error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel() // ends the attempts still running
		wg.Wait()
	}()
	type result struct {
		err  error
		took time.Duration
	}
	results := make(chan result, maxInFlight)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	started, inFlight, fast := 0, 0, false
	var last error
	start := func() {
		started++
		inFlight++
		wg.Add(1)
		go func() {
			defer wg.Done()
			actx, acancel := context.WithTimeout(ctx, attemptTimeout)
			defer acancel()
			t0 := time.Now()
			err := attempt(actx)
			results <- result{err, time.Since(t0)}
		}()
	}
	start()
	for {
		select {
		case r := <-results:
			inFlight--
			err := r.err
			if err == nil {
				return time.Now(), started, nil
			}
			if !fast && r.took < quickAnswer {
				fast = true
				tick.Reset(fastPollEvery)
			}
			// An attempt cut short by the deadline says less than an
			// earlier answer did.
			if last == nil || classOf(err) != report.ClassTimeout {
				last = err
			}
		case <-tick.C:
			if inFlight < maxInFlight {
				start()
			}
		case <-ctx.Done():
			if last == nil {
				last = ctx.Err()
			}
			return time.Time{}, started, last
		}
	}
}

// PortOpen waits until the port accepts a TCP connection AND answers an
// HTTP request with at least one byte. A bare connect proves nothing:
// QEMU's user-net hostfwd accepts on the host side even when the guest has
// no network or no listener, and then closes the connection.
func PortOpen(ctx context.Context, addr string) report.Stage {
	ctx, cancel := context.WithTimeout(ctx, PortOpenTimeout)
	defer cancel()
	start := time.Now()
	var connected atomic.Int64
	at, _, err := poll(ctx, func(ctx context.Context) error {
		n, err := firstBytes(ctx, addr)
		var oe *net.OpError
		if err != nil && (!errors.As(err, &oe) || oe.Op != "dial") {
			connected.Add(1)
		}
		if err == nil && n == 0 {
			err = errors.New("no bytes")
		}
		return err
	})
	if err == nil {
		s := report.Passf(report.StagePortOpen, at.Sub(start), "%s answered HTTP", addr)
		s.Metrics = map[string]float64{"accepted_without_answer": float64(connected.Load())}
		return s
	}
	d := time.Since(start)
	if n := connected.Load(); n > 0 {
		return report.Failf(report.StagePortOpen, report.ClassNoHTTPResponse, d,
			"TCP connects were accepted %d times but no HTTP response byte came (hostfwd without a guest listener?): %v", n, err)
	}
	return report.Failf(report.StagePortOpen, report.ClassConnectRefused, d, "no connection to %s: %v", addr, err)
}

// firstBytes connects once, sends GET / and returns how many bytes came back
// before the server closed or went quiet.
func firstBytes(ctx context.Context, addr string) (int, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	// Cancellation (another attempt won) must end a blocked read too.
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+addr+"\r\nUser-Agent: jiege-probe\r\nConnection: close\r\n\r\n"); err != nil {
		return 0, fmt.Errorf("write: %w", err)
	}
	var b [1]byte
	n, err := io.ReadFull(c, b[:])
	if n > 0 {
		return n, nil
	}
	return 0, fmt.Errorf("read: %w", err)
}

// get fetches path on a fresh connection.
func get(ctx context.Context, addr, path string) (*response, error) {
	c, err := dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.do("GET", path, "Connection: close\r\n", nil)
}

// getRecorded is get that also returns the first bytes that came, up to
// quoteBytes, whether or not they made a response.
func getRecorded(ctx context.Context, addr, path string) (*response, []byte, error) {
	c, err := dial(ctx, addr)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	var first prefix
	c.br = bufio.NewReaderSize(io.TeeReader(c.c, &first), 64<<10)
	r, err := c.do("GET", path, "Connection: close\r\n", nil)
	return r, first.b, err
}

// quoteBytes is how many of an answer's first bytes a detail quotes.
const quoteBytes = 200

// prefix keeps the first quoteBytes bytes written to it.
type prefix struct{ b []byte }

func (p *prefix) Write(b []byte) (int, error) {
	if n := quoteBytes - len(p.b); n > 0 {
		p.b = append(p.b, b[:min(n, len(b))]...)
	}
	return len(b), nil
}

// First200 polls GET / until it answers 200 or the deadline passes, and
// returns the time the first 200 arrived (zero on failure), accurate to
// fastPollEvery once the guest answers connections (see poll). A failure
// quotes the status line and the first bytes of the last answer that came.
func First200(ctx context.Context, addr string) (report.Stage, time.Time) {
	ctx, cancel := context.WithTimeout(ctx, First200Timeout)
	defer cancel()
	start := time.Now()
	var mu sync.Mutex
	var answer []byte // the first bytes of the last answer
	at, tries, err := poll(ctx, func(ctx context.Context) error {
		r, first, err := getRecorded(ctx, addr, "/")
		if len(first) > 0 {
			mu.Lock()
			answer = first
			mu.Unlock()
		}
		if err == nil && r.Status != 200 {
			err = perr(report.ClassBadStatus, "GET / answered %d", r.Status)
		}
		return err
	})
	if err == nil {
		s := report.Passf(report.StageFirst200, at.Sub(start), "200 after %d attempts", tries)
		s.Metrics = map[string]float64{"attempts": float64(tries)}
		return s, at
	}
	class := classOf(err)
	if class == report.ClassTimeout {
		class = report.ClassNoHTTPResponse
	}
	s := report.Failf(report.StageFirst200, class, time.Since(start), "no 200 from GET / in %d attempts; last: %v", tries, err)
	mu.Lock()
	defer mu.Unlock()
	if len(answer) > 0 {
		status, _, _ := strings.Cut(string(answer), "\n")
		s.Detail += fmt.Sprintf("; the last answer's status line %q, its first bytes %q", strings.TrimSuffix(status, "\r"), answer)
	} else {
		s.Detail += "; no byte came in any attempt"
	}
	return s, time.Time{}
}

// Survival checks that the server still answers GET / with 200, polling
// briefly, after the load of the stability stage.
func Survival(ctx context.Context, addr string) report.Stage {
	ctx, cancel := context.WithTimeout(ctx, SurvivalTimeout)
	defer cancel()
	s, _ := First200(ctx, addr)
	s.Name = report.StageSurvival
	if !s.Passed() {
		s.Class = report.ClassServerDied
	}
	return s
}

// Content fetches every file and the nonce on one keep-alive connection
// (reconnecting if the server closes it) and compares them with the root
// filesystem: byte-exact when the content is known, else size and sha256,
// streamed so that large files are never held in memory.
func Content(ctx context.Context, t Target) report.Stage {
	ctx, cancel := context.WithTimeout(ctx, ContentTimeout)
	defer cancel()
	start := time.Now()
	files := append([]File(nil), t.Files...)
	if t.Nonce != nil {
		files = append(files, *t.Nonce)
	}
	if len(files) == 0 {
		return report.Failf(report.StageContent, report.ClassInternal, 0, "no files to check")
	}
	var c *conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	var total int64
	for _, f := range files {
		if c == nil {
			var err error
			if c, err = dial(ctx, t.Addr); err != nil {
				return report.Failf(report.StageContent, classOf(err), time.Since(start), "%s: %v", f.URLPath, err)
			}
		}
		h := sha256.New()
		r, err := c.do("GET", f.URLPath, "", h)
		if err != nil {
			return report.Failf(report.StageContent, classOf(err), time.Since(start), "%v", err)
		}
		if r.Status != 200 {
			return report.Failf(report.StageContent, report.ClassContentMismatch, time.Since(start), "GET %s: status %d", f.URLPath, r.Status)
		}
		if r.N != f.Size {
			return report.Failf(report.StageContent, report.ClassContentMismatch, time.Since(start), "GET %s: %d bytes, want %d", f.URLPath, r.N, f.Size)
		}
		if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, f.SHA256) {
			return report.Failf(report.StageContent, report.ClassContentMismatch, time.Since(start), "GET %s: sha256 %s, want %s", f.URLPath, got, f.SHA256)
		}
		total += r.N
		if v, _ := r.Get("Connection"); strings.EqualFold(v, "close") {
			c.Close()
			c = nil
		}
	}
	if t.Nonce != nil && t.Nonce.Content != nil {
		// The digest already proves it; fetch once more into memory so a
		// failure names the first differing byte.
		r, err := get(ctx, t.Addr, t.Nonce.URLPath)
		if err != nil {
			return report.Failf(report.StageContent, classOf(err), time.Since(start), "nonce: %v", err)
		}
		if i := firstDiff(r.Body, t.Nonce.Content); i >= 0 {
			return report.Failf(report.StageContent, report.ClassContentMismatch, time.Since(start), "nonce %s differs at byte %d", t.Nonce.URLPath, i)
		}
	}
	s := report.Passf(report.StageContent, time.Since(start), "%d files, %d bytes, all sha256 equal", len(files), total)
	s.Metrics = map[string]float64{"files": float64(len(files)), "bytes": float64(total)}
	return s
}

// firstDiff returns the first index where a and b differ, or -1.
func firstDiff(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
