package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/probe"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// repeatResult is the JSON document of `jiege repeatability`.
type repeatResult struct {
	Schema  int       `json:"schema"`
	Kind    string    `json:"kind"` // "repeatability"
	Started time.Time `json:"started"`
	Host    string    `json:"host,omitempty"`
	// Selfchecks holds each selfcheck run's outcome per check, in order.
	Selfchecks []selfcheckOutcome `json:"selfchecks"`
	// SameVerdicts is true when every run gave every check the same
	// outcome (pass, or the stage and class it failed at).
	SameVerdicts bool     `json:"same_verdicts"`
	Disagreement []string `json:"disagreements,omitempty"`
	// Probes are the fingerprint's random requests, one seed a run, sent
	// to Debian's Linux and to the oracle.
	Probes            []probeRun      `json:"probes"`
	ProbeDifferences  int             `json:"probe_differences"`
	Pass              bool            `json:"pass"`
	Total             report.Duration `json:"total_s"`
	SelfcheckExitCode []int           `json:"selfcheck_exit_codes"`
}

// selfcheckOutcome is one selfcheck run: check name to outcome.
type selfcheckOutcome struct {
	Pass     bool              `json:"pass"`
	Outcomes map[string]string `json:"outcomes"`
	Order    []string          `json:"order"`
	Total    report.Duration   `json:"total_s"`
}

// probeRun is one seed's random requests.
type probeRun struct {
	Seed        uint64          `json:"seed"`
	Requests    int             `json:"requests"`
	Differences []string        `json:"differences,omitempty"`
	Error       string          `json:"error,omitempty"`
	Duration    report.Duration `json:"duration_s"`
}

func cmdRepeatability(ctx context.Context, args []string) error {
	fs := newFlags("repeatability", "[--selfchecks N] [--probe-runs N] [--out DIR]")
	c := &common{}
	c.flags(fs)
	v := &verifier{common: c, out: os.Stderr}
	var selfchecks, probeRuns int
	var outDir string
	var selfcheckArgs []string
	fs.IntVar(&selfchecks, "selfchecks", 3, "jiege selfcheck runs, one after the other")
	fs.IntVar(&probeRuns, "probe-runs", 20, "runs of the fingerprint's random requests, Linux against the oracle, each with a fresh seed")
	fs.StringVar(&outDir, "out", "", "write repeatability.json and repeatability.md here (default: <build-dir>/repeatability)")
	fs.StringSliceVar(&selfcheckArgs, "selfcheck-args", nil, "more flags for each selfcheck run (e.g. --only=linux,forgery)")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 || selfchecks < 0 || probeRuns < 0 {
		return usageErr("repeatability: want --selfchecks N and --probe-runs N (0 or more), no arguments")
	}
	c.defaults()
	if outDir == "" {
		outDir = filepath.Join(c.buildDir, "repeatability")
	}
	if err := c.preflight(); err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return envErr(err)
	}
	res := &repeatResult{Schema: report.SchemaVersion, Kind: "repeatability", Started: time.Now().UTC(), Host: hostDescription()}
	start := time.Now()
	save := func() error {
		res.Total = report.Duration(time.Since(start))
		res.judge()
		return writeOutputs(res, filepath.Join(outDir, "repeatability.json"), filepath.Join(outDir, "repeatability.md"), repeatMarkdown(res))
	}

	// The probes first: one Linux boot, one oracle, many seeds.
	if probeRuns > 0 {
		runs, err := v.probeLinux(ctx, probeRuns, func(r probeRun) {
			res.Probes = append(res.Probes, r)
			save()
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return envErr(fmt.Errorf("repeatability: %w", err))
		}
		res.Probes = runs
		if err := save(); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return envErr(err)
	}
	for i := range selfchecks {
		v.progress("repeatability: selfcheck %d of %d", i+1, selfchecks)
		out := filepath.Join(outDir, fmt.Sprintf("selfcheck-%d.json", i+1))
		code, err := runSelfcheck(ctx, self, c, out, selfcheckArgs)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return envErr(fmt.Errorf("repeatability: selfcheck %d: %w", i+1, err))
		}
		o, err := readSelfcheck(out)
		if err != nil {
			return envErr(fmt.Errorf("repeatability: selfcheck %d (exit %d): %w", i+1, code, err))
		}
		res.Selfchecks = append(res.Selfchecks, o)
		res.SelfcheckExitCode = append(res.SelfcheckExitCode, code)
		if err := save(); err != nil {
			return err
		}
	}
	if err := save(); err != nil {
		return err
	}
	fmt.Print(repeatMarkdown(res))
	fmt.Printf("report: %s\n", filepath.Join(outDir, "repeatability.md"))
	if !res.Pass {
		return errFailed
	}
	return nil
}

