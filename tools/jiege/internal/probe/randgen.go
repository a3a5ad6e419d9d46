package probe

import (
	"fmt"
	"math/rand/v2"
	"path"
	"sort"
	"strings"
)

// The randomized differential probe asks a server and an oracle nginx the
// same seeded random requests and compares the answers. A fixed sequence of
// probes can be learned from one report and replayed by a forgery; a few
// hundred requests drawn from nginx's behaviour space (what it answers to
// ranges, validators, odd paths, oversized and malformed requests) cannot.
// This file generates the requests; randprobe.go sends and compares them.

// Request categories: every generated set holds each of them.
const (
	CatMethod      = "method"      // GET, HEAD, POST, OPTIONS, unknown methods
	CatVersion     = "version"     // HTTP/1.0 and 1.1, keep-alive and close
	CatRange       = "range"       // single, suffix, open, multi-range, unsatisfiable, invalid
	CatConditional = "conditional" // If-None-Match, If-Modified-Since, If-Range
	CatPath        = "path"        // "..", "//", %-escapes, queries, directories, missing files
	CatLong        = "long"        // long URIs and header lines, over and under nginx's limits
	CatMalformed   = "malformed"   // broken request lines and headers
	CatBody        = "body"        // bodies on GET and POST, by length and chunked
	CatTransfer    = "transfer"    // unknown or conflicting Transfer-Encoding
	CatExpect      = "expect"      // Expect: 100-continue and others
)

// Categories lists the request categories in a fixed order.
var Categories = []string{CatMethod, CatVersion, CatRange, CatConditional, CatPath,
	CatLong, CatMalformed, CatBody, CatTransfer, CatExpect}

// probeHost is the Host header of generated requests: the same for the
// target and the oracle, so nothing in their answers depends on it.
const probeHost = "localhost"

// CorpusFile is a file both servers serve with the same bytes and mtime,
// with the validators the oracle gave for it.
type CorpusFile struct {
	Path         string
	Size         int64
	ETag         string
	LastModified string
	// Large files are only asked for in parts (Range, HEAD, 304s).
	Large bool
}

// Corpus is what generated requests may be about.
type Corpus struct {
	Files []CorpusFile
	// Dirs are directories both servers hold, as URL paths without the
	// trailing slash ("/docs").
	Dirs []string
}

// Request is one generated request.
type Request struct {
	Category string
	Raw      string // the exact bytes sent, possibly malformed
	Method   string // what the response is read as (HEAD: no body)
	// About is the corpus path the request asks about; empty for missing
	// paths and requests nginx rejects before looking at a file.
	About string
	// Last: nginx may close the connection after answering, so nothing
	// follows it on its connection.
	Last bool
}

// Line returns the request's first line, for reports.
func (r Request) Line() string {
	l, _, _ := strings.Cut(r.Raw, "\r\n")
	return trunc(l)
}

// Batch is the requests sent on one connection, one after the other
// (waiting for each answer) or all at once (pipelined).
type Batch struct {
	Pipelined bool
	Requests  []Request
}

// Generate returns about n requests for the corpus, in batches,
// determined by seed alone: the same seed and corpus give the same bytes.
// Each category occurs at least once when n >= len(Categories). Then, as
// far as n allows, come the requests nginx answers by itself, every form
// of them once (malformed, too long, a bad Transfer-Encoding), drawn the
// same whatever the seed: whether a server answers them as nginx does is
// what tells "not nginx" from "nginx that differs" (randomFailure), and a
// verdict must not depend on the seed (jiege repeatability).
func Generate(seed uint64, c Corpus, n int) []Batch {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x6a69656765)), c: c}
	// The first round visits every category, in a seeded order.
	order := append([]string(nil), Categories...)
	g.r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	sweep := nginxOwnForms(c)
	var out []Batch
	total := 0
	for total < n {
		b := Batch{Pipelined: g.r.IntN(3) == 0}
		size := 1 + g.r.IntN(6)
		for len(b.Requests) < size && total < n {
			var r Request
			switch {
			case total < len(order):
				r = g.request(order[total])
			case total < len(order)+len(sweep):
				r = sweep[total-len(order)]
			default:
				r = g.request(Categories[g.r.IntN(len(Categories))])
			}
			b.Requests = append(b.Requests, r)
			total++
			if r.Last {
				break
			}
		}
		out = append(out, b)
	}
	return out
}

