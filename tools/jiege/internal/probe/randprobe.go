package probe

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// RandomRequests is how many requests the randomized probe sends to the
// target and to the oracle.
const RandomRequests = 300

// batchTimeout bounds one connection's requests and answers.
const batchTimeout = 15 * time.Second

// answerTimeout bounds the wait for one answer: nginx answers each of
// these requests at once, even through QEMU.
const answerTimeout = 5 * time.Second

// maxDifferences and maxTimeouts end the probe early: a forgery should
// not cost a timeout per request.
const (
	maxDifferences = 20
	maxTimeouts    = 3
)

// largeFile and maxCorpusFile bound the files the probe asks about: above
// largeFile only in parts, above maxCorpusFile not at all.
const (
	largeFile     = 64 << 10
	maxCorpusFile = 2 << 20
)

// NewSeed returns a random seed below 2^53, so that it survives JSON
// readers that hold numbers as doubles.
func NewSeed() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])>>11 | 1
}

// Difference is one request whose answers differ.
type Difference struct {
	Index   int // in the generated sequence, from 1
	Request Request
	What    string // the first field that differs
	Target  Answer
	Oracle  Answer
	// Config lists the configuration differences that explain it, if any.
	Config []string
}

func (d Difference) String() string {
	return fmt.Sprintf("#%d [%s] %s: %s (target: %s; oracle: %s)", d.Index, d.Request.Category,
		requestSummary(d.Request), d.What, truncN(d.Target.Summary(), 300), truncN(d.Oracle.Summary(), 300))
}

// requestSummary is the request line with the headers that are not the
// same in every request.
func requestSummary(r Request) string {
	lines := strings.Split(r.Raw, "\r\n")
	var keep []string
	for i, l := range lines {
		if l == "" {
			break
		}
		if i > 0 && (strings.HasPrefix(l, "Host: "+probeHost) || strings.HasPrefix(l, "User-Agent: ") || strings.HasPrefix(l, "Accept: ")) {
			continue
		}
		keep = append(keep, truncN(l, 100))
	}
	return fmt.Sprintf("%q", truncN(strings.Join(keep, " | "), 300))
}

// RandomResult is the outcome of the randomized probe.
type RandomResult struct {
	Seed uint64
	Sent int // requests sent to each server
	// OracleStatuses counts the oracle's answers by status (0: none).
	OracleStatuses map[int]int
	Differences    []Difference
}

// explained returns the configuration differences that explain every
// difference, or nil if some difference is not of that kind.
func (r RandomResult) explained() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range r.Differences {
		if d.Config == nil {
			return nil
		}
		for _, c := range d.Config {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Strings(out)
	return out
}

// nginxOwnPagesDiffer reports whether the target answered requests that
// nginx rejects before touching any file unlike nginx does: what any nginx
// says there does not depend on the kernel under it. A connection closed
// or stalled is not counted: a real nginx on a faulty kernel does that.
func (r RandomResult) nginxOwnPagesDiffer() bool {
	for _, d := range r.Differences {
		if d.Config != nil || d.Target.Err != "" || d.Oracle.Err != "" {
			continue
		}
		switch d.Request.Category {
		case CatMalformed, CatLong, CatTransfer:
			if d.Target.Status != d.Oracle.Status || nginxPage(d.Oracle.Body) && !nginxPage(d.Target.Body) {
				return true
			}
		}
	}
	return false
}

// LearnCorpus asks the oracle (HEAD, one keep-alive connection) for the
// validators of paths, and keeps those it serves with 200.
func LearnCorpus(ctx context.Context, oracle string, paths []string, dirs []string) (Corpus, error) {
	c, err := dial(ctx, oracle)
	if err != nil {
		return Corpus{}, err
	}
	defer c.Close()
	corpus := Corpus{Dirs: dirs}
	for _, p := range paths {
		r, err := c.do("HEAD", p, "", nil)
		if err != nil {
			return Corpus{}, err
		}
		if r.Status != 200 {
			continue
		}
		var size int64
		if cl, ok := r.Get("Content-Length"); ok {
			fmt.Sscan(cl, &size)
		}
		etag, _ := r.Get("ETag")
		lm, _ := r.Get("Last-Modified")
		corpus.Files = append(corpus.Files, CorpusFile{Path: p, Size: size, ETag: etag, LastModified: lm, Large: size > largeFile})
	}
	if len(corpus.Files) == 0 {
		return Corpus{}, fmt.Errorf("the oracle serves none of %v", paths)
	}
	return corpus, nil
}

// corpusPaths returns the paths the probe may ask about for t: the root
// filesystem's files up to maxCorpusFile (not the nonce: the oracle writes
// its own copy, with another mtime) and their directories; for a target
// with its own root filesystem only "/".
func corpusPaths(t Target) ([]string, []string) {
	if t.OwnRoot {
		return []string{"/"}, nil
	}
	paths := []string{"/"}
	for _, f := range t.Files {
		if f.Size <= maxCorpusFile {
			paths = append(paths, f.URLPath)
		}
	}
	return paths, DirsOf(paths)
}

// RandomProbe sends the seeded random requests to the target and to the
// oracle, a connection of each at a time, and compares the answers.
func RandomProbe(ctx context.Context, t Target, seed uint64, n int) (RandomResult, error) {
	res := RandomResult{Seed: seed, OracleStatuses: map[int]int{}}
	paths, dirs := corpusPaths(t)
	corpus, err := LearnCorpus(ctx, t.Oracle, paths, dirs)
	if err != nil {
		return res, fmt.Errorf("oracle: %w", err)
	}
	norm := normaliser{anyVersion: t.NginxVersion == ""}
	index := 0
	for _, b := range Generate(seed, corpus, n) {
		var got, want []Answer
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); got = runBatch(ctx, t.Addr, b, norm) }()
		go func() { defer wg.Done(); want = runBatch(ctx, t.Oracle, b, norm) }()
		wg.Wait()
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if want[0].Err == errConnect {
			return res, fmt.Errorf("oracle %s: %s", t.Oracle, errConnect)
		}
		// The oracle is nginx under qemu-user on a host that may be busy:
		// when it fails where the target answered, ask it again before
		// calling that a difference.
		for retry := 0; retry < oracleRetries && oracleFailed(got, want) && ctx.Err() == nil; retry++ {
			want = runBatch(ctx, t.Oracle, b, norm)
		}
		closedEarly := false
		for i, req := range b.Requests {
			index++
			res.Sent++
			res.OracleStatuses[want[i].Status]++
			full := !t.OwnRoot || req.About != ""
			if what := diff(got[i], want[i], full); what != "" {
				cfg := explain(got[i], want[i], full, closedEarly)
				res.Differences = append(res.Differences, Difference{Index: index, Request: req, What: what, Target: got[i], Oracle: want[i], Config: cfg})
			}
			if c, _ := got[i].get("Connection"); c == "close" {
				if wc, _ := want[i].get("Connection"); wc != "close" {
					closedEarly = true
				}
			}
		}
		if got[0].Err == errConnect {
			break // the target refused connections for a whole batch's time
		}
		timeouts := 0
		for _, d := range res.Differences {
			if d.Target.Err == errTimeout {
				timeouts++
			}
		}
		if len(res.Differences) >= maxDifferences || timeouts >= maxTimeouts {
			break
		}
	}
	return res, nil
}

