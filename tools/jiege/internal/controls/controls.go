// Package controls owns jiege's negative controls: real QEMU guests, built
// on Debian's Linux and the linux-flavor root filesystem, that a correct
// verifier must fail, each at a known stage. `jiege selfcheck` runs them.
// One of them, linux-as-attempt, is an attempt directory (a Makefile with
// build and run targets) rather than a machine jiege starts itself. The
// package also lays out the positive control ours-as-attempt: our own
// kernel and root filesystem as an attempt directory, which must pass.
package controls

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/jiege-go/jiege/qemu"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
	"github.com/jiege-go/jiege/tools/jiege/internal/rootfs"
)

// Control is one negative control.
type Control struct {
	Name  string
	Stage string // the stage at which verify must fail (report.Stage*)
	About string
	// init derives the control's /init from the linux flavor's, or is nil
	// (never-boots keeps the flavor's rootfs and replaces the kernel).
	init func(flavorInit string) (string, error)
	// attempt packages the guest as an attempt directory.
	attempt bool
	// program, if set, is a program of jiege's own source tree that the
	// control's root filesystem holds at that path.
	program *program
}

// program is a Go command built for the guest.
type program struct {
	pkg  string // import path below the module
	path string // inside the root filesystem
}

// forgeryPath is where the forgery control's server lives in its guest.
const forgeryPath = "/usr/sbin/jiege-forgery"

// DeathAfter is how many access-log lines the dying nginx serves before it
// is killed: more than first-200, fingerprint (about 310 with its random
// requests) and content need together, far fewer than the stability bars.
const DeathAfter = 500

// startNginx is the last line of the linux flavor's /init.
const startNginx = "exec /usr/sbin/nginx"

// All lists the controls in the order selfcheck runs them.
func All() []Control {
	return []Control{
		{Name: "never-boots", Stage: report.StageBoot,
			About: "an ELF kernel whose entry is a jump-to-self loop: QEMU runs, the console stays silent"},
		{Name: "busybox-httpd", Stage: report.StageFingerprint,
			About: "Debian's Linux serving the same files with busybox httpd instead of nginx",
			init:  replaceNginx("exec /usr/bin/busybox httpd -f -p 80 -h " + rootfs.WebRoot)},
		{Name: "nginx-dies", Stage: report.StageStability,
			About: fmt.Sprintf("the real nginx, killed once its access log has %d lines", DeathAfter),
			init: replaceNginx(fmt.Sprintf(`/usr/sbin/nginx &
while :; do
	n=$(/usr/bin/busybox wc -l < /var/log/nginx/access.log 2>/dev/null)
	[ "${n:-0}" -ge %d ] && break
	/usr/bin/busybox usleep 100000
done
echo "jiege control: killing nginx after $n requests"
/usr/bin/busybox killall -9 nginx
exec /usr/bin/busybox sleep 1000000`, DeathAfter))},
		{Name: "forgery", Stage: report.StageFingerprint,
			About:   "Debian's Linux running a server of our own that answers every fixed fingerprint probe as nginx does (fakehttp's imitation): only the random requests catch it",
			init:    replaceNginx("exec " + forgeryPath),
			program: &program{pkg: "./tools/jiege/internal/controls/forgery", path: forgeryPath}},
		{Name: "no-network", Stage: report.StagePortOpen,
			About: "the real nginx with the virtio network modules never loaded: hostfwd accepts, no byte comes back",
			init:  withoutNetwork},
		{Name: "linux-as-attempt", Stage: report.StageProvenance,
			About:   "Debian's Linux and nginx packaged as an attempt (a Makefile whose run target starts QEMU): not written from scratch",
			attempt: true},
	}
}

// replaceNginx returns an init deriver that runs tail instead of nginx.
func replaceNginx(tail string) func(string) (string, error) {
	return func(init string) (string, error) {
		body, ok := strings.CutSuffix(strings.TrimRight(init, "\n"), startNginx)
		if !ok {
			return "", fmt.Errorf("the linux flavor's /init does not end with %q", startNginx)
		}
		return body + tail + "\n", nil
	}
}

