package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jiege-go/jiege/tools/icount/counter"
	"github.com/jiege-go/jiege/tools/jiege/internal/load"
	"github.com/jiege-go/jiege/tools/jiege/internal/probe"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
	"github.com/jiege-go/jiege/tools/jiege/internal/rootfs"
)

// bencher measures targets.
type bencher struct {
	*common
	duration   time.Duration
	runs       int
	conns      int
	freshConns int
	noWrk      bool
	out        io.Writer
	// plugin is the icount plugin every QEMU loads (--icount), or "".
	plugin string
}

func (b *bencher) progress(format string, args ...any) {
	fmt.Fprintf(b.out, "jiege: "+format+"\n", args...)
}

// benchSMP is the harts every bench target gets unless --smp is given.
const benchSMP = 2

// benchHarts gives every kernel jiege boots benchSMP harts unless --smp
// chose: figures, and their ratios, compare kernels, not machines (an
// attempt's QEMU keeps its own).
func (c *common) benchHarts() {
	if c.smp == 0 {
		c.smp = benchSMP
	}
}

// bigFile is the 64 MiB transfer file of the root filesystem.
const bigFile = 64 << 20

// buildTarget builds a target for the bench.
func (b *bencher) buildTarget(ctx context.Context, t *target) error {
	blog, err := createLog(b.logPath(t) + ".build")
	if err != nil {
		return err
	}
	b.progress("%s: building", t.name)
	s := b.build(ctx, t, blog)
	blog.Close()
	if !s.Passed() {
		return fmt.Errorf("build: %s", s.Detail)
	}
	return nil
}

// measureBuilt benchmarks a target whose build stage has passed.
func (b *bencher) measureBuilt(ctx context.Context, t *target) report.BenchTarget {
	return b.measureInterleaved(ctx, []*target{t}, b.once)[0].result()
}

// measureInterleaved benchmarks built targets in rounds, one run of each
// per round, each run a fresh boot (so boot-to-first-200 is measured
// each time): the host's speed drifts over minutes on a shared machine,
// and the ratios then compare runs made side by side rather than one
// target's block of runs with the next one's.
func (b *bencher) measureInterleaved(ctx context.Context, ts []*target, once func(context.Context, *target) (runFigures, error)) []*series {
	ss := make([]*series, len(ts))
	for i, t := range ts {
		ss[i] = &series{t: t}
	}
	for run := 1; run <= b.runs && ctx.Err() == nil; run++ {
		for _, s := range ss {
			if s.err == "" && ctx.Err() == nil {
				b.add(ctx, s, run, once)
			}
		}
	}
	return ss
}

// add makes run number run of s's target with once and adds its figures.
func (b *bencher) add(ctx context.Context, s *series, run int, once func(context.Context, *target) (runFigures, error)) {
	r, err := once(ctx, s.t)
	if err != nil {
		s.err = fmt.Sprintf("run %d: %v", run, err)
		b.progress("%s: %s", s.t.name, s.err)
		return
	}
	b.progress("%s run %d/%d: keep-alive %.0f req/s, fresh %.0f req/s, p50 %.2f ms, p99 %.2f ms, %.1f MB/s, first 200 %.2f s%s%s%s",
		s.t.name, run, b.runs, r.ka, r.fresh, r.p50, r.p99, r.mbps, r.boot, r.openSBIText(), r.wrkText(), r.countedText())
	s.runs = append(s.runs, r)
}

// series is one target's runs.
type series struct {
	t    *target
	runs []runFigures
	err  string // why the runs stopped early, or ""
}

