package tests

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
	t.Run("cover", testFuzzCover)
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
// JIEGE_FUZZ_COVER=1 (make fuzz-cover) boots build/kernel-cover.elf
// instead, runs the seeds guided by its coverage and then unguided, and
// prints the coverage of both.
func testFuzzPrograms(t *testing.T) {
	first, last := fuzzSeeds(t, 1, 2)
	f := programsFuzz{
		first: first, last: last,
		programs: fuzzCount(t, "JIEGE_FUZZ_PROGRAMS", 1000),
		workers:  fuzzCount(t, "JIEGE_FUZZ_WORKERS", 4),
	}
	if os.Getenv("JIEGE_FUZZ_FIRST") != "" {
		f.firstProgram = fuzzCount(t, "JIEGE_FUZZ_FIRST", 0)
	}
	bin := crossCompile(t, "fuzz/programs.c")
	f.binPath = filepath.Join(t.TempDir(), "fuzz")
	if err := os.WriteFile(f.binPath, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("JIEGE_FUZZ_TRACE") != "" {
		f.words = " trace"
	}
	f.cpio = initramfs(t, bin, nil)
	if os.Getenv("JIEGE_FUZZ_COVER") == "" {
		f.run(t, ownFirmware)
		return
	}
	if _, err := os.Stat(coverFirmware[3]); err != nil {
		t.Fatalf("%v: make kernel-cover builds it", err)
	}
	words := f.words
	f.words = words + " cover guided"
	guided := f.run(t, coverFirmware)
	f.words = words + " cover"
	unguided := f.run(t, coverFirmware)
	reportCoverage(t, guided, unguided)
}

// coverFirmware boots the kernel built with coverage counters.
var coverFirmware = []string{"-bios", filepath.Join(repoRoot, "build/tramp-cover.bin"), "-kernel", filepath.Join(repoRoot, "build/kernel-cover.elf")}

// testFuzzCover is make test's short pass of the guided fuzzer on the
// coverage kernel: 200 programs of one seed must keep some in the corpus,
// and their coverage files must reach each area of the kernel.
func testFuzzCover(t *testing.T) {
	if _, err := os.Stat(coverFirmware[3]); err != nil {
		t.Skipf("%v: make kernel-cover builds it (make test does)", err)
	}
	bin := crossCompile(t, "fuzz/programs.c")
	f := programsFuzz{first: 1, last: 1, programs: 200, workers: 4, words: " cover guided"}
	f.binPath = filepath.Join(t.TempDir(), "fuzz")
	if err := os.WriteFile(f.binPath, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	f.cpio = initramfs(t, bin, nil)
	dir := f.run(t, coverFirmware)
	if t.Failed() {
		return
	}
	per := readCoverage(t, dir)
	for _, a := range coverageAreas {
		if r := per[a+"/..."]; r.covered == 0 || r.total == 0 {
			t.Errorf("%s: %d of %d statements reached", a, r.covered, r.total)
		}
	}
}

// programsFuzz is a pass of testdata/fuzz/programs.c over seeds first
// to last, with words after its arguments.
type programsFuzz struct {
	first, last, programs, workers, firstProgram int
	binPath, cpio, words                         string
}

// run boots the fuzzer once per seed and checks each boot; with the
// word cover, it returns a directory of the coverage files the boots
// printed, for go tool covdata.
func (f programsFuzz) run(t *testing.T, boot []string) string {
	summary := regexp.MustCompile(`fuzz: seed \d+: (\d+) programs, (\d+) calls, (\d+) system calls.*`)
	noted := regexp.MustCompile(`(?m)^fuzz: seed \d+ program \d+ (still running|ended by signal).*`)
	hit := regexp.MustCompile(`(?m)^fuzz: seed \d+: (\d+) coverage counters hit, (\d+) programs raised it.*`)
	covDir := t.TempDir()
	var progs, calls, syscalls int
	start := time.Now()
	for seed := f.first; seed <= f.last; seed++ {
		timeout := 2*time.Minute + time.Duration(f.programs/f.workers)*200*time.Millisecond
		r := bootKernelWith(t, boot, "256M", fmt.Sprintf("init=/init -- %d %d %d %d%s", seed, f.programs, f.workers, f.firstProgram, f.words), timeout, "-initrd", f.cpio)
		tail := r.console[max(0, len(r.console)-3000):]
		running := func() string { return runningPrograms(t, f.binPath, seed, r.console) }
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
			if strings.Contains(f.words, "trace") {
				t.Log("\n" + strings.Join(regexp.MustCompile(`(?m)^fuzz: t.*`).FindAllString(r.console, -1), "\n"))
			}
			t.Log(m[0])
			for _, l := range noted.FindAllString(r.console, -1) {
				t.Log(l)
			}
			p, _ := strconv.Atoi(m[1])
			c, _ := strconv.Atoi(m[2])
			s, _ := strconv.Atoi(m[3])
			progs, calls, syscalls = progs+p, calls+c, syscalls+s
			if strings.Contains(f.words, "cover") {
				h := hit.FindStringSubmatch(r.console)
				switch {
				case h == nil || h[1] == "0":
					t.Errorf("seed %d: no coverage counters hit", seed)
				case strings.Contains(f.words, "guided") && h[2] == "0":
					t.Errorf("seed %d: guided, but no program raised the counters hit: %s", seed, h[0])
				default:
					t.Log(h[0])
				}
				if err := saveCoverage(covDir, seed, r.console); err != nil {
					t.Errorf("seed %d: %v", seed, err)
				}
			}
		}
	}
	t.Logf("%d programs, %d calls, %d system calls over seeds %d-%d at -smp %s%s in %v", progs, calls, syscalls,
		f.first, f.last, testHarts(t), f.words, time.Since(start).Round(time.Second))
	return covDir
}

// saveCoverage decodes the coverage files the fuzzer printed in base64
// ("fuzz: gocover NAME SIZE" ... "fuzz: gocover end") into dir, named
// as go tool covdata expects: covmeta.HASH and covcounters.HASH.SEED.0,
// the hash being the meta-data file's (internal/coverage's
// MetaFileHeader: bytes 24-40).
func saveCoverage(dir string, seed int, console string) error {
	files := map[string][]byte{}
	for _, m := range regexp.MustCompile(`(?s)fuzz: gocover (\w+) (\d+)\n(.*?)fuzz: gocover end`).FindAllStringSubmatch(console, -1) {
		var text strings.Builder
		for _, l := range strings.Split(m[3], "\n") {
			if base64Line.MatchString(l) {
				text.WriteString(l)
			}
		}
		b, err := base64.StdEncoding.DecodeString(text.String())
		if err != nil || strconv.Itoa(len(b)) != m[2] {
			return fmt.Errorf("coverage file %s: %d bytes of %s decoded (%v)", m[1], len(b), m[2], err)
		}
		files[m[1]] = b
	}
	meta, counters := files["meta"], files["counters"]
	if len(meta) < 40 || len(counters) == 0 {
		return fmt.Errorf("no coverage files on the console")
	}
	hash := hex.EncodeToString(meta[24:40])
	if err := os.WriteFile(filepath.Join(dir, "covmeta."+hash), meta, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, fmt.Sprintf("covcounters.%s.%d.0", hash, seed)), counters, 0o644)
}

