package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/probe/fakehttp"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// wantStopped checks that s failed as stopped-answering at request at of
// its stage, with how in the detail, and never as a wrong answer.
func wantStopped(t *testing.T, s report.Stage, at int, how string) {
	t.Helper()
	wantStage(t, s, report.Fail, report.ClassStoppedAnswering)
	t.Log(s.Detail)
	if want := fmt.Sprintf("stopped answering at request %d of this stage", at); at > 0 && !strings.Contains(s.Detail, want) {
		t.Errorf("detail %q, want %q", s.Detail, want)
	}
	if !strings.Contains(s.Detail, how) || !strings.Contains(s.Detail, "fresh GET / after the stage") {
		t.Errorf("detail %q does not say %q and what came after the stage", s.Detail, how)
	}
	for _, wrong := range []string{"differs", "another configuration", "keep-alive"} {
		if strings.Contains(s.Detail, wrong) {
			t.Errorf("detail %q reports a wrong answer (%q) where none came", s.Detail, wrong)
		}
	}
}

// Each stage that sends many requests, against a server that dies after
// a number of answers: refusing connections from then on, or accepting
// and closing them as QEMU's hostfwd does once the guest's server is gone.
func TestStoppedAnswering(t *testing.T) {
	tg, files := fixture(t)
	for _, accepting := range []bool{false, true} {
		how := lostRefused
		if accepting {
			how = lostClosed
		}
		t.Run(fmt.Sprintf("accepting=%v", accepting), func(t *testing.T) {
			dying := func(after int64) Target {
				srv := start(t, fakehttp.Options{Files: files, DieAfter: after, DieAccepting: accepting})
				tg := tg
				tg.Addr = srv.Addr
				return tg
			}
			run := func(tg Target, stage func(context.Context, Target) report.Stage) report.Stage {
				return NewAnswers(tg.Addr).Run(ctxFor(t, 40*time.Second), func(ctx context.Context) report.Stage { return stage(ctx, tg) })
			}
			t.Run("fingerprint", func(t *testing.T) {
				// The fixed sequence on one connection: the 6th request is lost.
				// The dying server closes that connection with a FIN or, when
				// the request had already arrived unread, a reset: either is
				// an answer lost, whichever the host's timing gives.
				s := run(dying(5), Fingerprint)
				how := lostClosed
				if strings.Contains(s.Detail, "from then on "+lostReset) {
					how = lostReset
				}
				wantStopped(t, s, 6, how)
			})
			t.Run("random-fingerprint", func(t *testing.T) {
				// The fixed sequence (9), then random requests to the target and
				// a live oracle; the server dies at the 50th answer. Requests
				// the imitation leaves unanswered (malformed ones) make the
				// exact number vary; it is past the fixed sequence.
				oracle := start(t, fakehttp.Options{Files: files})
				tg := dying(50)
				tg.Oracle, tg.Seed = oracle.Addr, 7
				s := run(tg, Fingerprint)
				wantStopped(t, s, 0, "fresh GET")
				var at int
				if _, err := fmt.Sscanf(s.Detail[strings.Index(s.Detail, "at request "):], "at request %d", &at); err != nil || at < 10 {
					t.Errorf("detail %q: stopped at %d (%v), want past the fixed sequence", s.Detail, at, err)
				}
			})
			t.Run("content", func(t *testing.T) {
				s := run(dying(2), Content)
				wantStopped(t, s, 3, "")
			})
			t.Run("stability", func(t *testing.T) {
				// The reference GET, the keep-alive check, then the bar.
				s := run(dying(200), func(ctx context.Context, tg Target) report.Stage { return Stability(ctx, tg, DefaultBars) })
				wantStopped(t, s, 201, "")
			})
			t.Run("survival", func(t *testing.T) {
				tg := dying(1)
				if _, err := get(ctxFor(t, time.Second), tg.Addr, "/"); err != nil {
					t.Fatal(err)
				}
				s := run(tg, func(ctx context.Context, tg Target) report.Stage {
					ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					defer cancel()
					return Survival(ctx, tg.Addr)
				})
				wantStopped(t, s, 0, how)
			})
		})
	}
}

// A stage failed by wrong answers keeps its verdict, and so does one whose
// server missed requests but answers again.
func TestStoppedAnsweringNotClaimed(t *testing.T) {
	tg, files := fixture(t)
	srv := start(t, fakehttp.Options{Files: files, Flavor: fakehttp.Pretender})
	tg.Addr = srv.Addr
	a := NewAnswers(tg.Addr)
	s := a.Run(ctxFor(t, 10*time.Second), func(ctx context.Context) report.Stage { return Fingerprint(ctx, tg) })
	wantStage(t, s, report.Fail, report.ClassFingerprint)

	// The loss is followed by an answer: not current.
	a.lose(lostReset)
	s = a.Run(ctxFor(t, 10*time.Second), func(ctx context.Context) report.Stage {
		return report.Failf(report.StageContent, report.ClassContentMismatch, 0, "wrong bytes")
	})
	wantStage(t, s, report.Fail, report.ClassContentMismatch)
}

func TestAnswersCount(t *testing.T) {
	a := NewAnswers("x")
	a.answered(3)
	a.lose(lostRefused)
	a.lose(lostClosed)
	a.lose(lostClosed)
	if at, how := a.Loss(); at != 4 || how != lostClosed+" x2, "+lostRefused+" x1" {
		t.Errorf("Loss() = %d, %q", at, how)
	}
	a.record(perr(report.ClassBadStatus, "GET / answered 500"))
	if at, _ := a.Loss(); at != 0 || a.Sent() != 7 {
		t.Errorf("after a wrong answer: lost from %d, sent %d", at, a.Sent())
	}
	var nilAnswers *Answers
	nilAnswers.record(io.EOF) // an unfollowed server
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{perr(report.ClassConnectRefused, "connect: %v", syscall.ECONNREFUSED), lostRefused},
		{fmt.Errorf("GET /: %w", syscall.ECONNRESET), lostReset},
		{perr(report.ClassNoHTTPResponse, "connection closed before any response byte"), lostClosed},
		{perr(report.ClassBadResponse, "headers cut short: %v", io.EOF), lostCut},
		{perr(report.ClassBadResponse, "bad status line %q", "SSH-2.0"), ""},
		{context.DeadlineExceeded, lostTimeout},
		{errors.New("something else"), ""},
	} {
		if got := lostHow(c.err); got != c.want {
			t.Errorf("lostHow(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