// result sums s's runs up.
func (s *series) result() report.BenchTarget {
	t := s.t
	bt := report.BenchTarget{Target: t.name, KernelKind: t.kind, Error: s.err}
	var ka, fresh, p50, p99, mbps, boot, bootOpenSBI, wrk []float64
	var counted []report.RunCounted
	for _, r := range s.runs {
		if r.counted != nil {
			counted = append(counted, *r.counted)
		}
		ka, fresh, p50, p99 = append(ka, r.ka), append(fresh, r.fresh), append(p50, r.p50), append(p99, r.p99)
		boot = append(boot, r.boot)
		if r.bootOpenSBI > 0 {
			bootOpenSBI = append(bootOpenSBI, r.bootOpenSBI)
		}
		if r.mbps > 0 {
			mbps = append(mbps, r.mbps)
		}
		if r.wrk > 0 {
			wrk = append(wrk, r.wrk)
		}
		bt.Errors += r.errors
		bt.ConnectRetries += r.retries
	}
	if t.kind != kindAttempt {
		bt.Harts = t.machine.SMP
		perHart := make([]float64, len(ka))
		for i, v := range ka {
			perHart[i] = v / float64(bt.Harts)
		}
		bt.KeepAlivePerHart = report.NewStat(perHart)
	}
	bt.KeepAliveRPS, bt.FreshRPS = report.NewStat(ka), report.NewStat(fresh)
	bt.P50MS, bt.P99MS = report.NewStat(p50), report.NewStat(p99)
	bt.TransferMBps, bt.BootToFirst200 = report.NewStat(mbps), report.NewStat(boot)
	bt.BootToFirst200OpenSBI = report.NewStat(bootOpenSBI)
	if len(wrk) > 0 {
		w := report.NewStat(wrk)
		bt.WrkKeepAliveRPS = &w
	}
	if len(counted) > 0 {
		bt.Counted = report.NewCounted(counted)
	}
	return bt
}

type runFigures struct {
	ka, fresh, p50, p99, mbps, boot, wrk float64
	bootOpenSBI                          float64 // ours: first 200 booted through OpenSBI, or 0
	errors, retries                      int64
	counted                              *report.RunCounted // --icount
}

func (r runFigures) openSBIText() string {
	if r.bootOpenSBI == 0 {
		return ""
	}
	return fmt.Sprintf(" (through OpenSBI %.2f s)", r.bootOpenSBI)
}

func (r runFigures) countedText() string {
	if r.counted == nil {
		return ""
	}
	c := r.counted
	return fmt.Sprintf("; kernel instructions: %.0f per kept-alive request, %.0f per fresh connection, %.0f to first 200",
		c.KeepAlive.Kernel, c.Fresh.Kernel, c.First200.Kernel)
}

func (r runFigures) wrkText() string {
	if r.wrk == 0 {
		return ""
	}
	return fmt.Sprintf(" (wrk keep-alive %.0f req/s)", r.wrk)
}