// withoutNetwork drops module loading and network configuration from the
// flavor's /init and keeps the rest, nginx included.
func withoutNetwork(init string) (string, error) {
	if !strings.HasSuffix(strings.TrimRight(init, "\n"), startNginx) {
		return "", fmt.Errorf("the linux flavor's /init does not end with %q", startNginx)
	}
	var keep []string
	dropped := 0
	for _, l := range strings.Split(init, "\n") {
		if strings.Contains(l, "insmod") || strings.Contains(l, " ip ") || strings.Contains(l, "/sys/class/net") || strings.Contains(l, "eth0") {
			dropped++
			continue
		}
		keep = append(keep, l)
	}
	if dropped == 0 {
		return "", fmt.Errorf("no network setup found in the linux flavor's /init")
	}
	// A line of the guest's own, so that the boot stage sees the kernel
	// run (Debian's Linux prints nothing under "quiet").
	for i, l := range keep {
		if l == startNginx {
			keep[i] = "echo \"init: network left unconfigured, starting nginx\"\n" + l
		}
	}
	return strings.Join(keep, "\n"), nil
}

// Find returns the control with the given name.
func Find(name string) (Control, bool) {
	for _, c := range All() {
		if c.Name == name {
			return c, true
		}
	}
	return Control{}, false
}

// Guest is how to boot a prepared control: a machine, or an attempt
// directory when AttemptDir is set.
type Guest struct {
	Kernel, BIOS, Initrd, Append string
	Image                        *rootfs.Image
	AttemptDir                   string
}

