package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/probe"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

func cmdRun(ctx context.Context, args []string) error {
	fs := newFlags("run", "--kernel ours|linux|PATH | --attempt DIR")
	c := &common{}
	c.flags(fs)
	var kernel string
	var att attemptFlags
	fs.StringVar(&kernel, "kernel", "", "ours, linux, or a kernel ELF/Image path")
	att.flags(fs)
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 || (kernel == "") == (att.dir == "") {
		return usageErr("run: want --kernel K or --attempt DIR")
	}
	c.defaults()
	if err := c.preflight(); err != nil {
		return err
	}
	var t *target
	var err error
	if att.dir != "" {
		t, err = att.target()
	} else {
		t, err = parseTarget(kernel)
	}
	if err != nil {
		return err
	}
	c.console = true
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
	logPath := c.logPath(t)
	fmt.Fprintf(os.Stderr, "jiege: booting; console log %s\n", logPath)
	g, err := c.start(ctx, t, logPath)
	if err != nil {
		return envErr(err)
	}
	defer g.stop()
	if s := c.bootStage(ctx, g); !s.Passed() {
		return &exitError{exitFail, fmt.Errorf("boot: %s", s.Detail)}
	}
	if u := g.unshimmed(); u != "" {
		fmt.Fprintf(os.Stderr, "jiege: warning: %s\n", u)
	}
	s, at := probe.First200(ctx, g.Addr())
	if !s.Passed() {
		return &exitError{exitFail, fmt.Errorf("%s: %s [%s]", report.StageFirst200, s.Detail, s.Class)}
	}
	fmt.Fprintf(os.Stderr, "jiege: first 200 %.1fs after QEMU started\n", at.Sub(g.Started()).Seconds())
	fmt.Printf("http://%s/\n", g.Addr())
	fmt.Fprintln(os.Stderr, "jiege: serving; Ctrl-C stops QEMU")
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-g.Done():
		if g.alive() {
			// An attempt's run command left, its QEMU still runs.
			for g.alive() && ctx.Err() == nil {
				time.Sleep(200 * time.Millisecond)
			}
			return ctx.Err()
		}
		return &exitError{exitFail, fmt.Errorf("QEMU exited: %v", g.Wait())}
	}
}
