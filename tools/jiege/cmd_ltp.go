package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/ltp"
	"github.com/jiege-go/jiege/tools/jiege/internal/rootfs"
)

// cmdLTP runs LTP's syscall tests (built by make ltp-build) on our kernel
// and on Debian's Linux, and writes a result file per kernel.
func cmdLTP(ctx context.Context, args []string) error {
	fs := newFlags("ltp", "--opt BUILD/ltp/SUM/opt/ltp [--kernel ours,linux] [--limit N] [--run REGEXP] [--gate FILE] [--out DIR]")
	opt := fs.String("opt", "", "LTP's install tree, as make ltp-build prints it")
	kernels := fs.StringSlice("kernel", []string{"linux", "ours"}, "kernels to run on: ours (build/kernel.elf), linux (Debian's)")
	limit := fs.Int("limit", 0, "run only the first N tests of the list (0: all)")
	runRE := fs.String("run", "", "run only the tests whose name matches this regular expression")
	outDir := fs.String("out", "tests/testdata/ltp", "where results-KERNEL.txt are written")
	mem := fs.String("mem", "1G", "guest RAM")
	gatePath := fs.String("gate", "", "run only the tests this list names (make ltp-gate: tests/testdata/ltp/both-pass.txt); one that fails, and fails again when run alone with the others that failed, fails the command")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if *opt == "" || fs.NArg() > 0 {
		return usageErr("ltp: --opt is required (make ltp prints it); no arguments")
	}
	var match *regexp.Regexp
	if *runRE != "" {
		var err error
		if match, err = regexp.Compile(*runRE); err != nil {
			return usageErr("ltp: --run: %v", err)
		}
	}
	root := rootfs.ModuleRoot()
	if root == "" {
		return envErr(fmt.Errorf("ltp: run inside the jiege source tree"))
	}
	build := filepath.Join(root, "build")

	rt, err := os.Open(filepath.Join(*opt, "runtest", "syscalls"))
	if err != nil {
		return envErr(err)
	}
	all, err := ltp.ParseRuntest(rt)
	rt.Close()
	if err != nil {
		return envErr(err)
	}
	fam, err := ltp.Families(filepath.Join(*opt, "..", "..", "src"))
	if err != nil {
		return envErr(err)
	}
	var gate map[string]bool
	if *gatePath != "" {
		f, err := os.Open(*gatePath)
		if err != nil {
			return usageErr("ltp: --gate: %v", err)
		}
		names, err := ltp.ReadGate(f)
		f.Close()
		if err != nil {
			return usageErr("ltp: --gate %s: %v", *gatePath, err)
		}
		gate = map[string]bool{}
		for _, n := range names {
			gate[n] = true
		}
	}
	var es []ltp.Entry
	runnable := map[string]bool{}
	for _, e := range ltp.Select(all, *opt, fam) {
		runnable[e.Name] = true
		if (match == nil || match.MatchString(e.Name)) && (gate == nil || gate[e.Name]) {
			es = append(es, e)
		}
	}
	var unknown []string
	for n := range gate {
		if !runnable[n] {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return usageErr("ltp: --gate %s names tests this LTP build does not run: %s", *gatePath, strings.Join(unknown, " "))
	}
	if *limit > 0 && *limit < len(es) {
		es = es[:*limit]
	}

	// The same image for both kernels: the ours flavour's tree (Debian's
	// glibc), LTP, the init, and Linux's configuration where LTP looks
	// for it (/boot/config-RELEASE), which our kernel's release never names.
	base, err := rootfs.Build(ctx, rootfs.Options{Flavor: rootfs.Ours, SmallMemory: true, Log: io.Discard})
	if err != nil {
		return envErr(err)
	}
	linux, err := rootfs.Build(ctx, rootfs.Options{Flavor: rootfs.Linux, Log: io.Discard})
	if err != nil {
		return envErr(err)
	}
	release := strings.TrimPrefix(filepath.Base(linux.Kernel), "vmlinux-")
	config, err := os.ReadFile(filepath.Join(filepath.Dir(linux.Kernel), "config-"+release))
	if err != nil {
		return envErr(err)
	}
	// LTP reads a gzip-compressed configuration (our kernel's
	// /proc/config.gz) through popen("zcat FILE"): it needs /bin/sh and
	// zcat, which the ours flavour's tree lacks. dash is the shell and
	// busybox, named zcat, runs only that applet; nothing else comes with
	// them (from the tests' pinned shell packages).
	shells, err := rootfs.Build(ctx, rootfs.Options{Packages: []string{"base-passwd", "bash", "busybox-static", "dash"}, Log: io.Discard})
	if err != nil {
		return envErr(err)
	}
	extra := map[string][]byte{"boot/config-" + release: config}
	for dst, src := range map[string]string{"usr/bin/sh": "usr/bin/dash", "usr/bin/zcat": "usr/bin/busybox"} {
		if extra[dst], err = os.ReadFile(filepath.Join(shells.Dir, src)); err != nil {
			return envErr(err)
		}
	}
	initBin := filepath.Join(build, "ltp", "ltp-init")
	cc := exec.CommandContext(ctx, "riscv64-linux-gnu-gcc", "-static", "-O2", "-Wall", "-o", initBin, filepath.Join(root, "tools", "ltp", "init.c"))
	if out, err := cc.CombinedOutput(); err != nil {
		return envErr(fmt.Errorf("ltp: building the guest's init: %v\n%s", err, out))
	}
	init, err := os.ReadFile(initBin)
	if err != nil {
		return envErr(err)
	}
	// One image per kernel list, so that runs on each kernel can go side by side.
	img := filepath.Join(build, "ltp", "ltp-"+strings.Join(*kernels, "-")+".cpio")
	writeImage := func(es []ltp.Entry) error {
		return ltp.Image(img, base.CPIO, *opt, init, ltp.List(es), extra)
	}
	if err := writeImage(es); err != nil {
		return envErr(err)
	}
	fmt.Printf("ltp: %d tests, image %s\n", len(es), img)

	// The same QEMU machine for both; only firmware, kernel and the
	// command line's way of naming init differ.
	qemuArgs := func(start int, bios, kernel, cmdline string) []string {
		return []string{"-machine", "virt", "-m", *mem, "-smp", "1", "-nographic", "-monitor", "none", "-no-reboot",
			"-global", "virtio-mmio.force-legacy=false", "-device", "virtio-rng-device",
			"-bios", bios, "-kernel", kernel, "-initrd", img,
			"-append", cmdline + " -- " + strconv.Itoa(start)}
	}
	machines := map[string]ltp.Machine{
		"ours": {Name: "ours", Command: func(ctx context.Context, start int) *exec.Cmd {
			return exec.CommandContext(ctx, "qemu-system-riscv64", qemuArgs(start, filepath.Join(build, "tramp.bin"),
				filepath.Join(build, "kernel.elf"), "init="+ltp.InitPath)...)
		}},
		"linux": {Name: "linux", Command: func(ctx context.Context, start int) *exec.Cmd {
			return exec.CommandContext(ctx, "qemu-system-riscv64", qemuArgs(start, "default", linux.Kernel,
				"console=ttyS0 quiet loglevel=1 panic=-1 rdinit="+ltp.InitPath)...)
		}},
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return envErr(err)
	}
	for _, k := range *kernels {
		m, ok := machines[k]
		if !ok {
			return usageErr("ltp: --kernel %q: ours or linux", k)
		}
		began := time.Now()
		rs, boots, runErr := ltp.Run(ctx, m, es, filepath.Join(build, "ltp", "console-"+k), os.Stdout)
		var failed []string
		if *gatePath != "" && runErr == nil {
			if failed, runErr = rerunFailed(ctx, m, es, rs, writeImage, filepath.Join(build, "ltp", "console-"+k+"-again")); runErr == nil {
				// The next kernel's run needs the whole list again.
				runErr = writeImage(es)
			}
		}
		pass := 0
		for _, r := range rs {
			if r.Verdict() == "PASS" {
				pass++
			}
		}
		header := []string{
			fmt.Sprintf("LTP build %s, runtest/syscalls on %s, %s", filepath.Base(filepath.Dir(filepath.Dir(*opt))), k, began.UTC().Format("2006-01-02 15:04 MST")),
			fmt.Sprintf("%d tests, %d pass, %d boots, %s; QEMU %s", len(rs), pass, boots, time.Since(began).Round(time.Second), strings.Join(m.Command(ctx, 0).Args[1:], " ")),
		}
		if runErr != nil {
			// What ran is kept: an interrupted run is still a measurement.
			header = append(header, fmt.Sprintf("INCOMPLETE: %d of %d tests; %v", len(rs), len(es), runErr))
		}
		out := filepath.Join(*outDir, "results-"+k+".txt")
		f, err := os.Create(out)
		if err != nil {
			return envErr(err)
		}
		err = ltp.WriteResults(f, header, rs)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return envErr(err)
		}
		if runErr != nil {
			return envErr(runErr)
		}
		fmt.Printf("ltp: %s: %d tests, %d pass, %d boots, %s -> %s\n", k, len(rs), pass, boots, time.Since(began).Round(time.Second), out)
		if len(failed) > 0 {
			fmt.Printf("ltp: gate: %d of %d tests of %s failed on %s twice: %s\n", len(failed), len(es), *gatePath, k, strings.Join(failed, " "))
			return errFailed
		}
		if *gatePath != "" {
			fmt.Printf("ltp: gate: all %d tests of %s pass on %s\n", len(es), *gatePath, k)
		}
	}
	return nil
}