// How many forms of each category of request nginx answers by itself the
// generator has (the cases of long, malformed and transfer).
const (
	longForms      = 5
	malformedForms = 17
	transferForms  = 4
)

// nginxOwnForms returns every form of the requests nginx answers by
// itself once, from a generator of fixed seed.
func nginxOwnForms(c Corpus) []Request {
	g := &gen{r: rand.New(rand.NewPCG(1, 2)), c: c}
	var out []Request
	for form := range longForms {
		r := g.long(form)
		r.Category = CatLong
		out = append(out, r)
	}
	for form := range malformedForms {
		r := g.malformed(form)
		r.Category = CatMalformed
		out = append(out, r)
	}
	for form := range transferForms {
		r := g.transfer(form)
		r.Category = CatTransfer
		out = append(out, r)
	}
	for i := range out {
		if out[i].Method == "" {
			out[i].Method = "GET"
		}
	}
	return out
}

// gen draws requests.
type gen struct {
	r *rand.Rand
	c Corpus
}

func pick[T any](g *gen, list []T) T { return list[g.r.IntN(len(list))] }

// file picks a corpus file; small only unless large is allowed.
func (g *gen) file(large bool) (CorpusFile, bool) {
	var ok []CorpusFile
	for _, f := range g.c.Files {
		if large || !f.Large {
			ok = append(ok, f)
		}
	}
	if len(ok) == 0 {
		return CorpusFile{}, false
	}
	return pick(g, ok), true
}

// missing returns a path no server holds.
func (g *gen) missing() string {
	return pick(g, []string{"/jiege-missing-", "/no/such/dir/", "/x.", "/.hidden-"}) + fmt.Sprintf("%x", g.r.Uint32())
}

// build assembles a request: a request line, Host (unless noHost),
// the common headers, extra header lines, and a body.
type build struct {
	method, target, proto string
	noHost                bool
	headers               []string
	body                  string
}

func (g *gen) raw(b build) string {
	if b.proto == "" {
		b.proto = "HTTP/1.1"
	}
	var s strings.Builder
	s.WriteString(b.method + " " + b.target + " " + b.proto + "\r\n")
	if !b.noHost {
		s.WriteString("Host: " + probeHost + "\r\n")
	}
	s.WriteString("User-Agent: jiege-probe\r\n")
	if g.r.IntN(2) == 0 {
		s.WriteString("Accept: */*\r\n")
	}
	if g.r.IntN(4) == 0 {
		// An nginx with gzip on shows itself here.
		s.WriteString("Accept-Encoding: gzip, deflate\r\n")
	}
	for _, h := range b.headers {
		s.WriteString(h + "\r\n")
	}
	s.WriteString("\r\n")
	s.WriteString(b.body)
	return s.String()
}

// plain returns a GET of a corpus file (or a missing path when the corpus
// is empty) with its About.
func (g *gen) plain(large bool) (string, string) {
	if f, ok := g.file(large); ok {
		return f.Path, f.Path
	}
	return g.missing(), ""
}

func (g *gen) request(cat string) Request {
	var r Request
	switch cat {
	case CatMethod:
		r = g.method()
	case CatVersion:
		r = g.version()
	case CatRange:
		r = g.rangeReq()
	case CatConditional:
		r = g.conditional()
	case CatPath:
		r = g.pathReq()
	case CatLong:
		r = g.long(g.r.IntN(longForms))
	case CatMalformed:
		r = g.malformed(g.r.IntN(malformedForms))
	case CatBody:
		r = g.body()
	case CatTransfer:
		r = g.transfer(g.r.IntN(transferForms))
	case CatExpect:
		r = g.expect()
	default:
		panic("unknown category " + cat)
	}
	r.Category = cat
	if r.Method == "" {
		r.Method = "GET"
	}
	return r
}

