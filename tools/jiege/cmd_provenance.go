package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/provenance"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// provenanceExempt says why a target's kernel may be Linux, or "".
func (t *target) provenanceExempt() string {
	switch {
	case t.kind == kindLinux:
		return "Debian's Linux is the peer"
	case t.kind == kindControl && t.ctrl.Stage != report.StageProvenance:
		return fmt.Sprintf("a negative control built on Debian's Linux to fail at %s", t.ctrl.Stage)
	}
	return ""
}

// bootFiles lists the files the guest's QEMUs were started with: for an
// attempt, those of every QEMU its shim launched, relative paths taken
// from each QEMU's working directory.
func (g *guest) bootFiles(t *target) []provenance.File {
	if g.run == nil {
		return provenance.BootFiles(g.qemuCommand()[1:], "")
	}
	var out []provenance.File
	seen := map[provenance.File]bool{}
	for _, l := range g.run.Launches() {
		dir, err := os.Readlink("/proc/" + strconv.Itoa(l.PID) + "/cwd")
		if err != nil {
			dir = t.att.Dir
		}
		for _, f := range provenance.BootFiles(l.Args, dir) {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// provenanceStage checks where the booted kernel comes from: a Linux
// Image header or Linux's banner in a file QEMU runs, or the banner on
// the console, fails the stage as not-from-scratch; other kernels'
// markers and an attempt's git history whose first commit already holds
// most of the code are reported.
func (v *verifier) provenanceStage(ctx context.Context, t *target, g *guest) report.Stage {
	t0 := time.Now()
	if why := t.provenanceExempt(); why != "" {
		return report.Passf(report.StageProvenance, time.Since(t0), "exempt: %s", why)
	}
	var linux, signs, notes []string
	add := func(ss []provenance.Sign) {
		for _, s := range ss {
			if s.Linux {
				linux = append(linux, s.What)
			} else {
				signs = append(signs, s.What)
			}
		}
	}
	files := g.bootFiles(t)
	for _, f := range files {
		ss, err := provenance.ScanFile(f)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s not read: %v", f.Option, err))
		}
		add(ss)
	}
	if f := g.follower(); f != nil {
		f.Poll()
		add(provenance.ScanConsole(f.Text()))
	}
	if t.att != nil {
		h, err := provenance.GitHistory(ctx, t.att.Dir)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("git history not read: %v", err))
		case h != nil && h.Suspicious():
			signs = append(signs, "the first commit already holds most of the code: "+h.String())
		case h != nil:
			notes = append(notes, h.String())
		}
	}
	others := func() string {
		var b strings.Builder
		if len(signs) > 0 {
			b.WriteString("; other signs: " + strings.Join(signs, "; "))
		}
		if len(notes) > 0 {
			b.WriteString("; " + strings.Join(notes, "; "))
		}
		return b.String()
	}
	if len(linux) > 0 {
		return report.Failf(report.StageProvenance, report.ClassNotFromScratch, time.Since(t0),
			"the booted kernel is Linux: %s%s", strings.Join(linux, "; "), others())
	}
	return report.Passf(report.StageProvenance, time.Since(t0),
		"no sign of Linux in %d files QEMU loads or on the console%s", len(files), others())
}