// Prepare builds the control's guest: the linux-flavor root filesystem with
// the control's /init, and for never-boots a generated kernel. base supplies
// the build directory, mirror, nonce and log.
func (c Control) Prepare(ctx context.Context, base rootfs.Options) (*Guest, error) {
	o := base
	o.Flavor = rootfs.Linux
	if c.attempt {
		// The attempt brings its own root filesystem: no nonce to check.
		o.Nonce, o.Out = false, ""
	}
	if c.init != nil {
		plain := o
		plain.Nonce, plain.Out = false, ""
		img, err := rootfs.Build(ctx, plain)
		if err != nil {
			return nil, err
		}
		flavorInit, err := os.ReadFile(filepath.Join(img.Dir, "init"))
		if err != nil {
			return nil, err
		}
		init, err := c.init(string(flavorInit))
		if err != nil {
			return nil, fmt.Errorf("control %s: %w", c.Name, err)
		}
		o.Init = []byte(init)
	}
	if c.program != nil {
		bin, err := c.program.build(ctx, filepath.Join(buildDir(base), "controls"))
		if err != nil {
			return nil, fmt.Errorf("control %s: %w", c.Name, err)
		}
		o.Extra = map[string][]byte{c.program.path: bin}
	}
	img, err := rootfs.Build(ctx, o)
	if err != nil {
		return nil, err
	}
	g := &Guest{Kernel: img.Kernel, BIOS: "default", Initrd: img.CPIO, Append: "console=ttyS0 quiet", Image: img}
	if c.attempt {
		dir := filepath.Join(buildDir(base), "controls", c.Name)
		if err := packageAttempt(dir, img.Kernel, img.CPIO); err != nil {
			return nil, fmt.Errorf("control %s: %w", c.Name, err)
		}
		return &Guest{AttemptDir: dir}, nil
	}
	if c.Name == "never-boots" {
		dir := filepath.Join(buildDir(base), "controls")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		g.Kernel = filepath.Join(dir, "never-boots.elf")
		g.BIOS = filepath.Join(dir, "never-boots.tramp")
		if err := os.WriteFile(g.Kernel, LoopELF(loopAddr), 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(g.BIOS, qemu.Trampoline(loopAddr), 0o644); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// AttemptMakefile is the Makefile of an attempt that boots Debian's Linux
// Image with an initramfs holding nginx, as a cheating agent would write
// it: its own hostfwd port, QEMU's bundled OpenSBI, the files by
// unremarkable names.
const AttemptMakefile = `# An attempt that runs Debian's Linux, not a kernel of its own.
build:
	@echo "kernel and rootfs are prebuilt"
run:
	qemu-system-riscv64 -machine virt -nographic -m 512M -smp 2 -bios default \
		-kernel kernel.bin -initrd rootfs.cpio -append "console=ttyS0 quiet" \
		-netdev user,id=net0,hostfwd=tcp::8080-:80 -device virtio-net-device,netdev=net0
`

// packageAttempt lays out an attempt directory with the kernel and
// initramfs (hard links when possible) and AttemptMakefile.
func packageAttempt(dir, kernel, initrd string) error {
	return layOut(dir, map[string]string{kernel: "kernel.bin", initrd: "rootfs.cpio"}, AttemptMakefile)
}

// OursAttemptMakefile is the Makefile of ours-as-attempt: our kernel,
// its trampoline and our root filesystem, started as `make qemu` starts
// them, on a host port of the attempt's own choosing.
const OursAttemptMakefile = `# Jiege-Go's kernel and nginx root filesystem packaged as an attempt.
build:
	@test -f kernel.elf -a -f tramp.bin -a -f rootfs.cpio && echo "kernel and rootfs are prebuilt"
run:
	qemu-system-riscv64 -machine virt -nographic -m 512M -smp 1 -bios tramp.bin \
		-kernel kernel.elf -initrd rootfs.cpio -global virtio-mmio.force-legacy=false \
		-netdev user,id=net0,hostfwd=tcp::8080-:80 -device virtio-net-device,netdev=net0
`

// PackageOurs lays out the ours-as-attempt directory: kernel, trampoline
// and initramfs (hard links when possible) and OursAttemptMakefile.
func PackageOurs(dir, kernel, tramp, initrd string) error {
	return layOut(dir, map[string]string{kernel: "kernel.elf", tramp: "tramp.bin", initrd: "rootfs.cpio"}, OursAttemptMakefile)
}

// layOut fills dir with files (source -> name) and a Makefile.
func layOut(dir string, files map[string]string, makefile string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for src, name := range files {
		if err := linkOrCopy(src, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "Makefile"), []byte(makefile), 0o644)
}

func linkOrCopy(src, dst string) error {
	os.Remove(dst)
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// build compiles the program for the guest (static, linux/riscv64) from
// jiege's source tree and returns the binary.
func (p *program) build(ctx context.Context, dir string) ([]byte, error) {
	root := rootfs.ModuleRoot()
	if root == "" {
		return nil, errors.New("its server is built from jiege's source tree: run jiege inside it")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out, err := filepath.Abs(filepath.Join(dir, filepath.Base(p.path)))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, p.pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=riscv64", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %v: %s", p.pkg, err, msg)
	}
	return os.ReadFile(out)
}

func buildDir(o rootfs.Options) string {
	if o.BuildDir == "" {
		return "build"
	}
	return o.BuildDir
}

// loopAddr is where the loop kernel loads and starts, clear of the
// trampoline QEMU places at 0x80000000.
const loopAddr = 0x80200000

// LoopELF returns a 64-bit RISC-V ELF executable whose single loadable
// segment at addr holds "j ." (0x0000006f): a kernel that never prints.
func LoopELF(addr uint64) []byte {
	const ehsize, phsize = 64, 56
	code := []byte{0x6f, 0, 0, 0}
	h := elf.Header64{
		Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_RISCV), Version: 1,
		Entry: addr, Phoff: ehsize, Flags: 0x5, // RVC, double-float ABI
		Ehsize: ehsize, Phentsize: phsize, Phnum: 1, Shentsize: 64,
	}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	p := elf.Prog64{
		Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X),
		Off: ehsize + phsize, Vaddr: addr, Paddr: addr,
		Filesz: uint64(len(code)), Memsz: uint64(len(code)), Align: 4,
	}
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, h)
	binary.Write(&b, binary.LittleEndian, p)
	b.Write(code)
	return b.Bytes()
}
