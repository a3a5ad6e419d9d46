package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/jiege-go/jiege/profiling"
	"github.com/jiege-go/jiege/tools/jiege/internal/kprof"
	"github.com/jiege-go/jiege/tools/jiege/internal/load"
	"github.com/jiege-go/jiege/tools/jiege/internal/probe"
)

// cmdProfile boots our kernel with its sampling profiler on, puts the
// bench's keep-alive load on nginx (or, with --boot, takes the boot up to
// the first 200; with --initrd, lets that initramfs's /init run), and
// writes what the profiler saw as a pprof CPU profile. The samples are read from the stopped guest's memory over QMP:
// the guest does nothing to hand them over.
func cmdProfile(ctx context.Context, args []string) error {
	fs := newFlags("profile", "ours --out FILE [--duration D] [--rate HZ] [--fresh|--transfer|--boot|--initrd CPIO --root DIR]")
	c := &common{}
	c.flags(fs)
	var out, initrd, root string
	var duration time.Duration
	var rate, conns int
	var fresh, transfer, boot bool
	fs.StringVar(&out, "out", "cpu.pb.gz", "where the profile goes (gzipped pprof)")
	fs.DurationVar(&duration, "duration", 10*time.Second, "how long the load runs while sampling")
	fs.IntVar(&rate, "rate", 1000, "samples per second per hart (the kernel's profile=)")
	fs.IntVar(&conns, "conns", 8, "concurrent connections of the load")
	fs.BoolVar(&fresh, "fresh", false, "a fresh connection per request instead of keep-alive")
	fs.BoolVar(&transfer, "transfer", false, "the bench's 64 MiB transfer over one connection, repeated, instead of small requests")
	fs.BoolVar(&boot, "boot", false, "sample the boot instead of a load: from the profiler's start (once the kernel has read its command line) to the first 200")
	fs.StringVar(&initrd, "initrd", "", "boot this initramfs instead of nginx's and sample its /init for --duration, without load")
	fs.StringVar(&root, "root", "", "with --initrd: the tree its user programs are named from")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != kindOurs {
		return usageErr("profile: want the target ours (the profiler is our kernel's)")
	}
	if duration <= 0 || rate <= 0 || rate > 10000 || conns < 1 {
		return usageErr("profile: --duration and --conns must be positive, --rate 1 to 10000")
	}
	if countTrue(fresh, transfer, boot, initrd != "") > 1 {
		return usageErr("profile: --fresh, --transfer, --boot and --initrd choose the load: give one")
	}
	if root != "" && initrd == "" {
		return usageErr("profile: --root goes with --initrd")
	}
	for _, p := range []string{initrd, root} {
		if _, err := os.Stat(p); p != "" && err != nil {
			return usageErr("profile: %v", err)
		}
	}
	// The output file is made first: a bad path fails before the run.
	f, err := os.Create(out)
	if err != nil {
		return usageErr("profile: %v", err)
	}
	written := false
	defer func() {
		f.Close()
		if !written {
			os.Remove(out)
		}
	}()
	c.defaults()
	if err := c.preflight(); err != nil {
		return err
	}
	t, err := parseTarget(kindOurs)
	if err != nil {
		return err
	}
	blog, err := createLog(c.logPath(t) + ".build")
	if err != nil {
		return envErr(err)
	}
	fmt.Fprintf(os.Stderr, "jiege: building (log %s) ...\n", blog.Name())
	s := c.build(ctx, t, blog)
	blog.Close()
	if !s.Passed() {
		return envErr(fmt.Errorf("build: %s", s.Detail))
	}
	tables, err := kprof.FindTables(t.machine.Kernel)
	if err != nil {
		return envErr(err)
	}
	syms, err := kprof.OpenGo(t.machine.Kernel)
	if err != nil {
		return envErr(err)
	}
	tmp, err := os.MkdirTemp(c.logDir, "profile-")
	if err != nil {
		return envErr(err)
	}
	defer os.RemoveAll(tmp)
	socket := filepath.Join(tmp, "qmp.sock")
	t.machine.Append = "profile=" + strconv.Itoa(rate)
	if initrd != "" {
		t.machine.Initrd, t.machine.Disk = initrd, ""
	}
	t.machine.ExtraArgs = append(t.machine.ExtraArgs, "-qmp", "unix:"+socket+",server=on,wait=off")

	logPath := c.logPath(t)
	fmt.Fprintf(os.Stderr, "jiege: booting with profile=%d; console log %s\n", rate, logPath)
	g, err := c.start(ctx, t, logPath)
	if err != nil {
		return envErr(err)
	}
	defer g.stop()
	if s := c.bootStage(ctx, g); !s.Passed() {
		return &exitError{exitFail, fmt.Errorf("boot: %s", s.Detail)}
	}
	if initrd == "" {
		if s, _ := probe.First200(ctx, g.Addr()); !s.Passed() {
			return &exitError{exitFail, fmt.Errorf("first 200: %s (console %s)", s.Detail, logPath)}
		}
	}
	q, err := kprof.DialQMP(socket, 10*time.Second)
	if err != nil {
		return envErr(err)
	}
	defer q.Close()
	// The kernel turns the profiler on once it has read its command line.
	var start profiling.Header
	for deadline := time.Now().Add(c.bootTimeout); ; time.Sleep(100 * time.Millisecond) {
		if start, err = q.Head(tables, tmp); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return &exitError{exitFail, fmt.Errorf("%v (console %s)", err, logPath)}
		}
	}
	t0 := time.Now()
	loadSummary := ""
	if boot {
		// Every sample since the profiler started, which the ring holds
		// whole: the boot takes seconds, the ring RingSamples/rate.
		start.Head, t0 = 0, g.Started()
		root = t.image.Dir
	} else if initrd == "" {
		cfg := load.Config{Addr: g.Addr(), Conns: conns, KeepAlive: !fresh, Duration: duration}
		if transfer {
			big, ok := transferRequest(t.image)
			if !ok {
				return &exitError{exitFail, fmt.Errorf("profile: the root filesystem has no %d-byte transfer file", bigFile)}
			}
			cfg.Conns, cfg.IOTimeout, cfg.Requests = 1, time.Minute, []load.Request{big}
			fmt.Fprintf(os.Stderr, "jiege: load for %v (%s, repeated, one connection) ...\n", duration, big.Path)
		} else {
			fmt.Fprintf(os.Stderr, "jiege: load for %v (%d %s connections) ...\n", duration, conns, map[bool]string{true: "fresh", false: "keep-alive"}[fresh])
		}
		res, err := load.Run(ctx, cfg)
		if err != nil {
			return &exitError{exitFail, err}
		}
		loadSummary = fmt.Sprintf("%.0f req/s, %.1f MB/s, %d errors; ", res.ReqPerSec, res.MBPerSec, res.Errors.Total())
		root = t.image.Dir
	} else {
		fmt.Fprintf(os.Stderr, "jiege: sampling for %v ...\n", duration)
		select {
		case <-time.After(duration):
		case <-ctx.Done():
			return ctx.Err()
		case <-g.Done():
			return &exitError{exitFail, fmt.Errorf("QEMU exited before the samples were read: %v (console %s)", g.Wait(), logPath)}
		}
	}
	elapsed := time.Since(t0)
	dump, err := q.Collect(tables, start.Head, tmp)
	if err != nil {
		return &exitError{exitFail, err}
	}
	src := kprof.Sources{Kernel: syms, KernelPath: t.machine.Kernel}
	if root != "" {
		if src.Files, err = kprof.FindFiles(root, dump.Mappings); err != nil {
			return envErr(err)
		}
	}
	p, err := kprof.Build(dump, src, elapsed)
	if err != nil {
		return &exitError{exitFail, err}
	}
	if err := p.Write(f); err != nil {
		return envErr(err)
	}
	if err := f.Close(); err != nil {
		return envErr(err)
	}
	written = true
	kernel := 0
	pids := map[uint32]int{}
	for _, s := range dump.Samples {
		if s.PID == 0 {
			kernel++
		} else {
			pids[s.PID]++
		}
	}
	fmt.Fprintf(os.Stderr, "jiege: %s%d samples (%d lost to the ring), kernel %s, user %s\n",
		loadSummary, len(dump.Samples), dump.Lost,
		percent(kernel, len(dump.Samples)), percent(len(dump.Samples)-kernel, len(dump.Samples)))
	var byPID []uint32
	for pid := range pids {
		byPID = append(byPID, pid)
	}
	sort.Slice(byPID, func(i, j int) bool { return pids[byPID[i]] > pids[byPID[j]] })
	for _, pid := range byPID {
		fmt.Fprintf(os.Stderr, "jiege:   pid %d: %d samples\n", pid, pids[pid])
	}
	fmt.Printf("%s\n", out)
	fmt.Fprintf(os.Stderr, "jiege: go tool pprof -top %s\n", out)
	return nil
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func percent(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}
