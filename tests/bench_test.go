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

var (
	benchMu               sync.Mutex
	benchOurs, benchLinux map[string]float64
)

// benchMeasure boots testdata/bench.c as /init once on our kernel and once
// on Debian's Linux, both on QEMU's virt machine with one hart (-smp 1:
// our kernel runs one) and 256 MiB, and returns the figures of each.
func benchMeasure(b *testing.B) (ours, linux map[string]float64) {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if benchOurs == nil {
		cpio := initramfs(b, crossCompile(b, "bench.c"), nil)
		r := bootKernel(b, "256M", "", 5*time.Minute, "-smp", "1", "-initrd", cpio)
		if r.timedOut || r.exitCode != 0 {
			b.Fatalf("ours: exit %d (timed out %v):\n%s", r.exitCode, r.timedOut, r.console)
		}
		out, code := linuxOracle(b, cpio)
		if code != 0 {
			b.Fatalf("linux: exit %d:\n%s", code, out)
		}
		benchOurs, benchLinux = benchFigures(b, "ours", r.console), benchFigures(b, "linux", out)
	}
	return benchOurs, benchLinux
}

// BenchmarkKernels reports, for each operation, the in-guest time per
// operation on our kernel (ns/op), on Linux (linux-ns/op) and their ratio
// (ours/linux: below 1 is faster than Linux). The guests are booted once
// per benchmark binary and time a fixed number of operations themselves,
// best of three rounds, so b.N does not apply; run with -benchtime=1x.
func BenchmarkKernels(b *testing.B) {
	for _, op := range benchOps {
		b.Run(op, func(b *testing.B) {
			ours, linux := benchMeasure(b)
			for b.Loop() {
			}
			b.ReportMetric(ours[op], "ns/op")
			b.ReportMetric(linux[op], "linux-ns/op")
			b.ReportMetric(ours[op]/linux[op], "ours/linux")
		})
	}
}
