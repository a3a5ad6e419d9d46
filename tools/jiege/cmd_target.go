package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/jiege-go/jiege/qemu"
	"github.com/jiege-go/jiege/tools/jiege/internal/attempt"
	"github.com/jiege-go/jiege/tools/jiege/internal/console"
	"github.com/jiege-go/jiege/tools/jiege/internal/controls"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
	"github.com/jiege-go/jiege/tools/jiege/internal/rootfs"
)

// common holds the flags shared by the commands that boot guests.
type common struct {
	buildDir    string
	mirror      string
	repo        string
	smp         int
	mem         string
	port        int
	console     bool
	bootTimeout time.Duration
	logDir      string
	firmware    string // how ours boots: firmwareOwn, firmwareOpenSBI or firmwareUBoot
}

// How `ours` boots (--firmware).
const (
	// firmwareOwn: build/kernel.elf with its own M-mode code, behind a
	// trampoline that QEMU runs as -bios.
	firmwareOwn = "own"
	// firmwareOpenSBI: build/Image as the payload of QEMU's OpenSBI
	// (-bios default), as Debian's Linux boots.
	firmwareOpenSBI = "opensbi"
	// firmwareUBoot: OpenSBI, then Debian's U-Boot for S-mode, which boots
	// build/Image and the root filesystem from a boot disk (extlinux.conf).
	firmwareUBoot = "uboot"
)

// ubootSmode is Debian's U-Boot for S-mode on QEMU's virt (u-boot-qemu).
const ubootSmode = "/usr/lib/u-boot/qemu-riscv64_smode/uboot.elf"

func (c *common) flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.buildDir, "build-dir", "", "cache and output directory (default: build/ of the source tree)")
	fs.StringVar(&c.mirror, "mirror", "", "Debian mirror URL (default: read from the host's apt sources)")
	fs.StringVar(&c.repo, "repo", "", "source tree for `ours` (default: the module root above the working directory)")
	fs.IntVar(&c.smp, "smp", 0, "guest harts (default: 2 for Debian's Linux, which boots faster with them; 1 for ELF kernels)")
	fs.StringVar(&c.mem, "mem", "512M", "guest memory")
	fs.IntVar(&c.port, "port", 0, "host port forwarded to the guest's port 80 (0: a free one)")
	fs.BoolVar(&c.console, "console", false, "also copy the guest console to stderr, live")
	fs.DurationVar(&c.bootTimeout, "boot-timeout", 30*time.Second, "time allowed for the first console output")
	fs.StringVar(&c.logDir, "log-dir", "", "where console logs go (default: <build-dir>/logs)")
	fs.StringVar(&c.firmware, "firmware", firmwareOwn, "how ours boots: own (its own M-mode code), opensbi (build/Image under QEMU's OpenSBI, as Linux boots), uboot (OpenSBI, then U-Boot from a boot disk)")
}

func (c *common) defaults() {
	if c.buildDir == "" {
		c.buildDir = rootfs.DefaultBuildDir()
	}
	if c.repo == "" {
		c.repo = filepath.Dir(rootfs.DefaultBuildDir())
	}
	if c.logDir == "" {
		c.logDir = filepath.Join(c.buildDir, "logs")
	}
}

// preflight reports host problems before any build: QEMU missing, the
// requested port taken.
func (c *common) preflight() error {
	switch c.firmware {
	case firmwareOwn, firmwareOpenSBI:
	case firmwareUBoot:
		if _, err := os.Stat(ubootSmode); err != nil {
			return envErr(fmt.Errorf("--firmware uboot: %v (Debian: apt-get install u-boot-qemu)", err))
		}
	default:
		return usageErr("--firmware %q: want own, opensbi or uboot", c.firmware)
	}
	if _, err := exec.LookPath(qemu.DefaultBinary); err != nil {
		return envErr(fmt.Errorf("%w: %s not found on PATH (Debian: apt-get install qemu-system-misc)", qemu.ErrNotInstalled, qemu.DefaultBinary))
	}
	if c.port != 0 {
		if err := qemu.CheckPort(c.port); err != nil {
			return envErr(err)
		}
	}
	return nil
}

