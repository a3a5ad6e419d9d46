package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/manifest"
	"github.com/jiege-go/jiege/tools/jiege/internal/probe"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

func cmdCompare(ctx context.Context, args []string) error {
	fs := newFlags("compare", "MANIFEST.json [--out DIR]")
	c := &common{}
	c.flags(fs)
	v := &verifier{common: c, out: os.Stderr}
	b := &bencher{common: c, out: os.Stderr}
	var outDir string
	var noBench bool
	fs.StringVar(&outDir, "out", "", "write leaderboard.json, leaderboard.md and leaderboard.html here")
	fs.DurationVar(&v.portTimeout, "port-timeout", probe.PortOpenTimeout, "time allowed for the port to answer HTTP")
	fs.BoolVar(&v.noOracle, "no-oracle", false, "fingerprint without the qemu-user nginx oracle")
	fs.DurationVar(&b.duration, "duration", 10*time.Second, "bench load duration (the manifest's bench.duration wins)")
	fs.IntVar(&b.runs, "runs", 3, "bench boots per attempt (the manifest's bench.runs wins)")
	fs.IntVar(&b.conns, "conns", 8, "bench keep-alive connections")
	fs.IntVar(&b.freshConns, "fresh-conns", 4, "bench concurrent fresh-connection clients")
	fs.BoolVar(&b.noWrk, "no-wrk", false, "skip the wrk cross-check")
	fs.BoolVar(&noBench, "no-bench", false, "verify only")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("compare: want one MANIFEST")
	}
	if c.port != 0 {
		return usageErr("compare: --port is not supported (each boot picks a free port)")
	}
	m, err := manifest.Load(fs.Arg(0))
	if err != nil {
		return usageErr("%v", err)
	}
	if d := m.Bench.LoadDuration(); d > 0 {
		b.duration = d
	}
	if m.Bench != nil && m.Bench.Runs > 0 {
		b.runs = m.Bench.Runs
	}
	c.defaults()
	if err := c.preflight(); err != nil {
		return err
	}

	res := report.NewCompare(m.Path)
	res.Host = hostDescription()
	allPass := true
	for _, a := range m.Attempts {
		var t *target
		if a.Dir != "" {
			t, err = attemptTarget(a.Dir, a.Build, a.Run)
			if err == nil {
				t.att.GuestPort, t.att.QEMUArgs = a.GuestPort, a.QEMUArgs
			}
		} else {
			t, err = parseTarget(a.Kernel)
		}
		if err != nil {
			return err
		}
		t.name = a.Name
		fmt.Fprintf(os.Stderr, "jiege: compare %s: verify\n", a.Name)
		vr := v.run(ctx, t)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(os.Stderr, "jiege: compare %s: %s\n", a.Name, verdictLine(vr))
		var bt *report.BenchTarget
		if vr.Pass && !noBench {
			fmt.Fprintf(os.Stderr, "jiege: compare %s: bench\n", a.Name)
			r := b.measureBuilt(ctx, t)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			bt = &r
		}
		allPass = allPass && vr.Pass
		res.Rows = append(res.Rows, report.RowFrom(a.Name, a.Metadata.Meta(), vr, bt))
	}
	res.Rank()
	fmt.Print(report.CompareText(res))
	if outDir != "" {
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			return envErr(err)
		}
		j := filepath.Join(outDir, "leaderboard.json")
		md := filepath.Join(outDir, "leaderboard.md")
		if err := writeOutputs(res, j, md, report.CompareMarkdown(res)); err != nil {
			return err
		}
		html := filepath.Join(outDir, "leaderboard.html")
		if err := os.WriteFile(html, []byte(report.CompareHTML(res)), 0o644); err != nil {
			return envErr(err)
		}
		fmt.Printf("leaderboard: %s, %s, %s\n", j, md, html)
	}
	if !allPass {
		return errFailed
	}
	return nil
}

func verdictLine(v *report.Verify) string {
	if v.Pass {
		return fmt.Sprintf("PASS in %.0fs", v.Total.Seconds())
	}
	s, _ := v.Stage(v.FailedStage)
	return fmt.Sprintf("FAIL at %s [%s] in %.0fs", v.FailedStage, s.Class, v.Total.Seconds())
}