// rerunFailed runs once more, in a boot of their own, the gate's tests
// that did not pass in rs, so that one that failed by the host's load
// alone is not a regression; it returns those that fail again and keeps
// the second result in rs.
func rerunFailed(ctx context.Context, m ltp.Machine, es []ltp.Entry, rs []ltp.Result, writeImage func([]ltp.Entry) error, logPrefix string) ([]string, error) {
	var again []ltp.Entry
	for i, r := range rs {
		if r.Verdict() != "PASS" {
			again = append(again, es[i])
		}
	}
	if len(again) == 0 {
		return nil, nil
	}
	fmt.Printf("ltp: gate: %d tests did not pass; running them again\n", len(again))
	if err := writeImage(again); err != nil {
		return nil, err
	}
	second, _, err := ltp.Run(ctx, m, again, logPrefix, os.Stdout)
	if err != nil {
		return nil, err
	}
	byName := map[string]ltp.Result{}
	for _, r := range second {
		byName[r.Name] = r
	}
	var failed []string
	for i, r := range rs {
		if r.Verdict() == "PASS" {
			continue
		}
		if r2, ok := byName[r.Name]; ok {
			rs[i] = r2
		}
		if rs[i].Verdict() != "PASS" {
			failed = append(failed, r.Name)
		}
	}
	return failed, nil
}