func (c *common) rootfsOptions(f rootfs.Flavor, log io.Writer) rootfs.Options {
	small := false
	if mem, err := qemu.MemBytes(c.mem); err == nil {
		small = mem < rootfs.SmallMemoryBelow
	}
	return rootfs.Options{Flavor: f, BuildDir: c.buildDir, Mirror: c.mirror, Nonce: true, Log: log, SmallMemory: small}
}

// Target kinds, as report.Verify.KernelKind records them.
const (
	kindOurs = "ours"
	// kindOursAttempt is ours packaged as an attempt directory (its own
	// Makefile and QEMU command): the positive control of the attempt path.
	kindOursAttempt = "ours-as-attempt"
	kindLinux       = "linux"
	kindPath        = "path"
	kindAttempt     = "attempt"
	kindControl     = "control"
)

// controlPrefix names a negative control as a verify target ("control:nginx-dies").
const controlPrefix = "control:"

// target is something jiege can boot and probe.
type target struct {
	name string // as given
	kind string
	path string // kindPath: the kernel file
	att  *attempt.Attempt
	ctrl controls.Control

	// Filled by build.
	machine qemu.Machine
	image   *rootfs.Image
	// viaOpenSBI is ours booted own as it boots through OpenSBI, for
	// bench's second first-200 figure; nil for other targets.
	viaOpenSBI *qemu.Machine
}

// parseTarget resolves a command-line target. An attempt is given as
// attemptDir (the --attempt flag) with its build and run commands.
func parseTarget(spec string) (*target, error) {
	switch {
	case spec == kindOurs || spec == kindLinux || spec == kindOursAttempt:
		return &target{name: spec, kind: spec}, nil
	case strings.HasPrefix(spec, controlPrefix):
		c, ok := controls.Find(strings.TrimPrefix(spec, controlPrefix))
		if !ok {
			return nil, usageErr("unknown negative control %q", spec)
		}
		return &target{name: spec, kind: kindControl, ctrl: c}, nil
	}
	if _, err := os.Stat(spec); err != nil {
		return nil, usageErr("target %q: not ours, linux, or an existing kernel file: %v", spec, err)
	}
	if _, err := qemu.Kind(spec); err != nil {
		return nil, usageErr("target %q: %v", spec, err)
	}
	return &target{name: spec, kind: kindPath, path: spec}, nil
}

// attemptFlags are the flags that describe an attempt (the manifest's
// fields of the same meaning).
type attemptFlags struct {
	dir, build, run string
	guestPort       int
	qemuArgs        []string
}

func (a *attemptFlags) flags(fs *pflag.FlagSet) {
	fs.StringVar(&a.dir, "attempt", "", "an attempt's project directory (its own build and QEMU command)")
	fs.StringVar(&a.build, "build", "", "attempt build command (default: make build if the Makefile has it, else build.sh, else none)")
	fs.StringVar(&a.run, "run", "", "attempt run command (default: make run if the Makefile has it, else run.sh)")
	fs.IntVar(&a.guestPort, "guest-port", 0, "port the attempt's nginx listens on in the guest (default 80)")
	fs.StringArrayVar(&a.qemuArgs, "qemu-arg", nil, "extra QEMU argument for the attempt's QEMU, repeatable (e.g. --qemu-arg=-m --qemu-arg=1G)")
}

func (a *attemptFlags) target() (*target, error) {
	t, err := attemptTarget(a.dir, a.build, a.run)
	if err != nil {
		return nil, err
	}
	if err := runnable(t.att, "--attempt "+a.dir); err != nil {
		return nil, err
	}
	t.att.GuestPort, t.att.QEMUArgs = a.guestPort, a.qemuArgs
	return t, nil
}

// runnable is a usage error for an attempt without a run command: it
// was given wrongly, it did not fail. what names it in the message.
func runnable(att *attempt.Attempt, what string) error {
	if att.RunCommand() == "" {
		return usageErr("%s: %v (give a run command)", what, attempt.ErrNoRun)
	}
	return nil
}

func attemptTarget(dir, build, run string) (*target, error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, usageErr("--attempt %s: %v", dir, attempt.ErrNoDir)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	return &target{name: dir, kind: kindAttempt, att: &attempt.Attempt{Dir: abs, Build: build, Run: run, Self: self}}, nil
}

