package tests

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConformanceLinux is the conformance suite for what qemu-riscv64
// cannot be the oracle of (it emulates some calls differently, e.g. vfork
// as fork): each C program in testdata/conform-linux/AREA/ runs as /init on
// the kernel and on Debian's Linux 6.12 booted under the same QEMU machine,
// and must print the same lines and exit with the same status.
func TestConformanceLinux(t *testing.T) {
	srcs, err := filepath.Glob("testdata/conform-linux/*/*.c")
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no programs: %v", err)
	}
	checked := 0
	t.Cleanup(func() { t.Logf("%d behaviours checked against Linux in %d programs", checked, len(srcs)) })
	for _, src := range srcs {
		rel := strings.TrimPrefix(src, "testdata/")
		name := strings.TrimSuffix(strings.TrimPrefix(rel, "conform-linux/"), ".c")
		t.Run(name, func(t *testing.T) {
			bin := crossCompile(t, rel)
			cpio := initramfs(t, bin, nil)
			want, wantCode := linuxOracle(t, cpio)
			r := bootKernel(t, "256M", "", 3*time.Minute, "-initrd", cpio)
			if r.timedOut {
				t.Fatalf("timed out:\n%s", r.console)
			}
			checked += compareWithOracle(t, r, want, wantCode)
		})
	}
}

var (
	linuxKernelMu   sync.Mutex
	linuxKernelPath string
)

// linuxKernel returns Debian's riscv64 Linux kernel image, the one jiege's
// linux root filesystem boots (fetched or reused by jiege rootfs).
func linuxKernel(t testing.TB) string {
	t.Helper()
	linuxKernelMu.Lock()
	defer linuxKernelMu.Unlock()
	if linuxKernelPath != "" {
		return linuxKernelPath
	}
	r := jiege(t, 10*time.Minute, nil, "rootfs", "--flavor", "linux", "--quiet")
	if r.code != 0 {
		t.Fatalf("jiege rootfs --flavor linux: exit %d\n%s", r.code, r.stderr)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "kernel" {
			linuxKernelPath = strings.TrimSpace(v)
		}
	}
	if linuxKernelPath == "" {
		t.Fatalf("jiege rootfs names no kernel:\n%s", r.stdout)
	}
	return linuxKernelPath
}

var (
	linuxKernelMessage = regexp.MustCompile(`^\[\s*\d+\.\d+\] `)
	linuxInitExit      = regexp.MustCompile(`Attempted to kill init! exitcode=0x([0-9a-f]+)`)
)

// linuxOracle boots Linux with the initramfs (Linux's own built-in one
// provides /dev/console) and returns what /init printed and its exit status
// as the kernel's test device reports it: the exit code, or 128 + the
// signal. Linux panics when init exits; panic=-1 and -no-reboot end QEMU.
// extra are more QEMU options (a network device).
func linuxOracle(t testing.TB, cpio string, extra ...string) (string, int) {
	t.Helper()
	return bootLinux(t, cpio, "256M", 3*time.Minute, extra...)
}

// bootLinux is linuxOracle with the guest's RAM and the time it may take.
func bootLinux(t testing.TB, cpio, mem string, limit time.Duration, extra ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var console bytes.Buffer
	cmd := exec.CommandContext(ctx, "qemu-system-riscv64", "-machine", "virt", "-m", mem, "-nographic",
		"-monitor", "none", "-bios", "default", "-kernel", linuxKernel(t), "-initrd", cpio,
		"-append", "console=ttyS0 quiet loglevel=1 panic=-1", "-no-reboot")
	cmd.Args = append(cmd.Args, extra...)
	cmd.Stdout, cmd.Stderr = &console, &console
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = dieWithTest
	if err := cmd.Run(); ctx.Err() != nil {
		t.Fatalf("Linux did not finish:\n%s", console.String())
	} else if err != nil {
		t.Fatalf("qemu: %v\n%s", err, console.String())
	}
	// Init's output follows OpenSBI's banner, whose last lines are the
	// "Boot HART" ones; kernel messages carry a timestamp.
	lines := strings.Split(strings.ReplaceAll(console.String(), "\r\n", "\n"), "\n")
	start := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "Boot HART ") {
			start = i + 1
		}
	}
	var out strings.Builder
	code := -1
	for _, l := range lines[start:] {
		if m := linuxInitExit.FindStringSubmatch(l); m != nil {
			status, _ := strconv.ParseUint(m[1], 16, 32)
			if code = int(status>>8) & 0xff; status&0x7f != 0 {
				code = 128 + int(status&0x7f)
			}
		}
		if l != "" && !linuxKernelMessage.MatchString(l) {
			out.WriteString(l + "\n")
		}
	}
	if start == 0 || code < 0 {
		t.Fatalf("no init exit in Linux's console:\n%s", console.String())
	}
	return out.String(), code
}
