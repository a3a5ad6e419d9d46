package probe

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/probe/fakehttp"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

var testCorpus = Corpus{
	Files: []CorpusFile{
		{Path: "/", Size: 256, ETag: `"67748580-100"`, LastModified: "Wed, 01 Jan 2025 00:00:00 GMT"},
		{Path: "/docs/guide.txt", Size: 58, ETag: `"67748580-3a"`, LastModified: "Wed, 01 Jan 2025 00:00:00 GMT"},
		{Path: "/1m.bin", Size: 1 << 20, ETag: `"67748580-100000"`, LastModified: "Wed, 01 Jan 2025 00:00:00 GMT", Large: true},
	},
	Dirs: []string{"/docs"},
}

func rawOf(bs []Batch) string {
	var b strings.Builder
	for _, x := range bs {
		b.WriteString(map[bool]string{true: "P", false: "S"}[x.Pipelined])
		for _, r := range x.Requests {
			b.WriteString(r.Raw)
		}
	}
	return b.String()
}

func TestGenerateDeterministic(t *testing.T) {
	for seed := uint64(1); seed < 30; seed++ {
		a, b := Generate(seed, testCorpus, RandomRequests), Generate(seed, testCorpus, RandomRequests)
		if rawOf(a) != rawOf(b) {
			t.Fatalf("seed %d: two runs generated different requests", seed)
		}
		if rawOf(a) == rawOf(Generate(seed+1000, testCorpus, RandomRequests)) {
			t.Fatalf("seeds %d and %d generated the same requests", seed, seed+1000)
		}
	}
}

func TestGenerateShape(t *testing.T) {
	corpora := map[string]Corpus{"tree": testCorpus, "attempt": {Files: testCorpus.Files[:1]}}
	for name, c := range corpora {
		for seed := uint64(1); seed <= 50; seed++ {
			bs := Generate(seed, c, RandomRequests)
			n, pipelined := 0, 0
			cats := map[string]int{}
			for _, b := range bs {
				if len(b.Requests) == 0 {
					t.Fatalf("%s seed %d: empty batch", name, seed)
				}
				if b.Pipelined {
					pipelined++
				}
				for i, r := range b.Requests {
					n++
					cats[r.Category]++
					if r.Last && i != len(b.Requests)-1 {
						t.Errorf("%s seed %d: a request nginx may close after is followed by another: %q", name, seed, r.Line())
					}
					if !strings.Contains(r.Raw, "\n") {
						t.Errorf("%s seed %d: request without a line end: %q", name, seed, r.Raw)
					}
					if r.About != "" && !strings.Contains(r.Raw, " HTTP/1.") {
						t.Errorf("%s seed %d: %q is about %s but not a request nginx parses", name, seed, r.Line(), r.About)
					}
				}
			}
			if n != RandomRequests {
				t.Errorf("%s seed %d: %d requests, want %d", name, seed, n, RandomRequests)
			}
			for _, c := range Categories {
				if cats[c] == 0 {
					t.Errorf("%s seed %d: no request of category %s", name, seed, c)
				}
			}
			if pipelined == 0 || pipelined == len(bs) {
				t.Errorf("%s seed %d: %d of %d batches pipelined", name, seed, pipelined, len(bs))
			}
		}
	}
	// Each category's few requests, even with a tiny n.
	cats := map[string]bool{}
	for _, b := range Generate(7, testCorpus, len(Categories)) {
		for _, r := range b.Requests {
			cats[r.Category] = true
		}
	}
	if len(cats) != len(Categories) {
		t.Errorf("%d requests cover %d categories", len(Categories), len(cats))
	}
}

// TestGenerateReachesNginxCorners checks that over a few seeds the
// requests include each form the probe promises.
func TestGenerateReachesNginxCorners(t *testing.T) {
	var all strings.Builder
	for seed := uint64(1); seed <= 10; seed++ {
		all.WriteString(rawOf(Generate(seed, testCorpus, RandomRequests)))
	}
	s := all.String()
	for _, want := range []string{"HEAD ", "POST ", "OPTIONS ", "JIEGE ", " HTTP/1.0\r\n", "Connection: keep-alive",
		"Range: bytes=-", ",", "If-None-Match: ", "If-Modified-Since: ", "If-Range: ", "/..", "//", "%", "?",
		"GET /docs HTTP/1.1", "GET /docs/ HTTP/1.1", strings.Repeat("u", 8200), "Cookie: c=" + strings.Repeat("k", 8200),
		"Transfer-Encoding: chunked\r\n", "Transfer-Encoding: gzip", "Expect: 100-continue", "Content-Length: "} {
		if !strings.Contains(s, want) {
			t.Errorf("no request holds %q", truncN(want, 40))
		}
	}
}