// build is the build stage: the kernel and root filesystem the target
// boots. Its failure class tells a broken build from a host problem.
func (c *common) build(ctx context.Context, t *target, log io.Writer) report.Stage {
	t0 := time.Now()
	fail := func(class string, err error) report.Stage {
		return report.Failf(report.StageBuild, class, time.Since(t0), "%v", err)
	}
	m := qemu.Machine{SMP: c.smp, Mem: c.mem, HostPort: c.port}
	switch t.kind {
	case kindAttempt:
		if err := t.att.DoBuild(ctx, log); err != nil {
			return fail(report.ClassBuildFailed, err)
		}
		t.att.Port = c.port
		return report.Passf(report.StageBuild, time.Since(t0), "%s: %s", t.att.Dir, orDefault(t.att.BuildCommand(), "no build step"))
	case kindOurs, kindOursAttempt:
		cmd := exec.CommandContext(ctx, "make", "kernel")
		cmd.Dir = c.repo
		cmd.Stdout, cmd.Stderr = log, log
		// Interrupted: end make and the compilers it started.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		if err := cmd.Run(); err != nil {
			return fail(report.ClassBuildFailed, fmt.Errorf("make kernel in %s: %w", c.repo, err))
		}
		o := c.rootfsOptions(rootfs.Ours, log)
		if t.kind == kindOursAttempt {
			o.Nonce = false // an attempt brings its own root filesystem
		} else {
			// Our kernel reads its root from a disk: the 64 MiB file takes
			// no RAM, so the tree keeps it at any guest memory.
			o.SmallMemory = false
		}
		img, err := rootfs.Build(ctx, o)
		if err != nil {
			return fail(report.ClassEnvironment, err)
		}
		m.Kernel = filepath.Join(c.repo, "build", "kernel.elf")
		m.BIOS = filepath.Join(c.repo, "build", "tramp.bin")
		// Our kernel reads its root from a disk on demand; QEMU would copy
		// an initrd into RAM before the first instruction.
		m.Disk, t.image = img.CPIO, img
		if m.SMP == 0 {
			m.SMP = 1 // whatever the firmware: -bios default alone means Linux's 2
		}
		if t.kind == kindOurs {
			sbi := m
			sbi.Kernel, sbi.BIOS = filepath.Join(c.repo, "build", "Image"), "default"
			switch c.firmware {
			case firmwareOwn:
				t.viaOpenSBI = &sbi
			case firmwareOpenSBI:
				m = sbi
			case firmwareUBoot:
				// U-Boot loads the Image and the root (as an initrd) from
				// the disk, as from a board's SD card.
				disk := filepath.Join(c.buildDir, "logs", fmt.Sprintf("uboot-disk-%d.img", os.Getpid()))
				if err := c.writeBootDisk(ctx, sbi.Kernel, img.CPIO, disk, log); err != nil {
					return fail(report.ClassBuildFailed, err)
				}
				m.Kernel, m.BIOS, m.Disk = ubootSmode, "default", disk
			}
		}
		if t.kind == kindOursAttempt {
			dir, err := filepath.Abs(filepath.Join(c.buildDir, "controls", kindOursAttempt))
			if err == nil {
				err = controls.PackageOurs(dir, m.Kernel, m.BIOS, img.CPIO)
			}
			if err != nil {
				return fail(report.ClassEnvironment, err)
			}
			self, err := os.Executable()
			if err != nil {
				return fail(report.ClassEnvironment, err)
			}
			t.att, t.image = &attempt.Attempt{Dir: dir, Self: self, Port: c.port}, nil
			if err := t.att.DoBuild(ctx, log); err != nil {
				return fail(report.ClassBuildFailed, err)
			}
			return report.Passf(report.StageBuild, time.Since(t0), "our kernel packaged as an attempt in %s", dir)
		}
	case kindLinux:
		img, err := rootfs.Build(ctx, c.rootfsOptions(rootfs.Linux, log))
		if err != nil {
			return fail(report.ClassEnvironment, err)
		}
		m.Kernel, m.BIOS, m.Initrd, m.Append, t.image = img.Kernel, "default", img.CPIO, linuxAppend, img
	case kindControl:
		g, err := t.ctrl.Prepare(ctx, c.rootfsOptions(rootfs.Linux, log))
		if err != nil {
			return fail(report.ClassEnvironment, err)
		}
		if g.AttemptDir != "" {
			self, err := os.Executable()
			if err != nil {
				return fail(report.ClassEnvironment, err)
			}
			t.att = &attempt.Attempt{Dir: g.AttemptDir, Self: self, Port: c.port}
			if err := t.att.DoBuild(ctx, log); err != nil {
				return fail(report.ClassBuildFailed, err)
			}
			return report.Passf(report.StageBuild, time.Since(t0), "%s packaged as an attempt in %s", t.ctrl.Name, g.AttemptDir)
		}
		m.Kernel, m.BIOS, m.Initrd, m.Append, t.image = g.Kernel, g.BIOS, g.Initrd, g.Append, g.Image
	case kindPath:
		k, err := qemu.Kind(t.path)
		if err != nil {
			return fail(report.ClassEnvironment, err)
		}
		flavor := rootfs.Ours
		if k == qemu.KindImage {
			flavor = rootfs.Linux
			m.BIOS, m.Append = "default", linuxAppend
		} else {
			entry, err := qemu.ELFEntry(t.path)
			if err != nil {
				return fail(report.ClassEnvironment, err)
			}
			// One trampoline per entry: a bench of two ELF kernels
			// prepares both before it boots either.
			m.BIOS = filepath.Join(c.buildDir, "logs", fmt.Sprintf("tramp-%d-%x.bin", os.Getpid(), entry))
			if err := os.MkdirAll(filepath.Dir(m.BIOS), 0o755); err != nil {
				return fail(report.ClassEnvironment, err)
			}
			if err := os.WriteFile(m.BIOS, qemu.Trampoline(entry), 0o644); err != nil {
				return fail(report.ClassEnvironment, err)
			}
		}
		img, err := rootfs.Build(ctx, c.rootfsOptions(flavor, log))
		if err != nil {
			return fail(report.ClassEnvironment, err)
		}
		m.Kernel, m.Initrd, t.image = t.path, img.CPIO, img
	}
	if m.SMP == 0 {
		m.SMP = 1
		if m.BIOS == "default" {
			m.SMP = 2
		}
	}
	t.machine = m
	detail := fmt.Sprintf("kernel %s, initrd %s", m.Kernel, m.Initrd)
	if m.Disk != "" {
		detail = fmt.Sprintf("kernel %s, root disk %s", m.Kernel, m.Disk)
	}
	return report.Passf(report.StageBuild, time.Since(t0), "%s", detail)
}