var base64Line = regexp.MustCompile(`^[A-Za-z0-9+/=]+$`)

// coverageAreas are the parts of the kernel issue 34 asks the coverage
// of, each a directory with its subpackages.
var coverageAreas = []string{"syscall", "fs", "net", "mm", "kernel"}

// reach is how many statements a pass reached of how many.
type reach struct{ covered, total int }

// readCoverage is the statements a directory of coverage files reached,
// per package and per area (name/...), from go tool covdata's text
// format (one line per block: file:start,end statements count; the
// counts of every seed's file merged).
func readCoverage(t *testing.T, dir string) map[string]reach {
	out := filepath.Join(t.TempDir(), "cover.txt")
	if b, err := exec.Command("go", "tool", "covdata", "textfmt", "-i", dir, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("go tool covdata textfmt -i %s: %v\n%s", dir, err, b)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]reach{}
	for _, l := range strings.Split(string(text), "\n")[1:] {
		fields := strings.Fields(l)
		if len(fields) != 3 {
			continue
		}
		file, _, _ := strings.Cut(fields[0], ":")
		pkg := strings.TrimPrefix(filepath.Dir(file), "github.com/jiege-go/jiege/")
		stmts, _ := strconv.Atoi(fields[1])
		count, _ := strconv.Atoi(fields[2])
		area, _, _ := strings.Cut(pkg, "/")
		for _, name := range []string{pkg, area + "/..."} {
			r := per[name]
			r.total += stmts
			if count > 0 {
				r.covered += stmts
			}
			per[name] = r
		}
	}
	return per
}

// reportCoverage logs the statements the guided and the unguided pass
// reached, per area and per package.
func reportCoverage(t *testing.T, guided, unguided string) {
	g, u := readCoverage(t, guided), readCoverage(t, unguided)
	var names []string
	for _, a := range coverageAreas {
		names = append(names, a+"/...")
	}
	var pkgs []string
	for name := range g {
		if !strings.HasSuffix(name, "/...") {
			pkgs = append(pkgs, name)
		}
	}
	slices.Sort(pkgs)
	var out strings.Builder
	fmt.Fprintf(&out, "statements reached    %24s %24s\n", "guided", "unguided")
	for _, name := range append(names, pkgs...) {
		cell := func(r reach) string {
			return fmt.Sprintf("%6d of %6d %5.1f%%", r.covered, r.total, 100*float64(r.covered)/float64(max(r.total, 1)))
		}
		fmt.Fprintf(&out, "%-20s %25s %24s\n", name, cell(g[name]), cell(u[name]))
	}
	t.Log("coverage of the kernel, guided and unguided, over the same seeds and programs:\n" + out.String())
}

// runningPrograms prints the programs each worker had started last, from
// its "fuzz: wW pP" lines on the console, rebuilt by fuzz print from the
// lineage of the derived ones.
func runningPrograms(t *testing.T, bin string, seed int, console string) string {
	last := map[string]string{}
	parents := map[string][]string{}
	for _, m := range fuzzStart.FindAllStringSubmatch(console, -1) {
		last[m[1]] = m[2]
		if m[3] != "" {
			parents[m[2]] = []string{m[3]}
			if m[4] != "" {
				parents[m[2]] = append(parents[m[2]], m[4])
			}
		}
	}
	var out strings.Builder
	for w, p := range last {
		args := []string{bin, "print", strconv.Itoa(seed), p}
		seen := map[string]bool{}
		for todo := []string{p}; len(todo) > 0; todo = todo[1:] {
			q := todo[0]
			if ps := parents[q]; len(ps) > 0 && !seen[q] {
				seen[q] = true
				args = append(args, q+"="+strings.Join(ps, "+"))
				todo = append(todo, ps...)
			}
		}
		text, _ := runOracle(t, "", args...)
		fmt.Fprintf(&out, "worker %s was running (fuzz %s):\n%s", w, strings.Join(args[1:], " "), text)
	}
	return out.String()
}

var fuzzStart = regexp.MustCompile(`(?m)^fuzz: w(\d+) p(\d+)(?: < p(\d+)(?:\+p(\d+))?)?$`)

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