func resp(status int, body string, h ...string) *response {
	r := &response{Proto: "HTTP/1.1", Status: status, Body: []byte(body), N: int64(len(body))}
	for i := 0; i+1 < len(h); i += 2 {
		r.Headers = append(r.Headers, header{h[i], h[i+1]})
	}
	return r
}

func TestNormaliser(t *testing.T) {
	n := normaliser{}
	a := n.answer(resp(301, "x", "Server", "nginx/1.26.3", "Date", "Mon, 30 Nov 2026 20:00:00 GMT", "Location", "http://localhost:43121/docs/"), nil)
	b := n.answer(resp(301, "x", "Server", "nginx/1.26.3", "Date", "Mon, 30 Nov 2026 20:00:07 GMT", "Location", "http://localhost/docs/"), nil)
	if d := diff(a, b, true); d != "" {
		t.Errorf("Date and the port in Location must not count: %s", d)
	}
	body := func(bd string) string {
		return "\r\n--" + bd + "\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-0/58\r\n\r\nA\r\n--" + bd + "--\r\n"
	}
	m1 := n.answer(resp(206, body("00000000001"), "Content-Type", "multipart/byteranges; boundary=00000000001", "Content-Length", "100"), nil)
	m2 := n.answer(resp(206, body("00000000042"), "Content-Type", "multipart/byteranges; boundary=00000000042", "Content-Length", "100"), nil)
	if d := diff(m1, m2, true); d != "" {
		t.Errorf("the multipart boundary must not count: %s", d)
	}
	if bytes.Contains(m1.Body, []byte("00000000001")) {
		t.Errorf("boundary left in the body: %q", m1.Body)
	}
	m3 := n.answer(resp(206, strings.Replace(body("00000000042"), "A", "B", 1), "Content-Type", "multipart/byteranges; boundary=00000000042", "Content-Length", "100"), nil)
	if diff(m1, m3, true) == "" {
		t.Error("a different part must count")
	}

	page := func(v string) string { return "<html>\r\n<hr><center>nginx/" + v + "</center>\r\n</html>\r\n" }
	p1 := resp(404, page("1.26.3"), "Server", "nginx/1.26.3", "Content-Length", "40")
	p2 := resp(404, page("1.28.10"), "Server", "nginx/1.28.10", "Content-Length", "41")
	if diff(n.answer(p1, nil), n.answer(p2, nil), true) == "" {
		t.Error("another nginx version must count for our own root filesystem")
	}
	any := normaliser{anyVersion: true}
	if d := diff(any.answer(p1, nil), any.answer(p2, nil), true); d != "" {
		t.Errorf("another nginx version must not count for an attempt: %s", d)
	}
	if s, _ := any.answer(resp(200, "", "Server", "Apache/2.4"), nil).get("Server"); s != "Apache/2.4" {
		t.Errorf("a non-nginx Server header normalised to %q", s)
	}
	if d := diff(any.answer(resp(200, "a", "Server", "nginx/1.26.3"), nil), any.answer(resp(200, "b", "Server", "nginx/1.26.3"), nil), true); d == "" {
		t.Error("different bodies must count")
	}
}