// once boots the target, measures it and stops it.
func (b *bencher) once(ctx context.Context, t *target) (runFigures, error) {
	var r runFigures
	logPath := b.logPath(t)
	var count *counting
	var qemuArgs []string
	if b.plugin != "" {
		count = &counting{session: counter.NewSession(b.plugin, logPath), layout: b.layout(t)}
		defer count.session.Remove()
		qemuArgs = count.session.Args()
	}
	g, err := b.startWith(ctx, t, logPath, qemuArgs)
	if err != nil {
		return r, err
	}
	defer g.stop()
	if s := b.bootStage(ctx, g); !s.Passed() {
		return r, fmt.Errorf("boot: %s (console %s)", s.Detail, logPath)
	}
	s, at := probe.First200(ctx, g.Addr())
	if !s.Passed() {
		return r, fmt.Errorf("first 200: %s (console %s)", s.Detail, logPath)
	}
	r.boot = at.Sub(g.Started()).Seconds()
	addr := g.Addr()
	if err := g.BacklogErr(); err != nil {
		b.progress("warning: hostfwd listen backlog left at 1 (%v): connection bursts may fail", err)
	}
	add := func(res *load.Result) {
		r.errors += res.Errors.Total()
		r.retries += res.ConnectRetries
	}
	// counted closes a phase of count units (nothing without --icount).
	counted := func(units float64, w *report.RunWork) error {
		if count == nil {
			return nil
		}
		if units <= 0 {
			return fmt.Errorf("icount: a phase served nothing to count per")
		}
		got, err := count.phase(ctx, units)
		*w = got
		return err
	}
	if count != nil {
		count.g = g
		r.counted = &report.RunCounted{}
		if err := counted(1, &r.counted.First200); err != nil {
			return r, err
		}
	}

	res, err := load.Run(ctx, load.Config{Addr: addr, Conns: b.conns, KeepAlive: true, Duration: b.duration})
	if err != nil {
		return r, err
	}
	add(res)
	r.ka, r.p50, r.p99 = res.ReqPerSec, ms(res.P50), ms(res.P99)
	if r.counted != nil {
		if err := counted(float64(res.Requests), &r.counted.KeepAlive); err != nil {
			return r, err
		}
	}

	res, err = load.Run(ctx, load.Config{Addr: addr, Conns: b.freshConns, KeepAlive: false, Duration: b.duration})
	if err != nil {
		return r, err
	}
	add(res)
	r.fresh = res.ReqPerSec
	if r.counted != nil {
		if err := counted(float64(res.Requests), &r.counted.Fresh); err != nil {
			return r, err
		}
	}

	if big, ok := transferRequest(t.image); ok {
		res, err = load.Run(ctx, load.Config{Addr: addr, Conns: 1, KeepAlive: true,
			Requests: []load.Request{big}, MaxRequests: 1, Duration: 2 * time.Minute, IOTimeout: time.Minute})
		if err != nil {
			return r, err
		}
		add(res)
		r.mbps = res.MBPerSec
		if r.counted != nil {
			r.counted.Transfer = &report.RunWork{}
			if err := counted(float64(res.Bytes)/1e6, r.counted.Transfer); err != nil {
				return r, err
			}
		}
	}

	if !b.noWrk {
		r.wrk = wrkRPS(ctx, addr, b.conns, b.duration)
	}
	if t.viaOpenSBI != nil {
		g.stop()
		if r.bootOpenSBI, err = b.firstViaOpenSBI(ctx, t); err != nil {
			return r, err
		}
	}
	return r, nil
}

// firstViaOpenSBI boots ours as its Image under QEMU's OpenSBI, the way
// Debian's Linux boots, and returns the seconds from QEMU's start to its
// first 200: the boot figure on Linux's path, beside the own firmware's.
func (b *bencher) firstViaOpenSBI(ctx context.Context, t *target) (float64, error) {
	sbi := *t
	sbi.machine, sbi.viaOpenSBI = *t.viaOpenSBI, nil
	logPath := b.logPath(t) + ".opensbi"
	g, err := b.start(ctx, &sbi, logPath)
	if err != nil {
		return 0, err
	}
	defer g.stop()
	if s := b.bootStage(ctx, g); !s.Passed() {
		return 0, fmt.Errorf("boot under OpenSBI: %s (console %s)", s.Detail, logPath)
	}
	s, at := probe.First200(ctx, g.Addr())
	if !s.Passed() {
		return 0, fmt.Errorf("first 200 under OpenSBI: %s (console %s)", s.Detail, logPath)
	}
	return at.Sub(g.Started()).Seconds(), nil
}

// transferRequest is the request for the root filesystem's 64 MiB
// transfer file; false when img has none (an attempt, or Linux below
// rootfs.SmallMemoryBelow).
func transferRequest(img *rootfs.Image) (load.Request, bool) {
	if img != nil {
		for _, f := range img.Files {
			if f.Size == bigFile {
				return load.Request{Path: f.URLPath, Size: f.Size, SHA256: f.SHA256}, true
			}
		}
	}
	return load.Request{}, false
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// wrkRPS runs wrk with the same keep-alive connections and returns its
// req/s, or 0 when wrk is not installed or fails.
func wrkRPS(ctx context.Context, addr string, conns int, d time.Duration) float64 {
	path, err := exec.LookPath("wrk")
	if err != nil {
		return 0
	}
	secs := max(1, int(d.Seconds()))
	cctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	threads := min(2, conns)
	out, err := exec.CommandContext(cctx, path, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns),
		"-d", strconv.Itoa(secs)+"s", "http://"+addr+"/").Output()
	if err != nil {
		return 0
	}
	return parseWrk(out)
}