// writeBootDisk writes U-Boot's boot disk with the Image and the initramfs
// (qemu/cmd/bootdisk of the source tree).
func (c *common) writeBootDisk(ctx context.Context, image, initrd, disk string, log io.Writer) error {
	if err := os.MkdirAll(filepath.Dir(disk), 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "run", "./qemu/cmd/bootdisk", "-image", image, "-initrd", initrd, "-out", disk)
	cmd.Dir = c.repo
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("bootdisk in %s: %w", c.repo, err)
	}
	return nil
}

// linuxAppend is Debian's Linux command line: serial console, and quiet,
// because every console byte costs time under TCG.
const linuxAppend = "console=ttyS0 quiet"

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// guest is a booted target.
type guest struct {
	*qemu.Instance
	run     *attempt.Running // attempts only
	machine qemu.Machine     // the machine as started, port included

	nginxVersion string            // the root filesystem's nginx, when jiege built it
	attDir       string            // an attempt's directory
	follow       *console.Follower // the console, once QEMU runs (follower)
	watch        *watch            // set by watchConsole
	notedDump    string            // the register dump dumpNote noted last
	scanFiles    bool              // verify checks provenance: scan the files QEMU loads (startScan)
	scan         chan fileScan     // the scan's result (startScan)
}

// Addr is the host address of the guest's HTTP port: for an attempt, the
// one its serving QEMU forwards.
func (g *guest) Addr() string {
	if g.run != nil {
		return g.run.Addr()
	}
	return g.Instance.Addr()
}

