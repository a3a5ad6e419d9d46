package tests

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSyscallFuzz boots testdata/fuzz/fuzz.c as init once per seed: random
// system calls with arguments drawn by kind, in child processes the
// fuzzer restarts. The kernel must answer every one: no panic, no hang,
// no handler bug (a BUG report, or a child the kernel killed). make test
// runs a short pass; make fuzz SEEDS=1-20 N=50000 a long one.
func TestSyscallFuzz(t *testing.T) {
	first, last, calls := 1, 4, 2000
	if s := os.Getenv("JIEGE_FUZZ_SEEDS"); s != "" {
		a, b, _ := strings.Cut(s, "-")
		first, _ = strconv.Atoi(a)
		last = first
		if b != "" {
			last, _ = strconv.Atoi(b)
		}
	}
	if s := os.Getenv("JIEGE_FUZZ_N"); s != "" {
		calls, _ = strconv.Atoi(s)
	}
	if first <= 0 || last < first || calls <= 0 {
		t.Fatalf("bad JIEGE_FUZZ_SEEDS or JIEGE_FUZZ_N")
	}
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

// bugLines picks the console lines that tell what went wrong.
func bugLines(console string) string {
	var out []string
	for _, l := range strings.Split(console, "\n") {
		if strings.Contains(l, "BUG") || strings.Contains(l, "panic") || strings.HasPrefix(l, "fuzz:") ||
			strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "goroutine ") {
			out = append(out, l)
		}
	}
	return strings.Join(out[:min(len(out), 60)], "\n")
}