// oracleRetries is how often a batch the oracle failed is sent to it again.
const oracleRetries = 2

// oracleFailed reports whether the oracle's answers hold a failure of its
// own (not an answer, not the end of a connection it closed) where the
// target answered.
func oracleFailed(got, want []Answer) bool {
	for i := range want {
		if want[i].Err != "" && want[i].Err != errUnanswered && got[i].Err == "" {
			return true
		}
	}
	return false
}

// runBatch sends a batch on a fresh connection and returns one answer per
// request.
func runBatch(ctx context.Context, addr string, b Batch, norm normaliser) []Answer {
	out := make([]Answer, len(b.Requests))
	fill := func(from int, why string) []Answer {
		for i := from; i < len(out); i++ {
			out[i] = Answer{Err: why}
		}
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, batchTimeout)
	defer cancel()
	c, err := dial(ctx, addr)
	if err != nil {
		return fill(0, errConnect)
	}
	defer c.Close()
	if b.Pipelined {
		var all strings.Builder
		for _, r := range b.Requests {
			all.WriteString(r.Raw)
		}
		if _, err := io.WriteString(c.c, all.String()); err != nil {
			c.answers.lose(lostReset)
			return fill(0, errClosed)
		}
	}
	for i, r := range b.Requests {
		if ctx.Err() != nil {
			return fill(i, errTimeout)
		}
		if !b.Pipelined {
			if _, err := io.WriteString(c.c, r.Raw); err != nil {
				c.answers.lose(lostReset)
				return fill(i, errClosed)
			}
		}
		dl := time.Now().Add(answerTimeout)
		if d, ok := ctx.Deadline(); ok && d.Before(dl) {
			dl = d
		}
		c.c.SetReadDeadline(dl)
		a := readAnswer(c, r.Method, norm)
		out[i] = a
		if a.Err != "" {
			return fill(i+1, errUnanswered)
		}
		if v, _ := a.get("Connection"); strings.EqualFold(v, "close") {
			return fill(i+1, errUnanswered)
		}
	}
	return out
}

// readAnswer reads one response, with the 1xx responses before it.
func readAnswer(c *conn, method string, norm normaliser) Answer {
	var interim []int
	for {
		r, err := readResponse(c.br, method, nil)
		if len(interim) == 0 {
			c.answers.record(err)
		}
		if err != nil {
			return Answer{Err: answerErr(err)}
		}
		if r.Status >= 100 && r.Status < 200 {
			interim = append(interim, r.Status)
			if len(interim) > 4 {
				return Answer{Err: "endless 1xx responses"}
			}
			continue
		}
		return norm.answer(r, interim)
	}
}

// answerErr names a read failure without what varies between runs
// (addresses, ports).
func answerErr(err error) string {
	switch classOf(err) {
	case report.ClassNoHTTPResponse:
		return errClosed
	case report.ClassTimeout:
		return errTimeout
	}
	var pe *probeError
	if !errors.As(err, &pe) {
		return errClosed
	}
	if strings.HasPrefix(pe.msg, "bad ") {
		return "not HTTP: " + pe.msg // the offending line, nothing of the connection
	}
	what, _, _ := strings.Cut(pe.msg, ":")
	return "cut short: " + what
}

// Index fetches "/" from addr and returns its body and Last-Modified time
// (now, when it has none: the fingerprint then fails on that).
func Index(ctx context.Context, addr string) ([]byte, time.Time, error) {
	r, err := get(ctx, addr, "/")
	if err != nil {
		return nil, time.Time{}, err
	}
	if r.Status != 200 {
		return nil, time.Time{}, fmt.Errorf("status %d", r.Status)
	}
	mtime := time.Now()
	if lm, ok := r.Get("Last-Modified"); ok {
		if t, err := http.ParseTime(lm); err == nil {
			mtime = t
		}
	}
	return r.Body, mtime, nil
}
