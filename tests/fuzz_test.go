package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSyscallFuzz boots the system call fuzzers as init, once per seed; the
// kernel must answer every call: no panic, no hang, no handler bug (a BUG
// report, a process SIGKILL cannot end). make test runs a short pass of
// each; make fuzz SEEDS=1-20 N=20000 SMP=2 a long one of programs, make
// fuzz-calls SEEDS=1-20 N=50000 of calls.
func TestSyscallFuzz(t *testing.T) {
	t.Run("calls", testFuzzCalls)
	t.Run("programs", testFuzzPrograms)
}

// fuzzSeeds is JIEGE_FUZZ_SEEDS (first-last, or one seed) or first-last.
func fuzzSeeds(t *testing.T, first, last int) (int, int) {
	if s := os.Getenv("JIEGE_FUZZ_SEEDS"); s != "" {
		a, b, _ := strings.Cut(s, "-")
		first, _ = strconv.Atoi(a)
		last = first
		if b != "" {
			last, _ = strconv.Atoi(b)
		}
	}
	if first <= 0 || last < first {
		t.Fatalf("bad JIEGE_FUZZ_SEEDS %q", os.Getenv("JIEGE_FUZZ_SEEDS"))
	}
	return first, last
}

// fuzzCount is the number in the environment variable name, or def.
func fuzzCount(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("bad %s %q", name, s)
	}
	return n
}

// testFuzzCalls boots testdata/fuzz/fuzz.c: random system calls with
// arguments drawn by kind, in child processes the fuzzer restarts (a child
// the kernel killed is a handler bug).
func testFuzzCalls(t *testing.T) {
	first, last := fuzzSeeds(t, 1, 4)
	calls := fuzzCount(t, "JIEGE_FUZZ_CALLS", 2000)
	bin := crossCompile(t, "fuzz/fuzz.c")
	cpio := initramfs(t, bin, nil)
	summary := regexp.MustCompile(`fuzz: seed \d+: .*`)
	total, start := 0, time.Now()
	for seed := first; seed <= last; seed++ {
		timeout := 2*time.Minute + time.Duration(calls)*10*time.Millisecond
		r := bootKernel(t, "256M", fmt.Sprintf("init=/init -- %d %d", seed, calls), timeout, "-initrd", cpio)
		tail := r.console[max(0, len(r.console)-3000):]
		switch {
		case r.timedOut:
			t.Errorf("seed %d: the kernel did not finish in %v (a hang); console tail:\n%s", seed, timeout, tail)
		case strings.Contains(r.console, "kernel panic") || strings.Contains(r.console, "kernel: BUG"):
			t.Errorf("seed %d: kernel panic or handler bug:\n%s", seed, bugLines(r.console))
		case r.exitCode != 0:
			t.Errorf("seed %d: fuzzer exit %d:\n%s", seed, r.exitCode, bugLines(r.console)+tail)
		case !summary.MatchString(r.console):
			t.Errorf("seed %d: no summary line:\n%s", seed, tail)
		default:
			t.Log(summary.FindString(r.console))
			total += calls
		}
	}
	t.Logf("%d calls over seeds %d-%d in %v", total, first, last, time.Since(start).Round(time.Second))
}

