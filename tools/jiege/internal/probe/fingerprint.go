package probe

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// nginxHeaderOrder is the order in which nginx's header filter writes the
// headers of a static-file response (ngx_http_header_filter_module writes
// its fixed headers first, then the list that ETag, Accept-Ranges and
// Content-Range are added to). Recorded responses in testdata follow it.
var nginxHeaderOrder = []string{"Server", "Date", "Content-Type", "Content-Length",
	"Last-Modified", "Location", "Transfer-Encoding", "Connection", "Keep-Alive",
	"Vary", "ETag", "Accept-Ranges", "Content-Range"}

var (
	serverRE = regexp.MustCompile(`^nginx/([0-9]+\.[0-9]+\.[0-9]+)$`)
	etagRE   = regexp.MustCompile(`^"([0-9a-f]+)-([0-9a-f]+)"$`)
)

// NginxErrorPage is the body nginx sends for a 404 from its built-in error
// pages: CRLF line ends, the version in the tail.
func NginxErrorPage(version string) string {
	return "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n" +
		"<center><h1>404 Not Found</h1></center>\r\n" +
		"<hr><center>nginx/" + version + "</center>\r\n</body>\r\n</html>\r\n"
}

// step is one request of the fingerprint sequence.
type step struct {
	label  string
	method string
	path   string
	extra  string // header lines, CRLF-terminated
}

// exchange is a step with its response.
type exchange struct {
	step
	resp *response
}

