package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/probe"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// gitTimeout bounds one git command of replay (a fetch of a large history
// included).
const gitTimeout = 5 * time.Minute

// git runs git in dir and returns its standard output. safe.directory: an
// attempt's repository belongs to whoever made it.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "safe.directory=*", "-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// firstParentLine lists HEAD's first-parent history of the repository at
// dir, oldest first.
func firstParentLine(ctx context.Context, dir string) ([]report.ReplayCommit, error) {
	out, err := git(ctx, dir, "log", "--first-parent", "--format=%H%x1f%cI%x1f%s", "HEAD")
	if err != nil {
		return nil, err
	}
	var cs []report.ReplayCommit
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.SplitN(l, "\x1f", 3)
		if len(f) != 3 {
			continue
		}
		t, err := time.Parse(time.RFC3339, f[1])
		if err != nil {
			return nil, fmt.Errorf("commit %s: time %q: %v", f[0], f[1], err)
		}
		cs = append(cs, report.ReplayCommit{Hash: f[0], Time: t, Subject: f[2]})
	}
	for i, j := 0, len(cs)-1; i < j; i, j = i+1, j-1 {
		cs[i], cs[j] = cs[j], cs[i]
	}
	return cs, nil
}

// replayer verifies commits of one attempt's history in a checkout of its
// own, so the attempt's repository is only read.
type replayer struct {
	v          *verifier
	res        *report.Replay
	work       string // the checkout
	sub        string // the attempt's directory inside it ("" at the top)
	build, run string
	guestPort  int
}

// verify checks out commit i, builds and verifies it once; later calls
// return the recorded result.
func (r *replayer) verify(ctx context.Context, i int) (*report.Verify, error) {
	c := &r.res.Commits[i]
	if c.Verify != nil {
		return c.Verify, nil
	}
	if _, err := git(ctx, r.work, "checkout", "-q", "-f", "--detach", c.Hash); err != nil {
		return nil, err
	}
	// Each commit is built from its own files only.
	if _, err := git(ctx, r.work, "clean", "-q", "-ffdx"); err != nil {
		return nil, err
	}
	t, err := attemptTarget(filepath.Join(r.work, r.sub), r.build, r.run)
	if err != nil {
		return nil, err
	}
	t.att.GuestPort = r.guestPort
	t.name = "replay-" + c.Hash[:12]
	r.v.progress("replay: commit %d/%d %.12s %s (%s)", i+1, len(r.res.Commits), c.Hash, c.Time.UTC().Format(time.DateTime), oneLineSubject(c.Subject))
	c.Verify = r.v.run(ctx, t)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	r.v.progress("replay: commit %.12s: %s", c.Hash, verdictLine(c.Verify))
	return c.Verify, nil
}

