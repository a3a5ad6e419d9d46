package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the module root: the tests run in tests/.
var repoRoot = func() string {
	wd, _ := os.Getwd()
	return filepath.Dir(wd)
}()

var buildKernelOnce = sync.OnceValue(func() error {
	out, err := exec.Command("make", "-C", repoRoot, "kernel").CombinedOutput()
	if err != nil {
		return fmt.Errorf("make kernel: %v\n%s", err, out)
	}
	return nil
})

// dieWithTest kills a QEMU when the test binary dies without running its
// cleanups (a test timeout panics), so that no guest outlives the tests.
var dieWithTest = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}

// bootResult is what a kernel boot printed and how QEMU exited.
type bootResult struct {
	console  string
	exitCode int
	timedOut bool
}

// bootKernel boots build/kernel.elf under QEMU with the given memory size
// and command line until the guest powers off or timeout passes; the QEMU
// it starts is killed on every path.
func bootKernel(t testing.TB, mem, cmdline string, timeout time.Duration, extra ...string) bootResult {
	t.Helper()
	return bootKernelWith(t, ownFirmware, mem, cmdline, timeout, extra...)
}

// How a guest is booted: the kernel ELF with its own M-mode code behind
// the trampoline, or the Linux Image as the payload of QEMU's OpenSBI.
var (
	ownFirmware = []string{"-bios", filepath.Join(repoRoot, "build/tramp.bin"), "-kernel", filepath.Join(repoRoot, "build/kernel.elf")}
	sbiFirmware = []string{"-bios", "default", "-kernel", filepath.Join(repoRoot, "build/Image")}
)

// bootKernelWith is bootKernel with the firmware and kernel arguments boot.
func bootKernelWith(t testing.TB, boot []string, mem, cmdline string, timeout time.Duration, extra ...string) bootResult {
	t.Helper()
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	qemu, err := exec.LookPath("qemu-system-riscv64")
	if err != nil {
		t.Fatal("qemu-system-riscv64 not installed (apt-get install qemu-system-misc)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var console bytes.Buffer
	args := append([]string{"-machine", "virt", "-m", mem, "-nographic", "-monitor", "none"}, boot...)
	args = append(append(args, "-append", cmdline), extra...)
	if !slices.Contains(extra, "-smp") {
		args = append(args, "-smp", testHarts(t))
	}
	cmd := exec.CommandContext(ctx, qemu, args...)
	cmd.Stdout = &console
	cmd.Stderr = &console
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = dieWithTest
	err = cmd.Run()
	r := bootResult{console: strings.ReplaceAll(console.String(), "\r\n", "\n")}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.timedOut = true
	case errors.As(err, &exit):
		r.exitCode = exit.ExitCode()
	case err != nil:
		t.Fatalf("qemu: %v", err)
	}
	return r
}

// testHarts is the guests' -smp: JIEGE_SMP, or 1.
func testHarts(t testing.TB) string {
	s := os.Getenv("JIEGE_SMP")
	if s == "" {
		return "1"
	}
	if n, err := strconv.Atoi(s); err != nil || n < 1 || n > 8 {
		t.Fatalf("JIEGE_SMP=%q: want a number of harts from 1 to 8", s)
	}
	return s
}

// selftestChecks are the checks the issue asks the kernel's selftest for.
var selftestChecks = []string{"harts", "goroutines", "timers", "gc", "maps", "wallclock", "usermode"}

func assertSelftestPassed(t *testing.T, r bootResult, extraChecks ...string) {
	t.Helper()
	checks := append(selftestChecks, extraChecks...)
	if r.timedOut || r.exitCode != 0 {
		t.Fatalf("guest did not pass (timed out %v, exit %d):\n%s", r.timedOut, r.exitCode, r.console)
	}
	for _, c := range checks {
		if !regexp.MustCompile(`(?m)^selftest: ` + c + `: ok \(`).MatchString(r.console) {
			t.Errorf("no passing line for check %q", c)
		}
	}
	if !strings.Contains(r.console, fmt.Sprintf("selftest: PASSED: all %d checks", len(checks))) {
		t.Errorf("no PASSED summary")
	}
	if t.Failed() {
		t.Logf("console:\n%s", r.console)
	}
}

// TestKernelSelftest boots the kernel in selftest mode with 256 MiB and a
// virtio entropy device, and checks every check's line, the boot log and the
// wall clock against the host.
func TestKernelSelftest(t *testing.T) {
	hostStart := time.Now()
	r := bootKernel(t, "256M", "console=ttyS0 selftest", 3*time.Minute,
		"-global", "virtio-mmio.force-legacy=false", "-device", "virtio-rng-device")
	hostEnd := time.Now()
	assertSelftestPassed(t, r, "entropy")
	for _, want := range []string{
		"Jiege-Go ", "riscv64, S-mode",
		"memory: 0x80000000-0x90000000 (256 MiB)",
		"kernel image", "device tree",
		"uart", "clint", "plic", "rtc", "test",
		`command line: "console=ttyS0 selftest"`,
		"boot: since machine start: entry",
		"virtio entropy, irq 8", "seeded the kernel's generators with 32 bytes",
		// The runtime reads clocks through its vDSO (timers, sleeps and
		// the wall clock above included), never by trapping.
		"clock: the kernel's runtime trapped 0 times to read a clock",
	} {
		if !strings.Contains(r.console, want) {
			t.Errorf("boot log lacks %q", want)
		}
	}
	m := regexp.MustCompile(`selftest: wallclock (\d+)`).FindStringSubmatch(r.console)
	if m == nil {
		t.Fatalf("no wall-clock line:\n%s", r.console)
	}
	guest, _ := strconv.ParseInt(m[1], 10, 64)
	if guest < hostStart.Unix()-5 || guest > hostEnd.Unix()+5 {
		t.Errorf("guest wall clock %d outside the host's [%d, %d] +-5 s", guest, hostStart.Unix(), hostEnd.Unix())
	}
	gc := regexp.MustCompile(`selftest: gc: ok \((\d+) MiB garbage = [\d.]+x the (\d+) MiB limit`).FindStringSubmatch(r.console)
	if gc == nil {
		t.Fatal("no gc figures")
	}
	garbage, _ := strconv.Atoi(gc[1])
	limit, _ := strconv.Atoi(gc[2])
	if limit == 0 || garbage < 8*limit {
		t.Errorf("gc check allocated %d MiB for a %d MiB heap limit, want at least 8x", garbage, limit)
	}
}

// TestKernelSelftestSMP runs the selftest on 1, 2 and 4 harts, with a
// virtio entropy device whose interrupt any hart may claim: the runtime
// must see every hart (GOMAXPROCS) and goroutines must run on each, and the
// goroutine, GC, timer and U-mode checks must pass with threads moving
// between harts.
func TestKernelSelftestSMP(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("smp%d", n), func(t *testing.T) {
			r := bootKernel(t, "256M", "selftest", 5*time.Minute, "-smp", strconv.Itoa(n),
				"-global", "virtio-mmio.force-legacy=false", "-device", "virtio-rng-device")
			assertSelftestPassed(t, r, "entropy")
			for _, want := range []string{
				fmt.Sprintf("S-mode, %d of %d harts running", n, n),
				fmt.Sprintf("selftest: harts: ok (%d harts, GOMAXPROCS %d, goroutines ran on every hart", n, n),
			} {
				if !strings.Contains(r.console, want) {
					t.Errorf("console lacks %q:\n%s", want, r.console)
				}
			}
		})
	}
}