func TestDiffAndExplain(t *testing.T) {
	n := normaliser{}
	ok := n.answer(resp(200, "hi", "Content-Length", "2", "Connection", "keep-alive"), nil)
	closed := n.answer(resp(200, "hi", "Content-Length", "2", "Connection", "close"), nil)
	d := diff(closed, ok, true)
	if !strings.Contains(d, "Connection") {
		t.Errorf("diff %q does not name Connection", d)
	}
	if why := explain(closed, ok, true, false); len(why) != 1 || why[0] != cfgKeepAliveOff {
		t.Errorf("explain = %v, want keep-alive off", why)
	}
	if why := explain(Answer{Err: errUnanswered}, ok, true, true); len(why) != 1 || why[0] != cfgKeepAliveOff {
		t.Errorf("unanswered after a close: explain = %v", why)
	}
	if why := explain(Answer{Err: errUnanswered}, ok, true, false); why != nil {
		t.Errorf("unanswered without an earlier close explained as %v", why)
	}
	gz := n.answer(resp(200, "\x1f\x8b...", "Content-Length", "5", "Connection", "keep-alive", "Content-Encoding", "gzip"), nil)
	if why := explain(gz, ok, true, false); len(why) != 1 || why[0] != cfgGzip {
		t.Errorf("explain = %v, want gzip", why)
	}
	partial := n.answer(resp(206, "h", "Content-Length", "1", "Connection", "keep-alive", "Content-Range", "bytes 0-0/2"), nil)
	if why := explain(gz, partial, true, false); len(why) != 1 || why[0] != cfgGzip {
		t.Errorf("a Range ignored for a compressed answer: explain = %v, want gzip", why)
	}
	other := n.answer(resp(404, "hi", "Content-Length", "2", "Connection", "close"), nil)
	if why := explain(other, ok, true, false); why != nil {
		t.Errorf("another status explained as %v", why)
	}
	// Not full: only the status and nginx's own pages count.
	own := n.answer(resp(200, "the attempt's file", "Content-Length", "18"), nil)
	if d := diff(own, ok, false); d != "" {
		t.Errorf("a path of the attempt's own tree compared in full: %s", d)
	}
	page := "<html><hr><center>nginx/1.26.3</center></html>"
	if d := diff(n.answer(resp(400, "Bad", "Content-Length", "3"), nil), n.answer(resp(400, page), nil), false); d == "" {
		t.Error("another page where nginx writes its own must count")
	}
}

// TestRandomProbeFakes runs the probe between in-process servers: the same
// imitation twice agrees; keep-alive off is told apart from a server that
// is not nginx.
func TestRandomProbeFakes(t *testing.T) {
	tg, files := fixture(t)
	oracle := start(t, fakehttp.Options{Files: files})
	tg.Oracle = oracle.Addr
	tg.Addr = start(t, fakehttp.Options{Files: files}).Addr
	rr, err := RandomProbe(ctxFor(t, 60*time.Second), tg, 11, RandomRequests)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Differences) != 0 || rr.Sent != RandomRequests {
		t.Fatalf("the same imitation twice: %d differences in %d requests; first: %v", len(rr.Differences), rr.Sent, rr.Differences)
	}

	tg.Addr = start(t, fakehttp.Options{Files: files, KeepAliveRequests: 1}).Addr
	rr, err = RandomProbe(ctxFor(t, 60*time.Second), tg, 11, RandomRequests)
	if err != nil {
		t.Fatal(err)
	}
	s := randomFailure(rr, 0)
	if len(rr.Differences) == 0 || !strings.Contains(s.Detail, "nginx with another configuration: "+cfgKeepAliveOff) {
		t.Errorf("keep-alive off: %s", s.Detail)
	}

	tg.Addr = start(t, fakehttp.Options{Files: files, Flavor: fakehttp.Pretender}).Addr
	tg.Seed = 12
	s = Fingerprint(ctxFor(t, 60*time.Second), tg)
	wantStage(t, s, report.Fail, report.ClassFingerprint)
	if strings.Contains(s.Detail, "another configuration") {
		t.Errorf("a pretender called nginx with another configuration: %s", s.Detail)
	}
}