// observe runs the fingerprint sequence against addr on one keep-alive
// connection: GET, HEAD, GET (proves HEAD sent no body), a missing path,
// a Range, If-None-Match, If-Modified-Since (equal and old), and GET again.
// Conditional requests use the first response's validators. With
// closeOK (the oracle itself has keep-alive off), a response that says
// "Connection: close" is followed by a fresh connection.
func observe(ctx context.Context, addr, path, missing string, closeOK bool) ([]exchange, error) {
	c, err := dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer func() { c.Close() }()
	var out []exchange
	run := func(s step) (*response, error) {
		if n := len(out); closeOK && n > 0 {
			if v, _ := out[n-1].resp.Get("Connection"); strings.EqualFold(v, "close") {
				c.Close()
				if c, err = dial(ctx, addr); err != nil {
					return nil, fmt.Errorf("%s: %w", s.label, err)
				}
			}
		}
		r, err := c.do(s.method, s.path, s.extra, nil)
		if err != nil {
			// A server that closes after an answer may reset the connection
			// under the next request instead of closing it cleanly.
			closed := classOf(err) == report.ClassNoHTTPResponse || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
			if len(out) > 0 && closed {
				if c, _ := out[len(out)-1].resp.Get("Connection"); strings.EqualFold(c, "close") {
					return nil, perr(report.ClassFingerprint, "nginx with another configuration: keep-alive off (Connection: close, then the connection closed after %d requests)", len(out))
				}
				return nil, perr(report.ClassFingerprint, "keep-alive: connection closed after %d requests (%s): %v", len(out), s.label, err)
			}
			return nil, fmt.Errorf("%s: %w", s.label, err)
		}
		out = append(out, exchange{s, r})
		return r, nil
	}
	first, err := run(step{"GET", "GET", path, ""})
	if err != nil {
		return out, err
	}
	etag, _ := first.Get("ETag")
	lm, _ := first.Get("Last-Modified")
	for _, s := range []step{
		{"HEAD", "HEAD", path, ""},
		{"GET after HEAD", "GET", path, ""},
		{"404", "GET", missing, ""},
		{"Range", "GET", path, "Range: bytes=0-99\r\n"},
		{"If-None-Match", "GET", path, "If-None-Match: " + etag + "\r\n"},
		{"If-Modified-Since", "GET", path, "If-Modified-Since: " + lm + "\r\n"},
		{"If-Modified-Since old", "GET", path, "If-Modified-Since: Thu, 01 Jan 1970 00:00:01 GMT\r\n"},
		{"GET again", "GET", path, ""},
	} {
		if _, err := run(s); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Fingerprint checks that the server behaves as nginx serving static files:
// a Server header naming a real nginx version; nginx's own 404 page for
// that version; HEAD with Content-Length and no body; Range answered with
// 206 and exactly the requested bytes; If-None-Match and If-Modified-Since
// answered with 304; nginx's header order and ETag format; and all of it
// over one keep-alive connection. With t.Oracle set, the responses must
// also match the oracle's in status, header names and order, Server, and
// the 404 body; then a few hundred seeded random requests (RandomProbe)
// must get the oracle's answers too: a server that learned the fixed
// sequence fails there. busybox httpd and hand-written servers fail here.
func Fingerprint(ctx context.Context, t Target) report.Stage {
	ctx, cancel := context.WithTimeout(ctx, FingerprintTimeout)
	defer cancel()
	start := time.Now()
	missing := "/jiege-missing-" + randHex(8)
	// An oracle configured with keep-alive off (an attempt's own nginx)
	// makes keep-alive off the expected behaviour.
	var oracleOff bool
	if t.Oracle != "" {
		var err error
		if oracleOff, err = keepAliveOff(ctx, t.Oracle); err != nil {
			return report.Failf(report.StageFingerprint, report.ClassEnvironment, time.Since(start), "oracle %s: %v", t.Oracle, err)
		}
	}
	got, err := observe(ctx, t.Addr, "/", missing, oracleOff)
	if err != nil && len(got) == 0 {
		return report.Failf(report.StageFingerprint, classOf(err), time.Since(start), "%v", err)
	}
	f := fpCheck{keepAliveOff: oracleOff}
	version := f.checkServer(got[0].resp, t.NginxVersion)
	if len(f.problems) > 0 {
		return report.Failf(report.StageFingerprint, report.ClassNotNginx, time.Since(start), "%s", f.summary())
	}
	if err != nil {
		return report.Failf(report.StageFingerprint, report.ClassFingerprint, time.Since(start), "%v", err)
	}
	f.checkNginx(got, version)
	how := "nginx's recorded behaviour"
	if t.Oracle != "" {
		want, err := observe(ctx, t.Oracle, "/", missing, oracleOff)
		if err != nil {
			return report.Failf(report.StageFingerprint, report.ClassEnvironment, time.Since(start), "oracle %s: %v", t.Oracle, err)
		}
		f.compare(got, want, normaliser{anyVersion: t.NginxVersion == ""})
		how = "the oracle nginx at " + t.Oracle
	}
	if len(f.problems) > 0 {
		return report.Failf(report.StageFingerprint, report.ClassFingerprint, time.Since(start), "%s", f.summary())
	}
	fixed := fmt.Sprintf("nginx/%s; %d requests on one connection match %s", version, len(got), how)
	if t.Oracle == "" {
		return report.Passf(report.StageFingerprint, time.Since(start), "%s", fixed)
	}
	seed := t.Seed
	if seed == 0 {
		seed = NewSeed()
	}
	rr, err := RandomProbe(ctx, t, seed, RandomRequests)
	d := time.Since(start)
	if err != nil {
		class := report.ClassEnvironment
		if ctx.Err() != nil {
			class = report.ClassTimeout
		}
		return withSeed(report.Failf(report.StageFingerprint, class, d, "random requests (seed %d): %v", seed, err), rr)
	}
	if len(rr.Differences) == 0 {
		return withSeed(report.Passf(report.StageFingerprint, d, "%s; %d random requests (seed %d) match the oracle", fixed, rr.Sent, seed), rr)
	}
	return withSeed(randomFailure(rr, d), rr)
}

// showDifferences is how many differing requests a report names.
const showDifferences = 3

// randomFailure tells "not nginx" from "nginx with another configuration"
// and names the first differing requests with both answers.
func randomFailure(rr RandomResult, d time.Duration) report.Stage {
	class, verdict := report.ClassFingerprint, "differs from the oracle nginx"
	if cfg := rr.explained(); cfg != nil {
		verdict = "nginx with another configuration: " + strings.Join(cfg, ", ")
	} else if rr.nginxOwnPagesDiffer() {
		class, verdict = report.ClassNotNginx, "not nginx: requests nginx rejects by itself get other answers"
	}
	var first []string
	for _, df := range rr.Differences[:min(showDifferences, len(rr.Differences))] {
		first = append(first, df.String())
	}
	more := ""
	if rr.Sent < RandomRequests {
		more = " (stopped early)"
	}
	return report.Failf(report.StageFingerprint, class, d, "%s: %d of %d random requests differ%s (seed %d; replay with --fingerprint-seed %d); %s",
		verdict, len(rr.Differences), rr.Sent, more, rr.Seed, rr.Seed, strings.Join(first, "; "))
}

// withSeed records the seed and counts in the stage's metrics (seeds
// stay below 2^53, exact in a float64).
func withSeed(s report.Stage, rr RandomResult) report.Stage {
	s.Metrics = map[string]float64{"seed": float64(rr.Seed), "random_requests": float64(rr.Sent), "random_differences": float64(len(rr.Differences))}
	return s
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// fpCheck collects fingerprint problems.
type fpCheck struct {
	problems     []string
	keepAliveOff bool // the oracle answers Connection: close
}

func (f *fpCheck) failf(format string, args ...any) {
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
}

func (f *fpCheck) summary() string {
	const show = 4
	if len(f.problems) > show {
		return strings.Join(f.problems[:show], "; ") + fmt.Sprintf("; and %d more", len(f.problems)-show)
	}
	return strings.Join(f.problems, "; ")
}

// checkServer checks the Server header and returns the nginx version.
func (f *fpCheck) checkServer(r *response, want string) string {
	server, ok := r.Get("Server")
	if !ok {
		f.failf("no Server header")
		return ""
	}
	m := serverRE.FindStringSubmatch(server)
	if m == nil {
		f.failf("Server %q names no nginx version", server)
		return ""
	}
	if want != "" && m[1] != want {
		f.failf("Server %q, the root filesystem has nginx %s", server, want)
	}
	return m[1]
}

// checkOrder checks that the headers are nginx's and in nginx's order.
func (f *fpCheck) checkOrder(label string, r *response) {
	last := -1
	for _, h := range r.Headers {
		i := indexOf(nginxHeaderOrder, h.Name)
		if i < 0 {
			f.failf("%s: header %q is not one nginx sends here", label, h.Name)
			return
		}
		if i <= last {
			f.failf("%s: headers out of nginx's order: %s", label, strings.Join(r.Names(), ", "))
			return
		}
		last = i
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// checkNginx checks the observed sequence against nginx's rules.
func (f *fpCheck) checkNginx(ex []exchange, version string) {
	first := ex[0].resp
	body := first.Body
	if first.Status != 200 {
		f.failf("GET /: status %d", first.Status)
		return
	}
	etag, hasETag := first.Get("ETag")
	lm, hasLM := first.Get("Last-Modified")
	switch m := etagRE.FindStringSubmatch(etag); {
	case !hasETag:
		f.failf("GET /: no ETag")
	case m == nil:
		f.failf("GET /: ETag %q is not nginx's \"mtime-size\" form", etag)
	default:
		if size, _ := strconv.ParseInt(m[2], 16, 64); size != int64(len(body)) {
			f.failf("GET /: ETag size %s, body has %d bytes", m[2], len(body))
		}
		if t, err := http.ParseTime(lm); err == nil {
			if mt, _ := strconv.ParseInt(m[1], 16, 64); mt != t.Unix() {
				f.failf("GET /: ETag time %s does not match Last-Modified %q", m[1], lm)
			}
		}
	}
	if _, err := http.ParseTime(lm); !hasLM || err != nil {
		f.failf("GET /: bad Last-Modified %q", lm)
	}
	if d, _ := first.Get("Date"); !validDate(d) {
		f.failf("GET /: bad Date %q", d)
	}
	if ar, _ := first.Get("Accept-Ranges"); ar != "bytes" {
		f.failf("GET /: Accept-Ranges %q, want bytes", ar)
	}
	for _, e := range ex {
		r := e.resp
		f.checkOrder(e.label, r)
		if c, _ := r.Get("Connection"); c != "keep-alive" && !(f.keepAliveOff && c == "close") {
			f.failf("%s: Connection %q, want keep-alive", e.label, c)
		}
		if r.Proto != "HTTP/1.1" {
			f.failf("%s: %s response, want HTTP/1.1", e.label, r.Proto)
		}
		if s, _ := r.Get("Server"); s != "nginx/"+version {
			f.failf("%s: Server %q changed", e.label, s)
		}
		want := map[string]int{"Range": 206, "404": 404, "If-None-Match": 304, "If-Modified-Since": 304}[e.label]
		if want == 0 {
			want = 200
		}
		if r.Status != want {
			f.failf("%s: status %d, want %d", e.label, r.Status, want)
			continue
		}
		switch e.label {
		case "HEAD":
			if cl, _ := r.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
				f.failf("HEAD: Content-Length %q, GET has %d bytes", cl, len(body))
			}
		case "GET after HEAD", "If-Modified-Since old", "GET again":
			if !bytes.Equal(r.Body, body) {
				f.failf("%s: body differs from the first GET", e.label)
			}
		case "404":
			if string(r.Body) != NginxErrorPage(version) {
				f.failf("404: body is not nginx %s's error page: %q", version, trunc(string(r.Body)))
			}
			if ct, _ := r.Get("Content-Type"); ct != "text/html" {
				f.failf("404: Content-Type %q, want text/html", ct)
			}
		case "Range":
			end := min(99, len(body)-1)
			if cr, _ := r.Get("Content-Range"); cr != fmt.Sprintf("bytes 0-%d/%d", end, len(body)) {
				f.failf("Range: Content-Range %q, want %q", cr, fmt.Sprintf("bytes 0-%d/%d", end, len(body)))
			}
			if !bytes.Equal(r.Body, body[:end+1]) {
				f.failf("Range: %d bytes, not the first %d of the file", len(r.Body), end+1)
			}
		case "If-None-Match", "If-Modified-Since":
			if r.N != 0 {
				f.failf("%s: 304 with a body", e.label)
			}
			if et, _ := r.Get("ETag"); et != etag {
				f.failf("%s: ETag %q changed from %q", e.label, et, etag)
			}
		}
	}
}

func validDate(s string) bool {
	_, err := time.Parse(http.TimeFormat, s)
	return err == nil
}

// compare checks the target's exchanges against the oracle's, after
// normalising what two honest nginx servers may differ in.
func (f *fpCheck) compare(got, want []exchange, norm normaliser) {
	if len(got) != len(want) {
		f.failf("%d exchanges, the oracle had %d", len(got), len(want))
		return
	}
	for i := range got {
		g, w := norm.answer(got[i].resp, nil), norm.answer(want[i].resp, nil)
		label := got[i].label
		if g.Status != w.Status {
			f.failf("%s: status %d, oracle %d", label, g.Status, w.Status)
		}
		if gn, wn := headerNames(g), headerNames(w); gn != wn {
			f.failf("%s: headers [%s], oracle [%s]", label, gn, wn)
		}
		gs, _ := g.get("Server")
		ws, _ := w.get("Server")
		if gs != ws {
			f.failf("%s: Server %q, oracle %q", label, gs, ws)
		}
		if label == "404" && !bytes.Equal(g.Body, w.Body) {
			f.failf("404: body differs from the oracle's")
		}
	}
}
