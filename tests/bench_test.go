package tests

import (
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
)

// benchOps are the operations testdata/bench.c times, in its order.
var benchOps = []string{"null_syscall", "clock_gettime", "fork_exit_wait", "fork_exec_wait",
	"pipe_ping_pong", "socketpair_ping_pong", "tcp_ping_pong", "open_fstat_close", "epoll_ready",
	"tcp_connect_close"}

var benchLine = regexp.MustCompile(`(?m)^bench (\S+) ([0-9.]+)\r?$`)

// benchFigures parses the program's "bench NAME NS" lines.
func benchFigures(tb testing.TB, kernel, console string) map[string]float64 {
	tb.Helper()
	figures := map[string]float64{}
	for _, m := range benchLine.FindAllStringSubmatch(console, -1) {
		ns, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			tb.Fatalf("%s: %q: %v", kernel, m[0], err)
		}
		figures[m[1]] = ns
	}
	for _, op := range benchOps {
		if _, ok := figures[op]; !ok {
			tb.Fatalf("%s printed no figure for %s:\n%s", kernel, op, console)
		}
	}
	return figures
}

// benchTwoHartsOp is the operation bench.c times only when the machine
// has two harts or more.
const benchTwoHartsOp = "null_syscall_2threads"

var (
	benchMu      sync.Mutex
	benchResults = map[int][2]map[string]float64{} // by -smp: ours, Linux
)

// benchMeasure boots testdata/bench.c as /init once on our kernel and once
// on Debian's Linux, both on QEMU's virt machine with smp harts and
// 256 MiB, and returns the figures of each.
func benchMeasure(b *testing.B, smp int) (ours, linux map[string]float64) {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if r, ok := benchResults[smp]; ok {
		return r[0], r[1]
	}
	cpio := initramfs(b, crossCompile(b, "bench.c"), nil)
	harts := strconv.Itoa(smp)
	r := bootKernel(b, "256M", "", 5*time.Minute, "-smp", harts, "-initrd", cpio)
	if r.timedOut || r.exitCode != 0 {
		b.Fatalf("ours: exit %d (timed out %v):\n%s", r.exitCode, r.timedOut, r.console)
	}
	out, code := linuxOracle(b, cpio, "-smp", harts)
	if code != 0 {
		b.Fatalf("linux: exit %d:\n%s", code, out)
	}
	ours, linux = benchFigures(b, "ours", r.console), benchFigures(b, "linux", out)
	if smp > 1 {
		for name, figures := range map[string]map[string]float64{"ours": ours, "linux": linux} {
			if _, ok := figures[benchTwoHartsOp]; !ok {
				b.Fatalf("%s printed no figure for %s at -smp %d", name, benchTwoHartsOp, smp)
			}
		}
	}
	benchResults[smp] = [2]map[string]float64{ours, linux}
	return ours, linux
}

// BenchmarkKernels reports, for each operation, the in-guest time per
// operation on our kernel (ns/op), on Linux (linux-ns/op) and their ratio
// (ours/linux: below 1 is faster than Linux). The guests are booted once
// per benchmark binary and time a fixed number of operations themselves,
// best of three rounds, so b.N does not apply; run with -benchtime=1x.
func BenchmarkKernels(b *testing.B) {
	for _, op := range benchOps {
		b.Run(op, func(b *testing.B) {
			ours, linux := benchMeasure(b, 1)
			for b.Loop() {
			}
			b.ReportMetric(ours[op], "ns/op")
			b.ReportMetric(linux[op], "linux-ns/op")
			b.ReportMetric(ours[op]/linux[op], "ours/linux")
		})
	}
}

// BenchmarkKernelsTwoHarts runs bench.c at -smp 2 and reports how null
// system calls made on two harts at once slow each other down: each
// thread's time per call over one thread's alone (1 when they do not,
// 2 when they run one at a time), on our kernel (scaling) and on Linux
// (linux-scaling), and the two threads' time per call (ns/op).
func BenchmarkKernelsTwoHarts(b *testing.B) {
	ours, linux := benchMeasure(b, 2)
	for b.Loop() {
	}
	b.ReportMetric(ours[benchTwoHartsOp], "ns/op")
	b.ReportMetric(linux[benchTwoHartsOp], "linux-ns/op")
	b.ReportMetric(ours[benchTwoHartsOp]/ours["null_syscall"], "scaling")
	b.ReportMetric(linux[benchTwoHartsOp]/linux["null_syscall"], "linux-scaling")
}
