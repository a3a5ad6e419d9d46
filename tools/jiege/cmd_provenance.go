package main

import (
	"context"
	"fmt"
	"os"
	"slices"
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
// attempt, those of every QEMU its shim launched so far, relative paths
// taken from each QEMU's working directory.
func (g *guest) bootFiles() []provenance.File {
	if g.run == nil {
		return provenance.BootFiles(g.qemuCommand()[1:], "")
	}
	var out []provenance.File
	seen := map[provenance.File]bool{}
	for _, l := range g.run.Launches() {
		dir, err := os.Readlink("/proc/" + strconv.Itoa(l.PID) + "/cwd")
		if err != nil {
			dir = g.attDir
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

// fileScan is what the files QEMU loads, and an attempt's git history,
// say about the kernel's origin.
type fileScan struct {
	files               []provenance.File
	linux, signs, notes []string
}

func (r *fileScan) add(ss []provenance.Sign) {
	for _, s := range ss {
		if s.Linux {
			r.linux = append(r.linux, s.What)
		} else {
			r.signs = append(r.signs, s.What)
		}
	}
}

func (r *fileScan) scan(files []provenance.File) {
	for _, f := range files {
		ss, err := provenance.ScanFile(f)
		if err != nil {
			r.notes = append(r.notes, fmt.Sprintf("%s not read: %v", f.Option, err))
		}
		r.add(ss)
		r.files = append(r.files, f)
	}
}

// history adds what an attempt's git history says.
func (r *fileScan) history(dir string) {
	h, err := provenance.GitHistory(context.Background(), dir)
	switch {
	case err != nil:
		r.notes = append(r.notes, fmt.Sprintf("git history not read: %v", err))
	case h != nil && h.Suspicious():
		r.signs = append(r.signs, "the first commit already holds most of the code: "+h.String())
	case h != nil:
		r.notes = append(r.notes, h.String())
	}
}

// scanTimeout bounds the wait for the background scan.
const scanTimeout = time.Minute

// startScan reads the guest's boot files and an attempt's git history in
// the background, once its QEMU runs, so that this overlaps the boot stage
// instead of delaying the first 200.
func (g *guest) startScan() {
	if !g.scanFiles || g.scan != nil {
		return
	}
	g.scan = make(chan fileScan, 1)
	files := g.bootFiles()
	go func() {
		var r fileScan
		r.scan(files)
		if g.attDir != "" {
			r.history(g.attDir)
		}
		g.scan <- r
	}()
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
	g.startScan()
	var r fileScan
	select {
	case r = <-g.scan:
	case <-time.After(scanTimeout):
		return report.Failf(report.StageProvenance, report.ClassInternal, time.Since(t0), "reading the files QEMU loads took over %v", scanTimeout)
	case <-ctx.Done():
		return report.Failf(report.StageProvenance, report.ClassInternal, time.Since(t0), "interrupted")
	}
	// An attempt may have started another QEMU since the scan began.
	var later []provenance.File
	for _, f := range g.bootFiles() {
		if !slices.Contains(r.files, f) {
			later = append(later, f)
		}
	}
	r.scan(later)
	if f := g.follower(); f != nil {
		f.Poll()
		r.add(provenance.ScanConsole(f.Text()))
	}
	linux, signs, notes := r.linux, r.signs, r.notes
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
		"no sign of Linux in %d files QEMU loads or on the console%s", len(r.files), others())
}