// unshimmed describes an attempt's serving QEMU that escaped the shim,
// or "".
func (g *guest) unshimmed() string {
	if g.run == nil {
		return ""
	}
	l, _, port, ok := g.run.Serving()
	if !ok || l.Shimmed {
		return ""
	}
	how := fmt.Sprintf("the attempt's QEMU (pid %d, %s) did not come through jiege's shim (another directory before it on PATH, or an absolute path): "+
		"jiege found it in the run command's process tree and read its command line from /proc, but could not rewrite it or capture its packets; ", l.PID, l.Args0)
	if port == 0 {
		return how + "it forwards no host port to the guest's HTTP port"
	}
	return how + fmt.Sprintf("jiege probes the host port it forwards itself, %s", g.Addr())
}

// alive reports whether the guest's QEMU still runs.
func (g *guest) alive() bool {
	if g.run != nil {
		return g.run.QEMUAlive()
	}
	return !g.Exited()
}

func (g *guest) stop() error {
	if g.run != nil {
		runsMu.Lock()
		delete(runs, g.run)
		runsMu.Unlock()
		return g.run.Stop()
	}
	return g.Stop()
}

// runs are the attempts' run commands still going; qemu.StopAll does not
// know the QEMUs their shim started outside its process group.
var (
	runsMu sync.Mutex
	runs   = map[*attempt.Running]bool{}
)

// stopEverything stops every QEMU this process started, attempts included.
func stopEverything() {
	runsMu.Lock()
	all := make([]*attempt.Running, 0, len(runs))
	for r := range runs {
		all = append(all, r)
	}
	runsMu.Unlock()
	var wg sync.WaitGroup
	for _, r := range all {
		wg.Add(1)
		go func() { defer wg.Done(); r.Stop() }()
	}
	qemu.StopAll()
	wg.Wait()
}

// qemuCommand is the QEMU command line, for the report.
func (g *guest) qemuCommand() []string {
	if g.run != nil {
		if l, _, _, ok := g.run.Serving(); ok {
			return append([]string{l.Args0}, l.Args...)
		}
		if ls := g.run.Launches(); len(ls) > 0 {
			l := ls[len(ls)-1]
			return append([]string{l.Args0}, l.Args...)
		}
		return nil
	}
	return append([]string{qemu.DefaultBinary}, g.machine.Args()...)
}

// start launches the target's QEMU with its console in logPath.
func (c *common) start(ctx context.Context, t *target, logPath string) (*guest, error) {
	return c.startWith(ctx, t, logPath, nil)
}

// startWith is start with extra QEMU arguments.
func (c *common) startWith(ctx context.Context, t *target, logPath string, qemuArgs []string) (*guest, error) {
	var live io.Writer
	if c.console {
		live = os.Stderr
	}
	if t.att != nil {
		att := t.att
		if len(qemuArgs) > 0 {
			withArgs := *t.att
			withArgs.QEMUArgs = slices.Concat(t.att.QEMUArgs, qemuArgs)
			att = &withArgs
		}
		r, err := att.Start(ctx, logPath, live)
		if err != nil {
			return nil, err
		}
		runsMu.Lock()
		runs[r] = true
		runsMu.Unlock()
		return &guest{Instance: r.Instance, run: r, attDir: t.att.Dir}, nil
	}
	m := t.machine
	m.LogPath = logPath
	m.ExtraArgs = slices.Concat(m.ExtraArgs, qemuArgs)
	in, err := qemu.Start(ctx, m, live)
	if err != nil {
		return nil, err
	}
	m.HostPort = in.Port()
	g := &guest{Instance: in, machine: m}
	if t.image != nil {
		g.nginxVersion = t.image.NginxVersion
	}
	return g, nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "(empty)"
	}
	return strings.Join(strings.Fields(s), " ")
}

// startErr classifies a failure to start QEMU as the boot stage's result.
func startErr(err error, t0 time.Time) report.Stage {
	class := report.ClassBootFailed
	if errors.Is(err, qemu.ErrNotInstalled) || errors.Is(err, qemu.ErrPortInUse) {
		class = report.ClassEnvironment
	}
	return report.Failf(report.StageBoot, class, time.Since(t0), "%v", err)
}

// logPath returns a fresh console log file path for a target.
func (c *common) logPath(t *target) string {
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == ':' || r == ' ' {
			return '_'
		}
		return r
	}, strings.Trim(filepath.Base(t.name), "."))
	if name == "" {
		name = t.kind
	}
	return filepath.Join(c.logDir, fmt.Sprintf("%s-%s.log", name, time.Now().Format("20060102-150405.000")))
}