// runSelfcheck runs `jiege selfcheck` as a process of its own (its output
// on ours) and returns its exit status; 2 is an error.
func runSelfcheck(ctx context.Context, self string, c *common, jsonOut string, extra []string) (int, error) {
	args := []string{"selfcheck", "--json", jsonOut, "--build-dir", c.buildDir, "--log-dir", c.logDir, "--repo", c.repo}
	if c.mirror != "" {
		args = append(args, "--mirror", c.mirror)
	}
	cmd := exec.Command(self, append(args, extra...)...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// An interrupted selfcheck stops its QEMUs itself.
		cmd.Process.Signal(syscall.SIGINT)
		err = <-done
	}
	os.Stderr.Write(stdout.Bytes())
	code := cmd.ProcessState.ExitCode()
	if code == exitUsage || (err != nil && code < 0) {
		return code, fmt.Errorf("exit status %d: %v", code, err)
	}
	return code, nil
}

func readSelfcheck(path string) (selfcheckOutcome, error) {
	var r selfcheckResult
	b, err := os.ReadFile(path)
	if err != nil {
		return selfcheckOutcome{}, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return selfcheckOutcome{}, fmt.Errorf("%s: %v", path, err)
	}
	o := selfcheckOutcome{Pass: r.Pass, Outcomes: map[string]string{}, Total: r.Total}
	for _, ck := range r.Checks {
		o.Order = append(o.Order, ck.Target)
		o.Outcomes[ck.Target] = outcome(ck)
	}
	return o, nil
}

// probeLinux boots Debian's Linux once, starts the oracle once, and sends
// each run's random requests to both; each finished run is passed to done.
func (v *verifier) probeLinux(ctx context.Context, runs int, done func(probeRun)) ([]probeRun, error) {
	t, err := parseTarget(kindLinux)
	if err != nil {
		return nil, err
	}
	logPath := v.logPath(t)
	blog, err := createLog(logPath + ".build")
	if err != nil {
		return nil, err
	}
	s := v.build(ctx, t, blog)
	blog.Close()
	if !s.Passed() {
		return nil, fmt.Errorf("build linux: %s", s.Detail)
	}
	v.progress("repeatability: booting linux; console log %s", logPath)
	g, err := v.start(ctx, t, logPath)
	if err != nil {
		return nil, err
	}
	defer g.stop()
	if s, _ := probe.First200(ctx, g.Addr()); !s.Passed() {
		return nil, fmt.Errorf("linux: %s", s.Detail)
	}
	stop, oracle, err := v.oracle(ctx, t.image)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	defer stop()
	pt := probe.Target{Addr: g.Addr(), Oracle: oracle, NginxVersion: t.image.NginxVersion, Files: probeFiles(t.image.Files)}
	var out []probeRun
	seen := map[uint64]bool{}
	for i := range runs {
		seed := probe.NewSeed()
		for seen[seed] {
			seed = probe.NewSeed()
		}
		seen[seed] = true
		t0 := time.Now()
		pctx, cancel := context.WithTimeout(ctx, probe.FingerprintTimeout)
		rr, err := probe.RandomProbe(pctx, pt, seed, probe.RandomRequests)
		cancel()
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		r := probeRun{Seed: seed, Requests: rr.Sent, Duration: report.Duration(time.Since(t0))}
		if err != nil {
			r.Error = err.Error()
		}
		for _, d := range rr.Differences {
			r.Differences = append(r.Differences, d.String())
		}
		v.progress("repeatability: probe %d of %d, seed %d: %d requests, %d differences%s", i+1, runs, seed, r.Requests, len(r.Differences), errNote(r.Error))
		out = append(out, r)
		done(r)
	}
	return out, nil
}

