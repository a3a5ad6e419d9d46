package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/attempt"
	"github.com/jiege-go/jiege/tools/jiege/internal/console"
	"github.com/jiege-go/jiege/tools/jiege/internal/probe"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// How the console is watched.
const (
	watchEvery = 100 * time.Millisecond
	// panicSettle is how long a panic dump is given to reach the console
	// after its first line.
	panicSettle = 300 * time.Millisecond
	// relaunchGrace is how long an attempt's run command, still running,
	// may go without a QEMU before that counts as QEMU having exited (a run
	// script may start QEMU a second time).
	relaunchGrace = 3 * time.Second
	// clockSlack is the precision of a process's start time (two of
	// /proc's clock ticks).
	clockSlack = 10 * time.Millisecond
	// relaunchSettle is how long an attempt's QEMUs must all stay up after
	// a kernel line for the line to count as the serving kernel's.
	relaunchSettle = 500 * time.Millisecond
	// answerCheck is how long a failed stage's server is given to show it
	// still answers, when a trap register dump is on the console.
	answerCheck = 3 * time.Second
)

// watch is what the console watcher found that ends a stage at once.
type watch struct {
	mu     sync.Mutex
	class  string // report.ClassKernelPanic or report.ClassQEMUExited
	detail string
}

func (w *watch) set(class, detail string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.class == "" {
		w.class, w.detail = class, detail
	}
}

func (w *watch) get() (class, detail string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.class, w.detail
}

// follower returns the guest's console follower, made once the guest's
// QEMU runs: an attempt's console from the moment the shim launched QEMU
// on (what the run command printed before is not the guest's), nil before.
// The provenance file scan starts at the same moment.
func (g *guest) follower() *console.Follower {
	if g.follow == nil && (g.run == nil || g.alive()) {
		var from int64
		if g.run != nil {
			// What the run command printed before QEMU (make's echo of
			// the command, a compiler's output) is not the guest's: the
			// console is followed from the line the shim printed just
			// before it became QEMU, or for a QEMU beside the shim
			// (looked for only every half second) from where its
			// process started; else from now.
			from = g.ConsoleBytes()
			if l, _, _, ok := g.run.Serving(); ok && !l.Started().IsZero() {
				start := g.ConsoleBytesAt(l.Started().Add(-2 * clockSlack))
				switch end := shimLineEnd(g.LogPath(), start); {
				case !l.Shimmed:
					from = start
				case end >= 0:
					from = end
				}
			}
		}
		g.follow = console.Follow(g.LogPath(), from)
		g.startScan()
	}
	return g.follow
}

// shimLineEnd is the log offset just past the last line of the shim
// ("jiege: qemu ...") at or after from, -1 when there is none yet.
func shimLineEnd(path string, from int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	b, _ := io.ReadAll(io.NewSectionReader(f, from, 1<<20))
	i := bytes.LastIndex(b, []byte("\n"+attempt.ShimLine)) + 1 // the line's start; 0 when none after a newline
	if i == 0 && !bytes.HasPrefix(b, []byte(attempt.ShimLine)) {
		return -1
	}
	j := bytes.IndexByte(b[i:], '\n')
	if j < 0 {
		return -1
	}
	return from + int64(i+j+1)
}

// settle polls f a little longer, so that a panic's dump is complete.
func settle(f *console.Follower) {
	for t := time.Duration(0); t < panicSettle; t += watchEvery / 2 {
		time.Sleep(watchEvery / 2)
		f.Poll()
	}
}

// panicDetail quotes the console lines that show a panic.
func panicDetail(lines []string) string {
	var keep []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	return "the console shows a kernel panic: " + clip(strings.Join(keep, " | "), 600)
}

// silentDump returns the console's last trap register dump when the
// kernel went silent after it, else nil.
func (g *guest) silentDump() []string {
	if g.follow == nil {
		return nil
	}
	g.follow.Poll()
	if lines, silent := g.follow.Dump(); silent {
		return lines
	}
	return nil
}

// dumpDetail quotes a trap register dump after which the kernel went
// silent; why says how the kernel's end showed.
func dumpDetail(lines []string, why string) string {
	return fmt.Sprintf("the console shows a trap register dump, then the kernel went silent (%s): %s",
		why, clip(strings.Join(lines, " | "), 600))
}

// dumpNote notes on s a trap register dump that came while the server
// went on, once per dump: a kernel may print trap registers routinely.
func (g *guest) dumpNote(s *report.Stage) {
	if g.follow == nil {
		return
	}
	g.follow.Poll()
	lines, _ := g.follow.Dump()
	if len(lines) == 0 || lines[0] == g.notedDump {
		return
	}
	g.notedDump = lines[0]
	s.Detail += "; console note (no verdict): trap registers printed while the server went on: " + clip(lines[0], 200)
}