// TestKernelMemorySizes boots with 128 MiB and 2 GiB: the size must come
// from the device tree, and the selftest must pass with both.
func TestKernelMemorySizes(t *testing.T) {
	for _, tc := range []struct{ mem, line string }{
		{"128M", "memory: 0x80000000-0x88000000 (128 MiB)"},
		{"2G", "memory: 0x80000000-0x100000000 (2048 MiB)"},
	} {
		t.Run(tc.mem, func(t *testing.T) {
			r := bootKernel(t, tc.mem, "selftest", 3*time.Minute)
			assertSelftestPassed(t, r)
			if !strings.Contains(r.console, tc.line) {
				t.Errorf("boot log lacks %q:\n%s", tc.line, r.console)
			}
		})
	}
}

// TestKernelIdles boots without selftest, as make qemu does: the kernel must
// print its log and stay up, idle, until the test kills it, holding the
// kernel image without crypto's unused FIPS scratch buffer.
func TestKernelIdles(t *testing.T) {
	r := bootKernel(t, "256M", "", 20*time.Second)
	if !r.timedOut {
		t.Fatalf("kernel exited (status %d) instead of idling:\n%s", r.exitCode, r.console)
	}
	m := regexp.MustCompile(`kernel: no init to run; idle, (\d+) KiB resident \(image (\d+) KiB`).FindStringSubmatch(r.console)
	if m == nil {
		t.Fatalf("no idle line with the resident memory:\n%s", r.console)
	}
	// The image links crypto's 32 MiB FIPS scratch buffer (through gVisor's
	// netstack); the kernel gives its frames back, so what stays is the
	// code, the data and the trap and boot stacks.
	image, _ := strconv.Atoi(m[2])
	if image > 16<<10 {
		t.Errorf("kernel image holds %d KiB of RAM, want at most 16 MiB:\n%s", image, r.console)
	}
	if !strings.Contains(r.console, "KiB of it released: crypto's FIPS 140-3 scratch buffer") {
		t.Errorf("the FIPS scratch buffer was not released:\n%s", r.console)
	}
}

// TestKernelRejectsBadCommandLine: a malformed command line is reported and
// the machine powers off with status 2, not a hang or a crash.
func TestKernelRejectsBadCommandLine(t *testing.T) {
	r := bootKernel(t, "256M", "trace=bogus", time.Minute)
	if r.timedOut || r.exitCode != 2 {
		t.Fatalf("timed out %v, exit %d, want exit 2:\n%s", r.timedOut, r.exitCode, r.console)
	}
	if !strings.Contains(r.console, `unknown trace "bogus"`) {
		t.Fatalf("no error message:\n%s", r.console)
	}
}

// TestKernelTraceSyscall: trace=syscall prints the user program's system calls.
func TestKernelTraceSyscall(t *testing.T) {
	r := bootKernel(t, "256M", "selftest trace=syscall", 3*time.Minute)
	assertSelftestPassed(t, r)
	for _, want := range []string{"[user] write(1, 0x11000, 18) = 18", "[user] exit(7)"} {
		if !strings.Contains(r.console, want) {
			t.Errorf("trace lacks %q", want)
		}
	}
}

// TestKernelLegacyVirtio: a legacy virtio-mmio device is reported and left
// alone; the kernel still boots and passes its selftest.
func TestKernelLegacyVirtio(t *testing.T) {
	r := bootKernel(t, "256M", "selftest", 3*time.Minute, "-device", "virtio-rng-device")
	assertSelftestPassed(t, r)
	if !strings.Contains(r.console, "legacy (version 1) transport") {
		t.Errorf("legacy device not reported:\n%s", r.console)
	}
}