// TestFingerprintReportsSeed checks that the fingerprint names its seed
// and the first differing requests with both answers, and that the seed
// replays the same requests.
func TestFingerprintReportsSeed(t *testing.T) {
	tg, files := fixture(t)
	tg.Oracle = start(t, fakehttp.Options{Files: files}).Addr
	tg.Addr = start(t, fakehttp.Options{Files: files, KeepAliveRequests: 1}).Addr
	// The fixed sequence fails first on keep-alive: it says so.
	s := Fingerprint(ctxFor(t, 30*time.Second), tg)
	wantStage(t, s, report.Fail, report.ClassFingerprint)
	if !strings.Contains(s.Detail, "keep-alive off") || !strings.Contains(s.Detail, "Connection: close") {
		t.Errorf("detail %q does not say keep-alive is off", s.Detail)
	}

	tg.Addr = start(t, fakehttp.Options{Files: files}).Addr
	tg.Seed = 99
	s = Fingerprint(ctxFor(t, 60*time.Second), tg)
	wantStage(t, s, report.Pass, "")
	if !strings.Contains(s.Detail, "seed 99") || s.Metrics["seed"] != 99 || s.Metrics["random_requests"] != RandomRequests {
		t.Errorf("detail %q metrics %v", s.Detail, s.Metrics)
	}

	rr := RandomResult{Seed: 5, Sent: 40, Differences: []Difference{{Index: 3, Request: Request{Category: CatRange, Raw: "GET / HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-1,3-4\r\n\r\n"},
		What: "status 200, oracle 206", Target: Answer{Proto: "HTTP/1.1", Status: 200}, Oracle: Answer{Proto: "HTTP/1.1", Status: 206}}}}
	s = randomFailure(rr, time.Second)
	for _, want := range []string{"seed 5", "--fingerprint-seed 5", "#3 [range]", "Range: bytes=0-1,3-4", "target: HTTP/1.1 200", "oracle: HTTP/1.1 206", "stopped early"} {
		if !strings.Contains(s.Detail, want) {
			t.Errorf("detail %q lacks %q", s.Detail, want)
		}
	}
}

func TestDirsOf(t *testing.T) {
	got := strings.Join(DirsOf([]string{"/", "/a/b/c.txt", "/a/d.txt", "/e.txt"}), " ")
	if got != "/a /a/b" {
		t.Errorf("DirsOf = %q", got)
	}
}

// TestRandomFailureVerdict: nginx's own answers to malformed requests told
// otherwise mean "not nginx"; connections a faulty kernel drops do not.
func TestRandomFailureVerdict(t *testing.T) {
	bad := Request{Category: CatMalformed, Raw: "get / HTTP/1.1\r\n\r\n"}
	page := []byte("<html><hr><center>nginx/1.26.3</center></html>")
	oracle := Answer{Proto: "HTTP/1.1", Status: 400, Body: page}
	cases := []struct {
		target Answer
		class  string
		says   string
	}{
		{Answer{Proto: "HTTP/1.1", Status: 200, Body: []byte("hi")}, report.ClassNotNginx, "not nginx"},
		{Answer{Proto: "HTTP/1.1", Status: 400, Body: []byte("Bad Request")}, report.ClassNotNginx, "not nginx"},
		{Answer{Err: errClosed}, report.ClassFingerprint, "differs from the oracle nginx"},
		{Answer{Err: errTimeout}, report.ClassFingerprint, "differs from the oracle nginx"},
	}
	for _, c := range cases {
		rr := RandomResult{Seed: 1, Sent: 10, Differences: []Difference{{Index: 1, Request: bad, What: diff(c.target, oracle, true), Target: c.target, Oracle: oracle}}}
		s := randomFailure(rr, 0)
		if s.Class != c.class || !strings.HasPrefix(s.Detail, c.says) {
			t.Errorf("target %s: %s %q, want %s %q", c.target.Summary(), s.Class, s.Detail, c.class, c.says)
		}
	}
}

// TestGenerateNginxOwnFormsEverySeed: every seed's requests hold every
// form of the requests nginx answers by itself, the same bytes whatever
// the seed, so that the class of a failure (not-nginx or fingerprint)
// cannot change with the seed.
func TestGenerateNginxOwnFormsEverySeed(t *testing.T) {
	forms := nginxOwnForms(testCorpus)
	if len(forms) != longForms+malformedForms+transferForms {
		t.Fatalf("%d forms", len(forms))
	}
	seen := map[string]bool{}
	for _, r := range forms {
		if seen[r.Raw] {
			t.Errorf("form %q twice", r.Line())
		}
		seen[r.Raw] = true
	}
	for seed := uint64(1); seed <= 20; seed++ {
		sent := map[string]bool{}
		for _, b := range Generate(seed, testCorpus, RandomRequests) {
			for _, r := range b.Requests {
				sent[r.Raw] = true
			}
		}
		for _, r := range forms {
			if !sent[r.Raw] {
				t.Errorf("seed %d: no %s request %q", seed, r.Category, r.Line())
			}
		}
	}
}
