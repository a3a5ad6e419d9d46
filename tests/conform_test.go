package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConformance is the differential conformance suite: each C program in
// testdata/conform/AREA/ is built once, run as /init on the kernel and
// under qemu-riscv64 on Linux, and must print the same lines and exit with
// the same status. Every line is one checked behaviour (conform.h).
func TestConformance(t *testing.T) {
	srcs, err := filepath.Glob("testdata/conform/*/*.c")
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no conformance programs: %v", err)
	}
	checked := 0
	t.Cleanup(func() { t.Logf("%d behaviours checked against Linux in %d programs", checked, len(srcs)) })
	for _, src := range srcs {
		rel := strings.TrimPrefix(src, "testdata/")
		name := strings.TrimSuffix(strings.TrimPrefix(rel, "conform/"), ".c")
		t.Run(name, func(t *testing.T) { checked += runConformance(t, src) })
	}
}

// TestConformanceSMP runs the threads, futex, memory, /proc and System V
// IPC programs on four harts: threads of one process run on several harts
// at once, wait on futexes, semaphores and message queues woken from other
// harts, change a page table other harts are using (munmap, mprotect,
// copy-on-write after fork), and read /proc/PID of a process that execs
// on another hart.
func TestConformanceSMP(t *testing.T) {
	srcs, err := filepath.Glob("testdata/conform/*/*.c")
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, src := range srcs {
		area := filepath.Base(filepath.Dir(src))
		if area != "threads" && area != "futex" && area != "mm" && area != "proc" && area != "ipc" {
			continue
		}
		ran++
		t.Run(area+"/"+strings.TrimSuffix(filepath.Base(src), ".c"), func(t *testing.T) {
			runConformance(t, src, "-smp", "4")
		})
	}
	if ran < 10 {
		t.Fatalf("only %d threads, futex, mm, proc and ipc programs found", ran)
	}
}

// runConformance checks one program against qemu-riscv64 and returns how
// many lines matched.
func runConformance(t *testing.T, src string, qemuArgs ...string) int {
	if needsBinfmt(t, src) {
		requireBinfmt(t)
	}
	bin := crossCompile(t, strings.TrimPrefix(src, "testdata/"))
	want, wantCode := oracleInDir(t, bin)
	r := bootKernel(t, "256M", "", 3*time.Minute, append([]string{"-initrd", initramfs(t, bin, nil)}, qemuArgs...)...)
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	return compareWithOracle(t, r, want, wantCode)
}

// compareWithOracle checks what init printed on the kernel, line by line,
// and its exit status against Linux's, and returns how many lines matched
// (0 on any difference, when the console is logged).
func compareWithOracle(t *testing.T, r bootResult, want string, wantCode int) int {
	t.Helper()
	got := initOutput(r.console)
	wantLines := strings.Split(strings.TrimRight(want, "\n"), "\n")
	for i := 0; i < max(len(got), len(wantLines)); i++ {
		g, w := "(nothing)", "(nothing)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			t.Errorf("line %d: ours %q, Linux %q", i+1, g, w)
		}
	}
	if r.exitCode != wantCode {
		t.Errorf("exit status %d, Linux %d", r.exitCode, wantCode)
	}
	if t.Failed() {
		t.Logf("console:\n%s", r.console)
		return 0
	}
	return len(wantLines)
}

// oracleInDir runs bin under qemu-riscv64 with a fresh scratch directory as
// its working directory, where it may create files.
func oracleInDir(t *testing.T, bin []byte) (string, int) {
	t.Helper()
	dir := t.TempDir()
	prog := filepath.Join(t.TempDir(), "init")
	if err := os.WriteFile(prog, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return runOracle(t, dir, prog)
}

var kernelLine = regexp.MustCompile(`^(kernel: |\[pid \d+\] )`)

// initOutput returns what init printed: the console lines after the
// initramfs was unpacked, without the kernel's own reports.
func initOutput(console string) []string {
	i := strings.Index(console, " KiB unpacked\n")
	if i < 0 {
		return nil
	}
	var out []string
	for _, l := range strings.Split(console[i+len(" KiB unpacked\n"):], "\n") {
		if l != "" && !kernelLine.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// needsBinfmt reports whether a program says "needs: binfmt": it execs
// riscv64 programs, which Linux runs through qemu-user's binfmt_misc entry.
func needsBinfmt(t *testing.T, src string) bool {
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), "needs: binfmt")
}

// requireBinfmt checks that the host runs riscv64 programs through
// qemu-user (Debian's qemu-user-binfmt; .ci/run registers it).
func requireBinfmt(t *testing.T) {
	if _, err := os.Stat("/proc/sys/fs/binfmt_misc/qemu-riscv64"); err != nil {
		msg := "the host cannot exec riscv64 programs: install qemu-user-binfmt and register it (see .ci/run)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}