func (g *gen) method() Request {
	p, about := g.plain(false)
	if g.r.IntN(4) == 0 {
		if d, ok := g.dir(); ok {
			p, about = d+"/", d+"/"
		}
	}
	switch m := pick(g, []string{"GET", "HEAD", "POST", "OPTIONS", "PUT", "DELETE", "TRACE", "JIEGE", "PROPFIND"}); m {
	case "POST", "PUT":
		body := fmt.Sprintf("a=%d", g.r.IntN(1000))
		return Request{Raw: g.raw(build{method: m, target: p, headers: []string{"Content-Type: application/x-www-form-urlencoded", fmt.Sprintf("Content-Length: %d", len(body))}, body: body}), About: about}
	case "HEAD":
		if f, ok := g.file(true); ok {
			p, about = f.Path, f.Path
		}
		return Request{Raw: g.raw(build{method: m, target: p}), Method: "HEAD", About: about}
	default:
		return Request{Raw: g.raw(build{method: m, target: p}), About: about}
	}
}

func (g *gen) version() Request {
	p, about := g.plain(false)
	method := pick(g, []string{"GET", "GET", "HEAD"})
	var b build
	switch g.r.IntN(5) {
	case 0: // HTTP/1.0, no Host: nginx closes after answering
		b = build{method: method, target: p, proto: "HTTP/1.0", noHost: true}
		return Request{Raw: g.raw(b), Method: method, About: about, Last: true}
	case 1:
		b = build{method: method, target: p, proto: "HTTP/1.0"}
		return Request{Raw: g.raw(b), Method: method, About: about, Last: true}
	case 2: // HTTP/1.0 asking to keep the connection
		b = build{method: method, target: p, proto: "HTTP/1.0", headers: []string{"Connection: keep-alive"}}
	case 3:
		b = build{method: method, target: p, headers: []string{"Connection: close"}}
		return Request{Raw: g.raw(b), Method: method, About: about, Last: true}
	default:
		b = build{method: method, target: p, headers: []string{"Connection: keep-alive"}}
	}
	return Request{Raw: g.raw(b), Method: method, About: about}
}

func (g *gen) rangeReq() Request {
	f, ok := g.file(true)
	if !ok {
		return Request{Raw: g.raw(build{method: "GET", target: g.missing(), headers: []string{"Range: bytes=0-9"}})}
	}
	n := max(f.Size, 1)
	a := g.r.Int64N(n)
	b := a + g.r.Int64N(min(n-a, 4096))
	var spec string
	switch g.r.IntN(9) {
	case 0:
		spec = fmt.Sprintf("bytes=%d-%d", a, b)
	case 1:
		spec = fmt.Sprintf("bytes=-%d", 1+g.r.Int64N(min(n, 4096)+8))
	case 2:
		spec = fmt.Sprintf("bytes=%d-", max(n-1-g.r.Int64N(min(n, 4096)), 0))
	case 3, 4: // multipart/byteranges
		var parts []string
		for i := 0; i < 2+g.r.IntN(3); i++ {
			s := g.r.Int64N(n)
			parts = append(parts, fmt.Sprintf("%d-%d", s, s+g.r.Int64N(64)))
		}
		if g.r.IntN(2) == 0 {
			parts = append(parts, fmt.Sprintf("-%d", 1+g.r.Int64N(32)))
		}
		spec = "bytes=" + strings.Join(parts, ",")
	case 5: // unsatisfiable: 416
		spec = fmt.Sprintf("bytes=%d-", n+g.r.Int64N(1000))
	case 6: // reversed or junk: nginx ignores or rejects
		spec = pick(g, []string{fmt.Sprintf("bytes=%d-%d", b+1, a), "bytes=abc", "bytes=", "items=0-5", "bytes=0-1,,2-3", "bytes= 0-4", "bytes=-0"})
	case 7: // past the end, clipped
		spec = fmt.Sprintf("bytes=%d-%d", a, n+g.r.Int64N(1<<20))
	default: // overlapping parts
		spec = fmt.Sprintf("bytes=0-%d,%d-%d", b, a, b)
	}
	method := "GET"
	if g.r.IntN(6) == 0 {
		method = "HEAD"
	}
	return Request{Raw: g.raw(build{method: method, target: f.Path, headers: []string{"Range: " + spec}}), Method: method, About: f.Path}
}