// testFuzzPrograms boots testdata/fuzz/programs.c: programs of 5-30 calls
// over 1-4 threads that create, connect, fill and tear down resources,
// JIEGE_FUZZ_WORKERS of them at once. On a panic, hang or BUG it prints the
// programs that were running, generated again by the same binary under
// qemu-riscv64 (fuzz print SEED P); JIEGE_FUZZ_FIRST=P JIEGE_FUZZ_PROGRAMS=1
// runs program P alone, JIEGE_FUZZ_TRACE=1 prints each call's result.
func testFuzzPrograms(t *testing.T) {
	first, last := fuzzSeeds(t, 1, 2)
	programs := fuzzCount(t, "JIEGE_FUZZ_PROGRAMS", 1000)
	workers := fuzzCount(t, "JIEGE_FUZZ_WORKERS", 4)
	firstProgram := 0
	if os.Getenv("JIEGE_FUZZ_FIRST") != "" {
		firstProgram = fuzzCount(t, "JIEGE_FUZZ_FIRST", 0)
	}
	bin := crossCompile(t, "fuzz/programs.c")
	binPath := filepath.Join(t.TempDir(), "fuzz")
	if err := os.WriteFile(binPath, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	trace := ""
	if os.Getenv("JIEGE_FUZZ_TRACE") != "" {
		trace = " trace"
	}
	cpio := initramfs(t, bin, nil)
	summary := regexp.MustCompile(`fuzz: seed \d+: (\d+) programs, (\d+) calls, (\d+) system calls.*`)
	slow := regexp.MustCompile(`(?m)^fuzz: seed \d+ program \d+ still running.*`)
	var progs, calls, syscalls int
	start := time.Now()
	for seed := first; seed <= last; seed++ {
		timeout := 2*time.Minute + time.Duration(programs/workers)*200*time.Millisecond
		r := bootKernel(t, "256M", fmt.Sprintf("init=/init -- %d %d %d %d%s", seed, programs, workers, firstProgram, trace), timeout, "-initrd", cpio)
		tail := r.console[max(0, len(r.console)-3000):]
		running := func() string { return runningPrograms(t, binPath, seed, r.console) }
		switch {
		case r.timedOut:
			t.Errorf("seed %d: the kernel did not finish in %v (a hang); console tail:\n%s\n%s", seed, timeout, tail, running())
		case strings.Contains(r.console, "kernel panic") || strings.Contains(r.console, "kernel: BUG"):
			t.Errorf("seed %d: kernel panic or handler bug:\n%s\n%s", seed, bugLines(r.console), running())
		case r.exitCode != 0:
			t.Errorf("seed %d: fuzzer exit %d:\n%s\n%s", seed, r.exitCode, bugLines(r.console), tail)
		case !summary.MatchString(r.console):
			t.Errorf("seed %d: no summary line:\n%s", seed, tail)
		default:
			m := summary.FindStringSubmatch(r.console)
			if trace != "" {
				t.Log("\n" + strings.Join(regexp.MustCompile(`(?m)^fuzz: t.*`).FindAllString(r.console, -1), "\n"))
			}
			t.Log(m[0])
			for _, l := range slow.FindAllString(r.console, -1) {
				t.Log(l)
			}
			p, _ := strconv.Atoi(m[1])
			c, _ := strconv.Atoi(m[2])
			s, _ := strconv.Atoi(m[3])
			progs, calls, syscalls = progs+p, calls+c, syscalls+s
		}
	}
	t.Logf("%d programs, %d calls, %d system calls over seeds %d-%d at -smp %s in %v", progs, calls, syscalls,
		first, last, testHarts(t), time.Since(start).Round(time.Second))
}

// runningPrograms prints the programs each worker had started last, from
// its "fuzz: wW pP" lines on the console.
func runningPrograms(t *testing.T, bin string, seed int, console string) string {
	last := map[string]string{}
	for _, m := range fuzzStart.FindAllStringSubmatch(console, -1) {
		last[m[1]] = m[2]
	}
	var out strings.Builder
	for w, p := range last {
		text, _ := runOracle(t, "", bin, "print", strconv.Itoa(seed), p)
		fmt.Fprintf(&out, "worker %s was running:\n%s", w, text)
	}
	return out.String()
}

var fuzzStart = regexp.MustCompile(`(?m)^fuzz: w(\d+) p(\d+)$`)

// bugLines picks the console lines that tell what went wrong.
func bugLines(console string) string {
	var out []string
	for _, l := range strings.Split(console, "\n") {
		if fuzzStart.MatchString(l) {
			continue
		}
		if strings.Contains(l, "BUG") || strings.Contains(l, "panic") || strings.HasPrefix(l, "fuzz:") ||
			strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "goroutine ") {
			out = append(out, l)
		}
	}
	return strings.Join(out[:min(len(out), 60)], "\n")
}