// answers reports whether the guest's server still answers a request.
func (g *guest) answers() bool {
	if !g.alive() {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), answerCheck)
	defer cancel()
	return probe.PortOpen(ctx, g.Addr()).Passed()
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// consoleTail is the last console lines for a failure detail.
func (g *guest) consoleTail() string {
	if g.follow != nil {
		g.follow.Poll()
		if t := g.follow.Tail(6); len(t) > 0 {
			return clip(strings.Join(t, " | "), 600)
		}
	}
	return tail(g.Tail(300))
}

// gone reports whether the guest's QEMU is gone for good: exited, or for an
// attempt, none of its QEMUs running since since (zero: just noticed).
func (g *guest) gone(since time.Time) bool {
	if g.alive() {
		return false
	}
	return g.run == nil || g.Exited() || time.Since(since) >= relaunchGrace
}

// network says what the packet capture of an attempt's QEMU shows about
// the connections to the guest's HTTP port, or "" without a capture.
func (g *guest) network() string {
	if g.run == nil {
		return ""
	}
	l, _, _, ok := g.run.Serving()
	if !ok {
		ls := g.run.Launches()
		if len(ls) == 0 {
			return ""
		}
		l = ls[len(ls)-1]
	}
	if !l.Shimmed {
		return "not captured (the QEMU did not come through jiege's shim)"
	}
	if l.Capture == "" {
		return "not captured (the attempt's network option has no netdev id to attach QEMU's filter-dump to)"
	}
	c, err := attempt.ReadCapture(l.Capture, g.run.GuestPort())
	if err != nil {
		return fmt.Sprintf("capture %s not read: %v", l.Capture, err)
	}
	return c.String() + " (QEMU filter-dump capture)"
}

func (g *guest) exitDetail(stage string) string {
	how := "QEMU exited"
	if g.run == nil {
		how += " (" + exitStatus(g.Wait()) + ")"
	}
	d := fmt.Sprintf("%s during %s; console tail: %s", how, stage, g.consoleTail())
	if n := g.network(); n != "" {
		d += "; network: " + n
	}
	return d
}

// exitStatus describes a QEMU process's exit.
func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// watchConsole follows the console while the stages after boot run: a
// panic line or exception dump, or QEMU exiting, ends the returned context
// at once, and alive then fails the current stage with what was seen.
func (g *guest) watchConsole(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	g.watch = &watch{}
	f := g.follower()
	go func() {
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		var missing time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			f.Poll()
			if p := f.Panic(); p != nil {
				settle(f)
				g.watch.set(report.ClassKernelPanic, panicDetail(f.Panic()))
				cancel()
				return
			}
			switch {
			case g.alive():
				missing = time.Time{}
			case missing.IsZero():
				missing = time.Now()
			}
			if !missing.IsZero() && g.gone(missing) {
				if d := g.silentDump(); d != nil {
					g.watch.set(report.ClassKernelPanic, dumpDetail(d, "QEMU exited"))
				} else {
					g.watch.set(report.ClassQEMUExited, "")
				}
				cancel()
				return
			}
		}
	}()
	return ctx, cancel
}

// alive turns a stage's result into the verdict that points at the cause:
// a panic or QEMU's exit seen on the console replaces it, and so does a
// trap register dump after which the kernel went silent and the server
// stopped answering; a failed stage with QEMU gone says so; a failed
// fingerprint says in plain words how the server differs from stock
// nginx. A register dump while the server went on is a note.
func (v *verifier) alive(g *guest, s report.Stage) report.Stage {
	if g.watch != nil {
		switch class, detail := g.watch.get(); class {
		case report.ClassKernelPanic:
			return report.Failf(s.Name, class, s.Duration.D(), "%s", detail)
		case report.ClassQEMUExited:
			return report.Failf(s.Name, class, s.Duration.D(), "%s", g.exitDetail(s.Name))
		}
	}
	if !s.Passed() {
		if d := g.silentDump(); d != nil && !g.answers() {
			return report.Failf(s.Name, report.ClassKernelPanic, s.Duration.D(), "%s; the stage: %s",
				dumpDetail(d, "the server stopped answering"), s.Detail)
		}
	}
	g.dumpNote(&s)
	if s.Passed() {
		return s
	}
	if s.Class == report.ClassStoppedAnswering {
		state := "QEMU still running"
		if !g.alive() {
			state = "QEMU no longer running"
		}
		s.Detail += "; " + state + "; console tail: " + g.consoleTail()
		if n := g.network(); n != "" {
			s.Detail += "; network: " + n
		}
		return s
	}
	if !g.alive() {
		s.Detail += "; QEMU exited, console tail: " + g.consoleTail()
		if n := g.network(); n != "" {
			s.Detail += "; network: " + n
		}
		return s
	}
	if g.run != nil && (s.Name == report.StagePortOpen || s.Name == report.StageFirst200) {
		// What jiege saw of a silent attempt.
		s.Detail += "; what jiege saw: console tail: " + g.consoleTail()
		if n := g.network(); n != "" {
			s.Detail += "; network: " + n
		}
	}
	if s.Name == report.StageFingerprint && (s.Class == report.ClassFingerprint || s.Class == report.ClassNotNginx) {
		var news []string
		for _, why := range probe.Explain(context.Background(), g.Addr(), g.nginxVersion) {
			if !strings.Contains(s.Detail, why) {
				news = append(news, why)
			}
		}
		if len(news) > 0 {
			s.Detail += "; in plain words: " + strings.Join(news, "; ")
		}
	}
	return s
}

