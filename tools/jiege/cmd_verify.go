package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/jiege-go/jiege/qemu"
	"github.com/jiege-go/jiege/tools/jiege/internal/probe"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
	"github.com/jiege-go/jiege/tools/jiege/internal/rootfs"
)

// verifier runs the stages against one target.
type verifier struct {
	*common
	portTimeout time.Duration
	noOracle    bool
	// strictConfig fails an nginx whose configuration deviates from
	// jiege's, instead of passing it with deviations.
	strictConfig bool
	seed         uint64    // the fingerprint's random requests; 0: a fresh seed
	out          io.Writer // live progress
}

func (v *verifier) progress(format string, args ...any) {
	fmt.Fprintf(v.out, "jiege: "+format+"\n", args...)
}

func (v *verifier) stage(res *report.Verify, s report.Stage) bool {
	res.Add(s)
	mark := "PASS"
	if !s.Passed() {
		mark = "FAIL [" + s.Class + "]"
	}
	v.progress("%-18s %s (%.1fs) %s", s.Name, mark, s.Duration.Seconds(), s.Detail)
	return s.Passed()
}

// skipRest records every stage after the failed one as skipped.
func skipRest(res *report.Verify) {
	done := map[string]bool{}
	for _, s := range res.Stages {
		done[s.Name] = true
	}
	for _, name := range report.StageOrder {
		if !done[name] {
			res.Stages = append(res.Stages, report.Stage{Name: name, Status: report.Skip, Detail: "an earlier stage failed"})
		}
	}
	res.Finish()
}

// run verifies t; the guest it boots is stopped before run returns.
func (v *verifier) run(ctx context.Context, t *target) *report.Verify {
	res := report.NewVerify(t.name, t.kind)
	res.Host = hostDescription()
	start := time.Now()
	defer func() {
		res.Total = report.Duration(time.Since(start))
		skipRest(res)
	}()

	v.progress("%-18s %s", report.StageBuild, "building kernel and root filesystem ...")
	blog := v.logPath(t) + ".build"
	bf, err := createLog(blog)
	if err != nil {
		v.stage(res, report.Failf(report.StageBuild, report.ClassEnvironment, 0, "%v", err))
		return res
	}
	s := v.build(ctx, t, bf)
	bf.Close()
	if !s.Passed() {
		s.Detail += " (build log " + blog + ")"
	}
	if !v.stage(res, s) {
		return res
	}
	if t.image != nil {
		res.NginxVersion = t.image.NginxVersion
	}
	res.Kernel = t.machine.Kernel

	logPath := v.logPath(t)
	res.ConsoleLog = logPath
	v.progress("%-18s booting; console log %s", report.StageBoot, logPath)
	t0 := time.Now()
	if t.att != nil {
		// The packet capture backs a failure report; bench runs go without.
		t.att.Capture = true
		defer func() { t.att.Capture = false }()
	}
	g, err := v.start(ctx, t, logPath)
	if err != nil {
		v.stage(res, startErr(err, t0))
		return res
	}
	// Only verify reads the scan: bench, run and profile leave the host's
	// cores to the guest they time.
	g.scanFiles = t.provenanceExempt() == ""
	defer g.stop()
	booted := g.Started()
	s = v.bootStage(ctx, g)
	if u := g.unshimmed(); u != "" && s.Passed() {
		s.Detail += "; " + u
	}
	if g.run != nil && g.run.Uncontained() != "" {
		s.Detail += "; the run command is " + g.run.Uncontained()
	}
	if !v.stage(res, s) {
		res.QEMUCommand = g.qemuCommand()
		return res
	}
	res.QEMUCommand = g.qemuCommand()
	ctx, stopWatch := g.watchConsole(ctx)
	defer stopWatch()
	if !v.stage(res, v.alive(g, v.provenanceStage(ctx, t, g))) {
		return res
	}
	addr := g.Addr()
	v.progress("%-18s http://%s/", "url", addr)
	if err := g.BacklogErr(); err != nil {
		v.progress("warning: hostfwd listen backlog left at 1 (%v): connection bursts may fail", err)
	}

	pctx, cancel := context.WithTimeout(ctx, v.portTimeout)
	s = probe.PortOpen(pctx, addr)
	cancel()
	if !v.stage(res, v.alive(g, s)) {
		return res
	}
	// From here on every request to the server is counted: a stage during
	// which it stopped answering fails as stopped-answering.
	answers := probe.NewAnswers(addr)
	s = answers.Run(ctx, func(ctx context.Context) report.Stage {
		s, at := probe.First200(ctx, addr)
		if s.Passed() {
			res.BootToFirst200 = report.Duration(at.Sub(booted))
		}
		return s
	})
	if !v.stage(res, v.alive(g, s)) {
		return res
	}

	pt := probe.Target{Addr: addr}
	if t.image != nil {
		pt.NginxVersion = t.image.NginxVersion
		pt.Files = probeFiles(t.image.Files)
		if t.image.Nonce != nil {
			n := probeFile(*t.image.Nonce)
			pt.Nonce = &n
		}
		if !v.noOracle {
			stop, oaddr, err := v.oracle(ctx, t.image)
			if err != nil {
				v.stage(res, report.Failf(report.StageFingerprint, report.ClassEnvironment, 0, "oracle: %v", err))
				return res
			}
			defer stop()
			pt.Oracle = oaddr
		}
	}
	fingerprint := func(ctx context.Context) report.Stage { return v.fingerprint(ctx, t, g, pt, res) }
	if !v.stage(res, v.alive(g, answers.Run(ctx, fingerprint))) {
		return res
	}
	if t.image != nil {
		content := func(ctx context.Context) report.Stage { return probe.Content(ctx, pt) }
		if !v.stage(res, v.alive(g, answers.Run(ctx, content))) {
			return res
		}
	} else {
		// An attempt boots its own root filesystem: its files are unknown,
		// so content is the index page only, already fetched by first-200.
		v.stage(res, report.Passf(report.StageContent, 0, "attempt's own root filesystem: content not known to jiege"))
	}
	stability := func(ctx context.Context) report.Stage { return probe.Stability(ctx, pt, probe.DefaultBars) }
	if !v.stage(res, v.alive(g, answers.Run(ctx, stability))) {
		return res
	}
	survival := func(ctx context.Context) report.Stage { return probe.Survival(ctx, addr) }
	v.stage(res, v.alive(g, answers.Run(ctx, survival)))
	return res
}