func errNote(e string) string {
	if e == "" {
		return ""
	}
	return ", error: " + e
}

// judge compares the selfcheck runs and counts the probes' differences.
func (r *repeatResult) judge() {
	r.SameVerdicts, r.Disagreement = true, nil
	if len(r.Selfchecks) > 0 {
		first := r.Selfchecks[0]
		for i, o := range r.Selfchecks[1:] {
			if !slices.Equal(o.Order, first.Order) {
				r.SameVerdicts = false
				r.Disagreement = append(r.Disagreement, fmt.Sprintf("run %d ran checks %v, run 1 %v", i+2, o.Order, first.Order))
				continue
			}
			for _, name := range first.Order {
				if o.Outcomes[name] != first.Outcomes[name] {
					r.SameVerdicts = false
					r.Disagreement = append(r.Disagreement, fmt.Sprintf("%s: run 1 %s, run %d %s", name, first.Outcomes[name], i+2, o.Outcomes[name]))
				}
			}
		}
	}
	r.ProbeDifferences = 0
	probesOK := true
	for _, p := range r.Probes {
		r.ProbeDifferences += len(p.Differences)
		probesOK = probesOK && p.Error == ""
	}
	selfchecksPass := true
	for _, s := range r.Selfchecks {
		selfchecksPass = selfchecksPass && s.Pass
	}
	r.Pass = r.SameVerdicts && selfchecksPass && r.ProbeDifferences == 0 && probesOK
}

func repeatMarkdown(r *repeatResult) string {
	var b strings.Builder
	status := "PASS"
	if !r.Pass {
		status = "FAIL"
	}
	fmt.Fprintf(&b, "# jiege repeatability: %s\n\n", status)
	fmt.Fprintf(&b, "Started %s on %s; %.0f s.\n\n", r.Started.Format("2006-01-02 15:04 UTC"), r.Host, r.Total.Seconds())
	fmt.Fprintf(&b, "## The fingerprint's random requests, Debian's Linux against the oracle\n\n")
	requests, errs := 0, 0
	for _, p := range r.Probes {
		requests += p.Requests
		if p.Error != "" {
			errs++
		}
	}
	fmt.Fprintf(&b, "%d runs, %d requests in all, %d differences, %d runs with an error.\n\n", len(r.Probes), requests, r.ProbeDifferences, errs)
	if len(r.Probes) > 0 {
		b.WriteString("| run | seed | requests | differences | time |\n|---:|---:|---:|---:|---:|\n")
		for i, p := range r.Probes {
			fmt.Fprintf(&b, "| %d | %d | %d | %d%s | %.0f s |\n", i+1, p.Seed, p.Requests, len(p.Differences), errNote(p.Error), p.Duration.Seconds())
		}
		for _, p := range r.Probes {
			for _, d := range p.Differences {
				fmt.Fprintf(&b, "\n- seed %d: %s", p.Seed, strings.ReplaceAll(d, "|", `\|`))
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "## jiege selfcheck, %d runs\n\n", len(r.Selfchecks))
	if len(r.Selfchecks) > 0 {
		b.WriteString("| check |")
		for i := range r.Selfchecks {
			fmt.Fprintf(&b, " run %d |", i+1)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(r.Selfchecks)) + "\n")
		for _, name := range r.Selfchecks[0].Order {
			fmt.Fprintf(&b, "| %s |", name)
			for _, o := range r.Selfchecks {
				fmt.Fprintf(&b, " %s |", o.Outcomes[name])
			}
			b.WriteString("\n")
		}
		b.WriteString("| **selfcheck** |")
		for i, o := range r.Selfchecks {
			fmt.Fprintf(&b, " %s (exit %d, %.0f s) |", map[bool]string{true: "PASS", false: "FAIL"}[o.Pass], r.SelfcheckExitCode[i], o.Total.Seconds())
		}
		b.WriteString("\n\n")
		if r.SameVerdicts {
			b.WriteString("Every run gave every check the same verdict.\n")
		} else {
			b.WriteString("The runs disagree:\n\n")
			for _, d := range r.Disagreement {
				fmt.Fprintf(&b, "- %s\n", d)
			}
		}
	}
	return b.String()
}
