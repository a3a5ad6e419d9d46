package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/u-root/u-root/pkg/cpio"
)

// crossCompile builds a riscv64 program from testdata with the Debian cross
// compiler (gcc-riscv64-linux-gnu), static unless flags say otherwise.
func crossCompile(t testing.TB, src string, flags ...string) []byte {
	t.Helper()
	gcc, err := exec.LookPath("riscv64-linux-gnu-gcc")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("riscv64-linux-gnu-gcc missing: .ci/run installs gcc-riscv64-linux-gnu")
		}
		t.Skip("riscv64-linux-gnu-gcc not installed (apt-get install gcc-riscv64-linux-gnu)")
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	if len(flags) == 0 {
		flags = []string{"-static"}
	}
	args := append(flags, "-O2", "-Wall", "-Werror", "-o", out, filepath.Join("testdata", src))
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", src, err, b)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// initramfs writes a newc archive with init as /init plus files, and
// returns its path.
func initramfs(t testing.TB, init []byte, files map[string]string) string {
	t.Helper()
	recs := []cpio.Record{cpio.StaticFile("init", string(init), 0o755)}
	for name, content := range files {
		recs = append(recs, cpio.StaticFile(name, content, 0o755))
	}
	var buf bytes.Buffer
	w := cpio.Newc.Writer(&buf)
	if err := cpio.WriteRecordsAndDirs(w, recs); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "initramfs.cpio")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// oracle runs the same program under qemu-riscv64 on the host's Linux,
// with root as its file system, and returns its output and exit status.
func oracle(t *testing.T, bin []byte, files map[string]string) (string, int) {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o755)
	}
	init := filepath.Join(root, "init")
	os.WriteFile(init, bin, 0o755)
	return runOracle(t, "", "-L", root, init)
}

// runOracle runs qemu-riscv64 with args in dir (empty: the test's) and
// returns the program's output and exit status.
func runOracle(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	qemu, err := exec.LookPath("qemu-riscv64")
	if err != nil {
		t.Fatal("qemu-riscv64 not installed (apt-get install qemu-user)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = dieWithTest
	out, err := cmd.Output()
	code := 0
	if ctx.Err() != nil {
		t.Fatalf("qemu-riscv64 %v: still running after 2 minutes; output:\n%s", args, out)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("qemu-riscv64: %v", err)
	}
	return string(out), code
}

// programLines returns the console lines from the one that starts with first
// through the line before the kernel's report of init's exit.
func programLines(console, first string) []string {
	i := strings.Index(console, first)
	if i < 0 {
		return nil
	}
	var out []string
	for _, l := range strings.Split(console[i:], "\n") {
		if strings.HasPrefix(l, "kernel: init exited") {
			break
		}
		if l != "" && !strings.HasPrefix(l, "[pid ") {
			out = append(out, l)
		}
	}
	return out
}

// TestStaticGlibcInit runs a static glibc program as /init and compares what
// it prints, and its exit status (QEMU's), with the same program on Linux.
func TestStaticGlibcInit(t *testing.T) {
	compareWithLinux(t, crossCompile(t, "hello.c"), map[string]string{"etc/motd": "message of the day\n"})
}

// crossLib is where Debian's libc6-riscv64-cross installs the riscv64 glibc.
const crossLib = "/usr/riscv64-linux-gnu/lib"

// TestDynamicGlibcInit runs the same program linked dynamically: the kernel
// loads glibc's dynamic loader, which maps libc.so.6 from the initramfs.
func TestDynamicGlibcInit(t *testing.T) {
	bin := crossCompile(t, "hello.c", "-Wl,--dynamic-linker=/lib/ld-linux-riscv64-lp64d.so.1")
	files := map[string]string{"etc/motd": "message of the day\n"}
	for _, lib := range []string{"ld-linux-riscv64-lp64d.so.1", "libc.so.6"} {
		b, err := os.ReadFile(filepath.Join(crossLib, lib))
		if err != nil {
			t.Fatalf("%v (apt-get install libc6-riscv64-cross)", err)
		}
		files["lib/"+lib] = string(b)
	}
	compareWithLinux(t, bin, files)
}

// compareWithLinux boots bin as /init with files and checks its output and
// exit status against the same program under qemu-riscv64 on Linux.
func compareWithLinux(t *testing.T, bin []byte, files map[string]string) {
	t.Helper()
	want, wantCode := oracle(t, bin, files)
	r := bootKernel(t, "256M", "", 2*time.Minute, "-initrd", initramfs(t, bin, files))
	if r.timedOut || r.exitCode != wantCode {
		t.Fatalf("exit %d (timed out %v), want %d as on Linux:\n%s", r.exitCode, r.timedOut, wantCode, r.console)
	}
	pid := regexp.MustCompile(`argv\[0\]=\S+, pid \d+`)
	norm := func(s string) string { return pid.ReplaceAllString(s, "argv[0]=ARGV0, pid PID") }
	got := programLines(r.console, "hello from static glibc")
	wantLines := strings.Split(strings.TrimSpace(want), "\n")
	if len(got) != len(wantLines) {
		t.Fatalf("printed %d lines, Linux printed %d:\nours:\n%s\nLinux:\n%s", len(got), len(wantLines), strings.Join(got, "\n"), want)
	}
	for i := range got {
		if norm(got[i]) != norm(wantLines[i]) {
			t.Errorf("line %d: %q, Linux: %q", i, got[i], wantLines[i])
		}
	}
	if !strings.Contains(r.console, "argv[0]=/init, pid 1") {
		t.Errorf("init is not /init with pid 1:\n%s", r.console)
	}
}

// TestInitSegfault: a program that writes through a null pointer is killed
// with SIGSEGV (status 139, as a shell reports it); the kernel reports it and
// powers off cleanly.
func TestInitSegfault(t *testing.T) {
	bin := crossCompile(t, "segv.c")
	r := bootKernel(t, "256M", "", 2*time.Minute, "-initrd", initramfs(t, bin, nil))
	if r.timedOut || r.exitCode != 139 {
		t.Fatalf("exit %d (timed out %v), want 139:\n%s", r.exitCode, r.timedOut, r.console)
	}
	if !strings.Contains(r.console, "about to fault") || strings.Contains(r.console, "still alive") {
		t.Errorf("program output wrong:\n%s", r.console)
	}
	if !regexp.MustCompile(`pid 1 \(/init\) killed by SIGSEGV: .* address 0x8\b`).MatchString(r.console) {
		t.Errorf("no SIGSEGV report naming address 0x8:\n%s", r.console)
	}
}

// TestInitSyscallTrace: trace=syscall prints each system call of /init.
func TestInitSyscallTrace(t *testing.T) {
	bin := crossCompile(t, "hello.c")
	r := bootKernel(t, "256M", "trace=syscall", 2*time.Minute, "-initrd", initramfs(t, bin, map[string]string{"etc/motd": "motd\n"}))
	if r.exitCode != 42 {
		t.Fatalf("exit %d:\n%s", r.exitCode, r.console)
	}
	for _, re := range []string{
		`\[pid 1\] uname\(0x[0-9a-f]+, .*\) = 0x0`,
		`\[pid 1\] openat\(0xffffffffffffff9c, 0x[0-9a-f]+, .*\) = 0x3`,
		`\[pid 1\] write\(0x1, 0x10, 0xa, .*\) = -1 EFAULT`,
		`\[pid 1\] exit_group\(0x2a,`,
	} {
		if !regexp.MustCompile(re).MatchString(r.console) {
			t.Errorf("trace lacks %s", re)
		}
	}
	if t.Failed() {
	}
}