// oracle starts nginx from the same root filesystem under qemu-riscv64.
func (v *verifier) oracle(ctx context.Context, img *rootfs.Image) (func() error, string, error) {
	port, err := qemu.FreePort()
	if err != nil {
		return nil, "", err
	}
	stop, err := rootfs.StartOracle(ctx, img, port)
	if err != nil {
		return nil, "", err
	}
	return stop, fmt.Sprintf("127.0.0.1:%d", port), nil
}

func probeFile(f rootfs.File) probe.File {
	return probe.File{URLPath: f.URLPath, Size: f.Size, SHA256: f.SHA256, Content: f.Content}
}

func probeFiles(fs []rootfs.File) []probe.File {
	out := make([]probe.File, len(fs))
	for i, f := range fs {
		out[i] = probeFile(f)
	}
	return out
}

func createLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.Create(path)
}

func cmdVerify(ctx context.Context, args []string) error {
	fs := newFlags("verify", "ours | linux | KERNEL | --attempt DIR [--build CMD] [--run CMD]")
	c := &common{}
	c.flags(fs)
	v := &verifier{common: c, out: os.Stderr}
	var att attemptFlags
	var jsonOut, mdOut string
	att.flags(fs)
	fs.DurationVar(&v.portTimeout, "port-timeout", probe.PortOpenTimeout, "time allowed for the port to answer HTTP")
	fs.BoolVar(&v.noOracle, "no-oracle", false, "fingerprint without the qemu-user nginx oracle")
	fs.BoolVar(&v.strictConfig, "strict-config", false, "fail an attempt's nginx whose configuration deviates from jiege's (keep-alive off, gzip, ...) instead of passing it with deviations")
	fs.Uint64Var(&v.seed, "fingerprint-seed", 0, "seed of the fingerprint's random requests (replays a report's; default: a fresh one)")
	fs.StringVar(&jsonOut, "json", "", "write the result as JSON (schema v1) to FILE")
	fs.StringVar(&mdOut, "md", "", "write the result as Markdown to FILE")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	c.defaults()
	if err := c.preflight(); err != nil {
		return err
	}
	var t *target
	var err error
	switch {
	case att.dir != "" && fs.NArg() == 0:
		t, err = att.target()
	case att.dir == "" && fs.NArg() == 1:
		t, err = parseTarget(fs.Arg(0))
	default:
		return usageErr("verify: want exactly one TARGET or --attempt DIR")
	}
	if err != nil {
		return err
	}
	res := v.run(ctx, t)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Println(report.VerifyText(res))
	if err := writeOutputs(res, jsonOut, mdOut, report.VerifyMarkdown(res)); err != nil {
		return err
	}
	if res.Pass {
		return nil
	}
	if s, ok := res.Stage(res.FailedStage); ok && s.Class == report.ClassEnvironment {
		return envErr(fmt.Errorf("%s: %s", s.Name, s.Detail))
	}
	return errFailed
}

// writeOutputs writes the JSON and Markdown renderings when asked.
func writeOutputs(v any, jsonOut, mdOut, md string) error {
	if jsonOut != "" {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
			return envErr(err)
		}
	}
	if mdOut != "" {
		if err := os.WriteFile(mdOut, []byte(md), 0o644); err != nil {
			return envErr(err)
		}
	}
	return nil
}