func (g *gen) conditional() Request {
	f, ok := g.file(false)
	if !ok {
		return Request{Raw: g.raw(build{method: "GET", target: g.missing(), headers: []string{"If-None-Match: *"}})}
	}
	other := `"0-0"`
	old := "Thu, 01 Jan 1970 00:00:01 GMT"
	future := "Fri, 01 Jan 2100 00:00:00 GMT"
	var h []string
	last := false
	switch g.r.IntN(11) {
	case 0:
		h = []string{"If-None-Match: " + f.ETag}
	case 1:
		h = []string{"If-None-Match: " + pick(g, []string{"*", "W/" + f.ETag, other + ", " + f.ETag, other, `"` + strings.Trim(f.ETag, `"`) + `x"`})}
	case 2:
		h = []string{"If-Modified-Since: " + f.LastModified}
	case 3:
		h = []string{"If-Modified-Since: " + pick(g, []string{old, future, "yesterday", strings.ToLower(f.LastModified)})}
	case 4:
		h = []string{"If-None-Match: " + other, "If-Modified-Since: " + f.LastModified}
	case 5:
		h = []string{"If-None-Match: " + f.ETag, "If-Modified-Since: " + old}
	case 6:
		h = []string{"Range: bytes=0-4", "If-Range: " + f.ETag}
	case 7:
		h = []string{"Range: bytes=0-4", "If-Range: " + pick(g, []string{other, f.LastModified, old, "W/" + f.ETag})}
	case 8: // nginx closes the connection after a 412
		h, last = []string{"If-Match: " + pick(g, []string{f.ETag, other, "*"})}, true
	case 9:
		h, last = []string{"If-Unmodified-Since: " + pick(g, []string{old, f.LastModified, future})}, true
	default: // a 304 for a large file
		if lf, ok := g.file(true); ok {
			f = lf
		}
		h = []string{"If-None-Match: " + f.ETag}
	}
	method := "GET"
	if g.r.IntN(5) == 0 {
		method = "HEAD"
	}
	return Request{Raw: g.raw(build{method: method, target: f.Path, headers: h}), Method: method, About: f.Path, Last: last}
}

// dir picks a corpus directory.
func (g *gen) dir() (string, bool) {
	if len(g.c.Dirs) == 0 {
		return "", false
	}
	return pick(g, g.c.Dirs), true
}

// escape percent-encodes one byte of p after its first.
func (g *gen) escape(p string) string {
	if len(p) < 2 {
		return p
	}
	i := 1 + g.r.IntN(len(p)-1)
	if p[i] == '/' {
		return p
	}
	return p[:i] + fmt.Sprintf("%%%02X", p[i]) + p[i+1:]
}

func (g *gen) pathReq() Request {
	f, ok := g.file(false)
	p := g.missing()
	if ok {
		p = f.Path
	}
	d, hasDir := g.dir()
	about := f.Path
	var target string
	switch g.r.IntN(14) {
	case 0:
		target = "/jiege-x/.." + p
	case 1:
		target = "/" + p
	case 2:
		target = strings.Replace(p, "/", "//", -1)
	case 3:
		target = g.escape(p)
	case 4:
		target = p + "?" + pick(g, []string{"a=1", "x=%20y&z", "", "q=" + strings.Repeat("b", 100), "a=/../x"})
	case 5:
		target = "/./" + strings.TrimPrefix(p, "/")
	case 6:
		target, about = g.missing(), ""
	case 7:
		target, about = "/.."+p, ""
	case 8:
		target, about = pick(g, []string{"/%", "/%zz", "/a%00b", "/%2e%2e/x", "/a/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/index.html%3F", "/\xff"}), ""
	case 9:
		target, about = p+"/", ""
	case 10, 11:
		if hasDir { // without the slash: 301 to it
			target, about = d, d
			if g.r.IntN(2) == 0 {
				target += "?k=v"
			}
		} else {
			target = p
		}
	default:
		if hasDir {
			target, about = d+"/", d+"/"
		} else {
			target = p
		}
	}
	method := "GET"
	if g.r.IntN(5) == 0 {
		method = "HEAD"
	}
	return Request{Raw: g.raw(build{method: method, target: target}), Method: method, About: about}
}

