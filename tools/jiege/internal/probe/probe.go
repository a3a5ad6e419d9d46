// Package probe owns jiege's verification stages over HTTP: port open,
// first 200, nginx fingerprint, content, stability and survival. Each stage
// runs against a base address (127.0.0.1:port), honours the context's
// deadline (adding its own default), and returns a report.Stage whose
// failure class names what went wrong.
package probe

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
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
}

// Default stage timeouts, used when the context has a later deadline.
const (
	PortOpenTimeout    = 90 * time.Second
	First200Timeout    = 90 * time.Second
	FingerprintTimeout = 60 * time.Second
	ContentTimeout     = 120 * time.Second
	StabilityTimeout   = 300 * time.Second
	SurvivalTimeout    = 15 * time.Second
)

// pollInterval is the pause between attempts of polling stages.
const pollInterval = 100 * time.Millisecond

// attemptTimeout bounds one poll attempt's wait for response bytes.
const attemptTimeout = 5 * time.Second

// PortOpen waits until the port accepts a TCP connection AND answers an
// HTTP request with at least one byte. A bare connect proves nothing:
// QEMU's user-net hostfwd accepts on the host side even when the guest has
// no network or no listener, and then closes the connection.
func PortOpen(ctx context.Context, addr string) report.Stage {
	ctx, cancel := context.WithTimeout(ctx, PortOpenTimeout)
	defer cancel()
	start := time.Now()
	connected := 0
	var last error
	for {
		n, err := firstBytes(ctx, addr)
		if err == nil {
			s := report.Passf(report.StagePortOpen, time.Since(start), "%s answered with %d bytes", addr, n)
			s.Metrics = map[string]float64{"accepted_without_answer": float64(connected)}
			return s
		}
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "dial" {
			connected++
		}
		last = err
		if !sleep(ctx, pollInterval) {
			break
		}
	}
	d := time.Since(start)
	if connected > 0 {
		return report.Failf(report.StagePortOpen, report.ClassNoHTTPResponse, d,
			"TCP connects were accepted %d times but no HTTP response byte came (hostfwd without a guest listener?): %v", connected, last)
	}
	return report.Failf(report.StagePortOpen, report.ClassConnectRefused, d, "no connection to %s: %v", addr, last)
}

// firstBytes connects once, sends GET / and returns how many bytes came back
// before the server closed or went quiet.
func firstBytes(ctx context.Context, addr string) (int, error) {
	var d net.Dialer
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	c, err := d.DialContext(actx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	dl, _ := actx.Deadline()
	c.SetDeadline(dl)
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

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
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

// First200 polls GET / until it answers 200 or the deadline passes, and
// returns the time the first 200 arrived (zero on failure).
func First200(ctx context.Context, addr string) (report.Stage, time.Time) {
	ctx, cancel := context.WithTimeout(ctx, First200Timeout)
	defer cancel()
	start := time.Now()
	var last error
	tries := 0
	for {
		tries++
		actx, acancel := context.WithTimeout(ctx, attemptTimeout)
		r, err := get(actx, addr, "/")
		acancel()
		if err == nil && r.Status == 200 {
			at := time.Now()
			s := report.Passf(report.StageFirst200, at.Sub(start), "200 after %d attempts", tries)
			s.Metrics = map[string]float64{"attempts": float64(tries)}
			return s, at
		}
		if err == nil {
			err = perr(report.ClassBadStatus, "GET / answered %d", r.Status)
		}
		last = err
		if !sleep(ctx, pollInterval) {
			break
		}
	}
	class := classOf(last)
	if class == report.ClassTimeout {
		class = report.ClassNoHTTPResponse
	}
	return report.Failf(report.StageFirst200, class, time.Since(start), "no 200 from GET / in %d attempts; last: %v", tries, last), time.Time{}
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