// bootStage waits until the kernel prints a console line while its QEMU
// runs. Lines from the firmware (OpenSBI's banner), QEMU or jiege do not
// count; a panic line or QEMU's exit fails the stage at once.
func (c *common) bootStage(ctx context.Context, g *guest) report.Stage {
	t0 := time.Now()
	deadline := time.NewTimer(c.bootTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	firmwareOnly := func() string {
		f := g.follow
		switch {
		case f == nil || !f.OtherOutput():
			return ""
		case f.Firmware() != "":
			return fmt.Sprintf("; only the firmware's banner (%s) and QEMU's output came; last lines: %s", f.Firmware(), g.consoleTail())
		}
		return "; only QEMU's or jiege's output came: " + g.consoleTail()
	}
	// An attempt's QEMU that exits (a first try before the one that
	// serves) takes what it printed with it: QEMU's own loader errors
	// ("PATH: No such file or directory") are no kernel's line. The
	// console is followed afresh from where the next QEMU's process
	// started, and a kernel line counts once no QEMU exited within
	// relaunchSettle of it.
	dead := map[int]bool{}
	relaunched := func() bool {
		if g.run == nil {
			return false
		}
		exited := false
		for _, l := range g.run.Launches() {
			if !dead[l.PID] && !g.run.Alive(l) {
				dead[l.PID], exited = true, true
			}
		}
		if exited {
			// Followed afresh from where the next serving QEMU started.
			g.follow = nil
		}
		return exited
	}
	var missing time.Time
	for {
		relaunched()
		if f := g.follower(); f != nil {
			f.Poll()
			if p := f.Panic(); p != nil {
				settle(f)
				return report.Failf(report.StageBoot, report.ClassKernelPanic, time.Since(t0), "%s", panicDetail(f.Panic()))
			}
			if line, ok := f.KernelLine(); ok && g.alive() {
				if g.run != nil {
					time.Sleep(relaunchSettle)
					if relaunched() {
						continue
					}
				}
				return report.Passf(report.StageBoot, time.Since(t0), "the kernel printed %q after %.1fs", clip(line, 80), time.Since(t0).Seconds())
			}
		}
		switch {
		case g.alive():
			missing = time.Time{}
		case missing.IsZero():
			missing = time.Now()
		}
		if g.Exited() && g.gone(missing) {
			if d := g.silentDump(); d != nil {
				return report.Failf(report.StageBoot, report.ClassKernelPanic, time.Since(t0), "%s", dumpDetail(d, "QEMU exited"))
			}
			return report.Failf(report.StageBoot, report.ClassBootFailed, time.Since(t0),
				"QEMU exited (%s) before the kernel printed a line; console tail: %s", exitStatus(g.Wait()), g.consoleTail())
		}
		select {
		case <-ctx.Done():
			return report.Failf(report.StageBoot, report.ClassInternal, time.Since(t0), "interrupted")
		case <-deadline.C:
			if g.run != nil && g.follow == nil {
				return report.Failf(report.StageBoot, report.ClassTimeout, time.Since(t0),
					"the run command started no qemu-system-riscv64 (through jiege's shim on PATH or otherwise) within %v", c.bootTimeout)
			}
			return report.Failf(report.StageBoot, report.ClassTimeout, time.Since(t0),
				"no console line from the kernel within %v (QEMU still running)%s", c.bootTimeout, firmwareOnly())
		case <-tick.C:
		}
	}
}
