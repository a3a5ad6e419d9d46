package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/manifest"
	"github.com/jiege-go/jiege/tools/jiege/internal/probe"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

func cmdCompare(ctx context.Context, args []string) error {
	fs := newFlags("compare", "MANIFEST.json [--out DIR] [--shard K/N]")
	c := &common{}
	c.flags(fs)
	v := &verifier{common: c, out: os.Stderr}
	b := &bencher{common: c, out: os.Stderr}
	var outDir, shard string
	var noBench, screenshot bool
	fs.StringVar(&outDir, "out", "", "write leaderboard.json, leaderboard.md and leaderboard.html here")
	fs.DurationVar(&v.portTimeout, "port-timeout", probe.PortOpenTimeout, "time allowed for the port to answer HTTP")
	fs.BoolVar(&v.noOracle, "no-oracle", false, "fingerprint without the qemu-user nginx oracle")
	fs.DurationVar(&b.duration, "duration", 10*time.Second, "bench load duration (the manifest's bench.duration wins)")
	fs.IntVar(&b.runs, "runs", 3, "bench boots per attempt (the manifest's bench.runs wins)")
	fs.IntVar(&b.conns, "conns", 8, "bench keep-alive connections")
	fs.IntVar(&b.freshConns, "fresh-conns", 4, "bench concurrent fresh-connection clients")
	fs.BoolVar(&b.noWrk, "no-wrk", false, "skip the wrk cross-check")
	fs.BoolVar(&noBench, "no-bench", false, "verify only")
	icount := fs.Bool("icount", false, "bench with the icount plugin in every QEMU: counted instructions and QEMU's CPU time per request (bench --icount)")
	fs.StringVar(&shard, "shard", "", "verify and bench only shard K of N (attempts K, K+N, ... counting from 0) and write a partial result for jiege merge")
	fs.BoolVar(&screenshot, "screenshot", false, "also write leaderboard.png, the page as headless Chromium shows it")
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
	res := report.NewCompare(m.Path)
	if shard != "" {
		k, n, err := parseShard(shard)
		if err != nil {
			return err
		}
		res.Shard = &report.Shard{Index: k, Count: n}
		for _, a := range m.Attempts {
			res.Shard.Attempts = append(res.Shard.Attempts, a.Name)
		}
	}
	if d := m.Bench.LoadDuration(); d > 0 {
		b.duration = d
	}
	if m.Bench != nil && m.Bench.Runs > 0 {
		b.runs = m.Bench.Runs
	}
	c.defaults()
	// The bench's harts, so that a ratio here is the one bench gives: a
	// kernel file's default of 1 beside Linux's 2 measured machines.
	c.benchHarts()
	if err := c.preflight(); err != nil {
		return err
	}
	if *icount && !noBench {
		if err := b.buildPlugin(ctx); err != nil {
			return err
		}
	}

	// A manifest attempt without a run command is the manifest's error,
	// found before any attempt runs.
	for i, a := range m.Attempts {
		if a.Dir != "" && (res.Shard == nil || res.Shard.Holds(i)) {
			t, err := attemptTarget(a.Dir, a.Build, a.Run)
			if err == nil {
				err = runnable(t.att, "attempt "+a.Name)
			}
			if err != nil {
				return err
			}
		}
	}
	res.Host = hostDescription()
	var entries []*compareEntry
	for i, a := range m.Attempts {
		if res.Shard != nil && !res.Shard.Holds(i) {
			continue
		}
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
		entries = append(entries, &compareEntry{name: a.Name, meta: a.Metadata.Meta(), t: t})
	}
	verify := func(ctx context.Context, e *compareEntry) *report.Verify {
		fmt.Fprintf(os.Stderr, "jiege: compare %s: verify\n", e.name)
		vr := v.run(ctx, e.t)
		fmt.Fprintf(os.Stderr, "jiege: compare %s: %s\n", e.name, verdictLine(vr))
		return vr
	}
	once := b.once
	if noBench {
		once = nil
	}
	if err := b.verifyThenBench(ctx, entries, verify, once); err != nil {
		return err
	}
	allPass := true
	for _, e := range entries {
		allPass = allPass && e.verify.Pass
		row := report.RowFrom(e.name, e.meta, e.verify, e.bench)
		row.ConsoleTail = consoleTail(e.verify.ConsoleLog)
		res.Rows = append(res.Rows, row)
	}
	res.Rank()
	res.ComputePeerRatios()
	fmt.Print(report.CompareText(res))
	if outDir != "" {
		if err := writeLeaderboard(ctx, res, outDir, screenshot); err != nil {
			return err
		}
	}
	if !allPass {
		return errFailed
	}
	return nil
}

// compareEntry is one manifest entry of a compare: its target, then its
// verdict and bench figures.
type compareEntry struct {
	name   string
	meta   report.Meta
	t      *target
	verify *report.Verify
	bench  *report.BenchTarget // nil when it did not pass or was not benched
}

// verifyThenBench verifies every entry, then benches the passing ones,
// the Linux peer among them, in rounds (one run of each per round, as
// bench does), so that every ratio compares runs made in the same
// minutes, not one entry's runs with another's made minutes later on a
// host whose load drifts. A nil once verifies only.
func (b *bencher) verifyThenBench(ctx context.Context, entries []*compareEntry, verify func(context.Context, *compareEntry) *report.Verify,
	once func(context.Context, *target) (runFigures, error)) error {
	var passed []*target
	byTarget := map[*target]*compareEntry{}
	for _, e := range entries {
		e.verify = verify(ctx, e)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if e.verify.Pass {
			passed = append(passed, e.t)
			byTarget[e.t] = e
		}
	}
	if once == nil || len(passed) == 0 {
		return nil
	}
	b.progress("compare: bench of %s in %d rounds", targetNames(passed), b.runs)
	for _, s := range b.measureInterleaved(ctx, passed, once) {
		r := s.result()
		byTarget[s.t].bench = &r
	}
	return ctx.Err()
}

func targetNames(ts []*target) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.name
	}
	return strings.Join(names, ", ")
}

func verdictLine(v *report.Verify) string {
	if v.Pass {
		return fmt.Sprintf("PASS in %.0fs", v.Total.Seconds())
	}
	s, _ := v.Stage(v.FailedStage)
	return fmt.Sprintf("FAIL at %s [%s] in %.0fs", v.FailedStage, s.Class, v.Total.Seconds())
}