func (g *gen) long(form int) Request {
	p, about := g.plain(false)
	switch form {
	case 0: // over large_client_header_buffers (8k): 414
		return Request{Raw: g.raw(build{method: "GET", target: "/" + strings.Repeat("u", 8200+g.r.IntN(2000))}), Last: true}
	case 1: // one header line over 8k: 400 Request Header Or Cookie Too Large
		return Request{Raw: g.raw(build{method: "GET", target: p, headers: []string{"Cookie: c=" + strings.Repeat("k", 8200+g.r.IntN(2000))}}), Last: true}
	case 2: // under the limit, over client_header_buffer_size (1k)
		return Request{Raw: g.raw(build{method: "GET", target: p + "?" + strings.Repeat("q", 1024+g.r.IntN(5000))}), About: about}
	case 3:
		return Request{Raw: g.raw(build{method: "GET", target: p, headers: []string{"X-Long: " + strings.Repeat("h", 1024+g.r.IntN(5000))}}), About: about}
	default: // many headers
		var h []string
		for i := 0; i < 50+g.r.IntN(100); i++ {
			h = append(h, fmt.Sprintf("X-H%d: %d", i, g.r.IntN(1e6)))
		}
		return Request{Raw: g.raw(build{method: "GET", target: p, headers: h}), About: about}
	}
}

// malformed requests may make nginx close the connection: each is Last.
func (g *gen) malformed(form int) Request {
	p, _ := g.plain(false)
	host := "Host: " + probeHost + "\r\n"
	var raw string
	switch form {
	case 0:
		raw = "GET " + p + " HTTP/1.1\r\n\r\n" // no Host in 1.1
	case 1:
		raw = "GET " + p + " HTTP/1.1\r\n" + host + "Host: other\r\n\r\n"
	case 2:
		raw = "GET " + p + " HTTP/" + pick(g, []string{"2.0", "9.9", "1.1x", "1", "1.10", "0.8"}) + "\r\n" + host + "\r\n"
	case 3:
		raw = "GET " + p + " " + pick(g, []string{"FOO/1.1", "http/1.1", "HTTP/1.1 extra"}) + "\r\n" + host + "\r\n"
	case 4:
		raw = pick(g, []string{"get", "G@T", "GE T", "GET\t"}) + " " + p + " HTTP/1.1\r\n" + host + "\r\n"
	case 5:
		raw = "GET " + p + " HTTP/1.1\r\n" + host + pick(g, []string{"Bad Header", "NoColon", ": empty-name", "X Y: z"}) + "\r\n\r\n"
	case 6:
		raw = "GET " + p + " HTTP/1.1\r\n" + host + " folded: x\r\n\r\n"
	case 7:
		raw = "GET " + p + " HTTP/1.1\r\n" + host + "Content-Length: " + pick(g, []string{"abc", "-1", "1 2", "99999999999999999999"}) + "\r\n\r\n"
	case 8:
		raw = "GET " + p + " HTTP/1.1\r\n" + host + "Content-Length: 0\r\nContent-Length: 0\r\n\r\n"
	case 9:
		raw = "GET " + p + " HTTP/1.1\r\nHost: " + pick(g, []string{"a/b", "..", "a b", "[::1", ""}) + "\r\n\r\n"
	case 10:
		raw = "GET " + p + " HTTP/1.1\r\n" + host + "X-Nul: a\x00b\r\n\r\n"
	case 11:
		raw = "GET http://" + probeHost + p + " HTTP/1.1\r\n" + host + "\r\n"
	case 12:
		raw = "GET  " + p + " HTTP/1.1\r\n" + host + "\r\n"
	case 13:
		raw = "\r\nGET " + p + " HTTP/1.1\r\n" + host + "\r\n"
	case 14:
		raw = "GET " + p + " HTTP/1.1\n" + host[:len(host)-2] + "\n\n" // bare LF
	case 15:
		raw = "GET " + p + " HTTP/1.1\r\n" + host + "X_Under_Score: 1\r\nX-\xc3\xa9: 1\r\n\r\n"
	default:
		raw = "GET " + pick(g, []string{"*", "index.html", "http://", "/\x01"}) + " HTTP/1.1\r\n" + host + "\r\n"
	}
	return Request{Raw: raw, Last: true}
}