// parseWrk extracts "Requests/sec:" from wrk's output.
func parseWrk(out []byte) float64 {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "Requests/sec:"); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return 0
}

func cmdBench(ctx context.Context, args []string) error {
	fs := newFlags("bench", "TARGET... (ours, linux, a kernel path)")
	c := &common{}
	c.flags(fs)
	b := &bencher{common: c, out: os.Stderr}
	var jsonOut, mdOut string
	fs.DurationVar(&b.duration, "duration", 10*time.Second, "load duration of each measurement")
	fs.IntVar(&b.runs, "runs", 3, "boots per target (min/median/max over them)")
	fs.IntVar(&b.conns, "conns", 8, "keep-alive connections")
	fs.IntVar(&b.freshConns, "fresh-conns", 4, "concurrent clients opening a fresh connection per request")
	fs.BoolVar(&b.noWrk, "no-wrk", false, "skip the wrk cross-check")
	icount := fs.Bool("icount", false, "count: every QEMU loads the icount plugin; report guest instructions by privilege mode and QEMU's CPU time per request, per MB and to the first 200")
	fs.StringVar(&jsonOut, "json", "", "write the result as JSON (schema v1) to FILE")
	fs.StringVar(&mdOut, "md", "", "write the result as Markdown to FILE")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("bench: want at least one TARGET")
	}
	if b.runs < 1 || b.conns < 1 || b.freshConns < 1 || b.duration <= 0 {
		return usageErr("bench: --runs, --conns, --fresh-conns and --duration must be positive")
	}
	if c.port != 0 {
		return usageErr("bench: --port is not supported (each boot picks a free port)")
	}
	c.defaults()
	c.benchHarts()
	if err := c.preflight(); err != nil {
		return err
	}
	if *icount {
		if err := b.buildPlugin(ctx); err != nil {
			return err
		}
	}
	var targets []*target
	for _, spec := range fs.Args() {
		t, err := parseTarget(spec)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	res := report.NewBench(b.runs, b.conns, b.duration)
	res.Host = hostDescription()
	failed := false
	var built []*target
	buildErr := map[*target]string{}
	for _, t := range targets {
		if err := b.buildTarget(ctx, t); err != nil {
			buildErr[t] = err.Error()
			continue
		}
		built = append(built, t)
	}
	measured := map[*target]report.BenchTarget{}
	for _, s := range b.measureInterleaved(ctx, built, b.once) {
		measured[s.t] = s.result()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for _, t := range targets {
		bt, ok := measured[t]
		if !ok {
			bt = report.BenchTarget{Target: t.name, KernelKind: t.kind, Error: buildErr[t]}
		}
		if bt.Error != "" || bt.Errors > 0 {
			failed = true
		}
		res.Targets = append(res.Targets, bt)
	}
	res.ComputeRatios()
	fmt.Print(report.BenchText(res))
	if err := writeOutputs(res, jsonOut, mdOut, report.BenchMarkdown(res)); err != nil {
		return err
	}
	if failed {
		return errFailed
	}
	return nil
}

// hostDescription names the machine for the report: CPU model and count.
func hostDescription() string {
	host, _ := os.Hostname()
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	out, _ := exec.Command("qemu-system-riscv64", "--version").Output()
	qv, _, _ := strings.Cut(string(out), "\n")
	return fmt.Sprintf("%s: %d CPUs %s; %s", host, runtime.NumCPU(), model, strings.TrimSpace(qv))
}
