package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/load"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// How a request went without an answer.
const (
	lostRefused = "connection refused"
	lostReset   = "connection reset"
	lostTimeout = "no answer before the timeout"
	lostClosed  = "connection closed without a byte"
	lostCut     = "connection closed mid-answer"
	// lostMidway is a load run's "closed or reset before the response was
	// complete".
	lostMidway = "connection closed or reset before a whole answer"
)

// Answers follows whether the server under test still answers. Every
// request a stage sends it (or tries to: a refused connect counts) is
// counted as answered, rightly or not, or as lost; the losses since the
// last answer say from which request on, and how, it stopped answering.
// Requests to other addresses (the oracle) are not counted.
type Answers struct {
	addr string

	mu       sync.Mutex
	sent     int            // requests counted
	lostFrom int            // the first request lost since the last answer; 0 when the last was answered
	lost     map[string]int // how the requests from lostFrom on were lost
}

// NewAnswers follows the server at addr.
func NewAnswers(addr string) *Answers { return &Answers{addr: addr} }

type answersKey struct{}

// answersFor returns the Answers that ctx carries for addr, or nil.
func answersFor(ctx context.Context, addr string) *Answers {
	a, _ := ctx.Value(answersKey{}).(*Answers)
	if a == nil || a.addr != addr {
		return nil
	}
	return a
}

// answered counts n answered requests. Nil-safe, as are record and lose.
func (a *Answers) answered(n int) {
	if a == nil || n <= 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sent += n
	a.lostFrom, a.lost = 0, nil
}

// lose counts one request lost in the given way.
func (a *Answers) lose(how string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sent++
	if a.lostFrom == 0 {
		a.lostFrom, a.lost = a.sent, map[string]int{}
	}
	a.lost[how]++
}

// record counts one request by the error it ended with: nil or an answer
// that came, right or wrong, is an answer.
func (a *Answers) record(err error) {
	if how := lostHow(err); how != "" {
		a.lose(how)
	} else {
		a.answered(1)
	}
}

// recordLoad counts a load run's requests: its failures are losses when
// no byte or only part of an answer came.
func (a *Answers) recordLoad(r *load.Result) {
	a.answered(int(r.Requests) + int(r.Errors.BadStatus+r.Errors.BadResponse+r.Errors.BadBody))
	for how, n := range map[string]int64{lostRefused: r.Errors.ConnectFail, lostMidway: r.Errors.Reset, lostTimeout: r.Errors.Timeout} {
		for range n {
			a.lose(how)
		}
	}
}

// Sent returns how many requests have been counted.
func (a *Answers) Sent() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sent
}

// Loss returns the request from which on none was answered (0 when the
// last one was) and how those went, e.g. "connection refused x40".
func (a *Answers) Loss() (int, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lostFrom, countsText(a.lost)
}

// countsText lists counted kinds, most frequent first.
func countsText(m map[string]int) string {
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if m[kinds[i]] != m[kinds[j]] {
			return m[kinds[i]] > m[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s x%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// lostHow says how a request that ended with err went unanswered, or ""
// when it was answered (err nil, or a wrong answer).
func lostHow(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.ECONNREFUSED), classOf(err) == report.ClassConnectRefused:
		return lostRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return lostReset
	case classOf(err) == report.ClassTimeout:
		return lostTimeout
	case classOf(err) == report.ClassNoHTTPResponse:
		return lostClosed
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return lostCut
	}
	return ""
}

// After a stage that lost requests, the server is asked again this many
// times, each bounded by recheckTimeout, recheckEvery apart.
const (
	rechecks       = 3
	recheckTimeout = 3 * time.Second
	recheckEvery   = 500 * time.Millisecond
)

// Run runs a stage with every request to the followed server counted.
// When the stage fails after the server stopped answering during it, and
// the server still answers nothing afterwards, its verdict is replaced by
// ClassStoppedAnswering: the request from which on nothing was answered,
// what those requests got, and what fresh requests get now. A stage ended
// by ctx (a panic or QEMU's exit seen on the console) is left as it is.
func (a *Answers) Run(ctx context.Context, stage func(context.Context) report.Stage) report.Stage {
	from := a.Sent()
	s := stage(context.WithValue(ctx, answersKey{}, a))
	if s.Passed() || ctx.Err() != nil {
		return s
	}
	at, how := a.Loss()
	if at == 0 {
		return s
	}
	now := map[string]int{}
	for i := range rechecks {
		if i > 0 {
			time.Sleep(recheckEvery)
		}
		how := knock(ctx, a.addr)
		if how == "" {
			return s // it answers again: the stage's own verdict stands
		}
		now[how]++
	}
	where := fmt.Sprintf("request %d of jiege's since port-open", at)
	switch {
	case at > from && from > 0:
		where = fmt.Sprintf("request %d of this stage (%d of jiege's since port-open)", at-from, at)
	case at > from:
		where = fmt.Sprintf("request %d of this stage", at)
	}
	return report.Failf(s.Name, report.ClassStoppedAnswering, s.Duration.D(),
		"the server stopped answering at %s: from then on %s; %d fresh GET / after the stage: %s",
		where, how, rechecks, countsText(now))
}

// knock sends GET / on one fresh connection, without the dialer's
// retries, and says how it went unanswered, or "" when a byte came.
func knock(ctx context.Context, addr string) string {
	ctx, cancel := context.WithTimeout(ctx, recheckTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if how := lostHow(err); how != "" {
			return how
		}
		return lostRefused
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	c.SetDeadline(dl)
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+addr+"\r\nUser-Agent: jiege-probe\r\nConnection: close\r\n\r\n"); err != nil {
		return lostReset
	}
	var b [1]byte
	switch _, err := c.Read(b[:]); {
	case err == nil:
		return ""
	case errors.Is(err, io.EOF):
		return lostClosed
	case errors.Is(err, syscall.ECONNRESET):
		return lostReset
	}
	return lostTimeout
}