func oneLineSubject(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// samples are the commits verified first: every nth from the first, and
// the last.
func samples(n, every int) []int {
	var s []int
	for i := 0; i < n; i += every {
		s = append(s, i)
	}
	if s[len(s)-1] != n-1 {
		s = append(s, n-1)
	}
	return s
}

// firstReaching returns the first commit that reaches m: the first sampled
// commit that does, then bisected down to the sampled commit before it
// (or to lo, a commit known not to reach it). -1: no sampled commit does.
// Bisection assumes that once a commit reaches a milestone, later ones do.
func (r *replayer) firstReaching(ctx context.Context, m report.Milestone, sampled []int, lo int) (int, error) {
	hi := -1
	prev := -1
	for _, i := range sampled {
		v, err := r.verify(ctx, i)
		if err != nil {
			return 0, err
		}
		if m.Reached(v) {
			hi = i
			break
		}
		prev = i
	}
	if hi < 0 {
		return -1, nil
	}
	lo = max(lo, prev)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		v, err := r.verify(ctx, mid)
		if err != nil {
			return 0, err
		}
		if m.Reached(v) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

func cmdReplay(ctx context.Context, args []string) error {
	fs := newFlags("replay", "DIR [--every N] [--build CMD] [--run CMD]")
	c := &common{}
	c.flags(fs)
	v := &verifier{common: c, out: os.Stderr}
	var every, guestPort int
	var build, runCmd, jsonOut, mdOut string
	fs.IntVar(&every, "every", 10, "verify every Nth commit of the first-parent line (and the last), then bisect")
	fs.StringVar(&build, "build", "", "attempt build command (default: make build)")
	fs.StringVar(&runCmd, "run", "", "attempt run command (default: make run)")
	fs.IntVar(&guestPort, "guest-port", 0, "port nginx listens on in the guest (default 80)")
	fs.DurationVar(&v.portTimeout, "port-timeout", probe.PortOpenTimeout, "time allowed for the port to answer HTTP")
	fs.BoolVar(&v.noOracle, "no-oracle", false, "fingerprint without the qemu-user nginx oracle")
	fs.StringVar(&jsonOut, "json", "", "write the result as JSON to FILE")
	fs.StringVar(&mdOut, "md", "", "write the result as Markdown to FILE")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("replay: want one attempt DIR")
	}
	if every < 1 {
		return usageErr("replay: --every %d: want 1 or more", every)
	}
	if c.port != 0 {
		return usageErr("replay: --port is not supported (each boot picks a free port)")
	}
	dir, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return usageErr("replay: %v", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usageErr("replay: %s: not a directory", dir)
	}
	if _, err := exec.LookPath("git"); err != nil {
		return envErr(fmt.Errorf("replay: git is not installed"))
	}
	commits, err := firstParentLine(ctx, dir)
	if err != nil {
		return usageErr("replay: %s: no git history: %v", dir, err)
	}
	if len(commits) == 0 {
		return usageErr("replay: %s: no commits", dir)
	}
	// An attempt may be a directory inside a larger repository.
	top, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return usageErr("replay: %s: %v", dir, err)
	}
	prefix, err := git(ctx, dir, "rev-parse", "--show-prefix")
	if err != nil {
		return usageErr("replay: %s: %v", dir, err)
	}
	c.defaults()
	if err := c.preflight(); err != nil {
		return err
	}

	// A repository of jiege's own, holding HEAD's history fetched from the
	// attempt's: checking out and cleaning never touch the attempt.
	tmp, err := os.MkdirTemp("", "jiege-replay-")
	if err != nil {
		return envErr(err)
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "attempt")
	if err := os.Mkdir(work, 0o755); err != nil {
		return envErr(err)
	}
	if _, err := git(ctx, work, "init", "-q"); err != nil {
		return envErr(err)
	}
	if _, err := git(ctx, work, "fetch", "-q", "--no-tags", strings.TrimSpace(top), "HEAD"); err != nil {
		return envErr(err)
	}

	res := report.NewReplay(dir, every)
	res.Host = hostDescription()
	res.Commits = commits
	r := &replayer{v: v, res: res, work: work, sub: strings.TrimSpace(prefix), build: build, run: runCmd, guestPort: guestPort}
	start := time.Now()
	sampled := samples(len(commits), every)
	for _, i := range sampled {
		commits[i].Sampled = true
	}
	lo := -1
	for _, m := range report.Milestones {
		e := report.TimelineEntry{Milestone: m.Name, Stage: m.Stage, Index: -1}
		first, err := r.firstReaching(ctx, m, sampled, lo)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return envErr(err)
		}
		if first >= 0 {
			fc := commits[first]
			e.Reached, e.Index, e.Hash, e.Time, e.Subject = true, first, fc.Hash, fc.Time, fc.Subject
			e.After = report.Duration(fc.Time.Sub(commits[0].Time))
			e.Exact = first == 0 || (commits[first-1].Verify != nil && !m.Reached(commits[first-1].Verify))
			// Later milestones are reached no earlier than this one.
			lo = first - 1
		}
		res.Timeline = append(res.Timeline, e)
	}
	res.Total = report.Duration(time.Since(start))
	fmt.Print(report.ReplayText(res))
	return writeOutputs(res, jsonOut, mdOut, report.ReplayMarkdown(res))
}