func (g *gen) body() Request {
	p, about := g.plain(false)
	body := strings.Repeat("b", g.r.IntN(3000))
	switch g.r.IntN(4) {
	case 0: // a body on GET is read and discarded
		return Request{Raw: g.raw(build{method: "GET", target: p, headers: []string{fmt.Sprintf("Content-Length: %d", len(body))}, body: body}), About: about}
	case 1:
		return Request{Raw: g.raw(build{method: "GET", target: p, headers: []string{"Transfer-Encoding: chunked"}, body: chunked(body)}), About: about}
	case 2:
		return Request{Raw: g.raw(build{method: "POST", target: p, headers: []string{fmt.Sprintf("Content-Length: %d", len(body))}, body: body}), About: about}
	default:
		return Request{Raw: g.raw(build{method: "POST", target: p, headers: []string{"Transfer-Encoding: chunked"}, body: chunked(body)}), About: about}
	}
}

// chunked encodes body in two chunks and a last one.
func chunked(body string) string {
	half := len(body) / 2
	var s strings.Builder
	for _, part := range []string{body[:half], body[half:]} {
		if part != "" {
			fmt.Fprintf(&s, "%x\r\n%s\r\n", len(part), part)
		}
	}
	s.WriteString("0\r\n\r\n")
	return s.String()
}

// transfer requests nginx rejects (501, 400) before reading a body, so
// none is sent.
func (g *gen) transfer(form int) Request {
	p, _ := g.plain(false)
	var h []string
	switch form {
	case 0:
		h = []string{"Transfer-Encoding: " + pick(g, []string{"gzip", "identity", "jiege", "chunked, gzip", "gzip, chunked"})}
	case 1:
		h = []string{"Transfer-Encoding: chunked", "Content-Length: 5"}
	case 2:
		h = []string{"Transfer-Encoding: chunked", "Transfer-Encoding: chunked"}
	default:
		h = []string{"Transfer-Encoding: " + pick(g, []string{"Chunked", "chunked ", "xchunked"})}
	}
	return Request{Raw: g.raw(build{method: pick(g, []string{"GET", "POST"}), target: p, headers: h}), Last: true}
}

func (g *gen) expect() Request {
	p, about := g.plain(false)
	body := fmt.Sprintf("payload-%d", g.r.IntN(1e6))
	switch g.r.IntN(4) {
	case 0: // nginx sends 100 Continue before discarding the body
		return Request{Raw: g.raw(build{method: "POST", target: p, headers: []string{"Expect: 100-continue", fmt.Sprintf("Content-Length: %d", len(body))}, body: body}), About: about}
	case 1:
		return Request{Raw: g.raw(build{method: "GET", target: p, headers: []string{"Expect: 100-continue"}}), About: about}
	case 2:
		return Request{Raw: g.raw(build{method: "POST", target: p, proto: "HTTP/1.0", headers: []string{"Expect: 100-continue", fmt.Sprintf("Content-Length: %d", len(body))}, body: body}), About: about, Last: true}
	default:
		return Request{Raw: g.raw(build{method: "GET", target: p, headers: []string{"Expect: " + pick(g, []string{"jiege", "100-Continue", "200-ok"})}}), About: about}
	}
}

// DirsOf returns the directories that hold the given URL paths (without
// the root), sorted.
func DirsOf(paths []string) []string {
	seen := map[string]bool{}
	for _, p := range paths {
		for d := path.Dir(p); d != "/" && d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
		}
	}
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
