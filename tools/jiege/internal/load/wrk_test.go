package load

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkVsWrk compares the generator with wrk against a server the
// caller runs, e.g. nginx on the host:
//
//	JIEGE_LOADGEN_VS_WRK=127.0.0.1:8080 go test -run NONE -bench VsWrk -benchtime 1x ./tools/jiege/internal/load
//
// Without the variable it is skipped (it is not a test and proves nothing
// alone); with it, a missing wrk or an unreachable server fails loudly.
// JIEGE_LOADGEN_CONNS (default 50), JIEGE_LOADGEN_SECONDS (default 10) and
// JIEGE_LOADGEN_ROUNDS (default 3) set the connections and duration,
// identical for both tools, and the rounds; the order of the two tools
// alternates between rounds and the medians are reported.
func BenchmarkVsWrk(b *testing.B) {
	addr := os.Getenv("JIEGE_LOADGEN_VS_WRK")
	if addr == "" {
		b.Skip("set JIEGE_LOADGEN_VS_WRK=host:port of a running server to compare with wrk")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		b.Fatalf("JIEGE_LOADGEN_VS_WRK=%q: want a loopback host:port", addr)
	}
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		b.Fatalf("wrk is not installed: %v", err)
	}
	conns := envInt(b, "JIEGE_LOADGEN_CONNS", 50)
	secs := envInt(b, "JIEGE_LOADGEN_SECONDS", 10)
	rounds := envInt(b, "JIEGE_LOADGEN_ROUNDS", 3)
	for i := 0; i < b.N; i++ {
		var wrkRPS, wrkCPU, ourRPS, ourCPU []float64
		for round := 0; round < rounds; round++ {
			runWrk := func() {
				rps, cpu := wrkOnce(b, wrk, addr, conns, secs)
				wrkRPS, wrkCPU = append(wrkRPS, rps), append(wrkCPU, cpu)
			}
			runOurs := func() {
				rps, cpu := oursOnce(b, addr, conns, secs)
				ourRPS, ourCPU = append(ourRPS, rps), append(ourCPU, cpu)
			}
			if round%2 == 0 {
				runWrk()
				runOurs()
			} else {
				runOurs()
				runWrk()
			}
			b.Logf("round %d: wrk %.0f req/s %.1f µs CPU/req; jiege %.0f req/s %.1f µs CPU/req",
				round+1, wrkRPS[round], wrkCPU[round], ourRPS[round], ourCPU[round])
		}
		w, o := median(wrkRPS), median(ourRPS)
		b.Logf("%d connections, %d x %ds, medians: wrk %.0f req/s, %.1f µs CPU/req; jiege %.0f req/s, %.1f µs CPU/req; req/s ratio %.2f",
			conns, rounds, secs, w, median(wrkCPU), o, median(ourCPU), o/w)
		b.ReportMetric(w, "wrk-req/s")
		b.ReportMetric(o, "jiege-req/s")
		b.ReportMetric(o/w, "ratio")
		b.ReportMetric(median(wrkCPU), "wrk-cpu-µs/req")
		b.ReportMetric(median(ourCPU), "jiege-cpu-µs/req")
	}
}

// wrkOnce runs wrk and returns its req/s and its CPU time per request in
// µs. CPU per request decides whether a client starves the server of the
// cores they share, and is less noisy than req/s on a busy machine.
func wrkOnce(b *testing.B, wrk, addr string, conns, secs int) (float64, float64) {
	// wrk needs at least one connection per thread.
	threads := fmt.Sprintf("-t%d", min(2, conns))
	cmd := exec.Command(wrk, threads, fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", secs), "http://"+addr+"/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		b.Fatalf("no Requests/sec in wrk's output:\n%s", out)
	}
	if regexp.MustCompile(`Socket errors|Non-2xx`).Match(out) {
		b.Fatalf("wrk saw errors:\n%s", out)
	}
	rps, _ := strconv.ParseFloat(string(m[1]), 64)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return rps, float64(cpu.Microseconds()) / (rps * float64(secs))
}

func oursOnce(b *testing.B, addr string, conns, secs int) (float64, float64) {
	before := cpuTime(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs+30)*time.Second)
	defer cancel()
	r, err := Run(ctx, Config{Addr: addr, Conns: conns, KeepAlive: true, Duration: time.Duration(secs) * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Err(); err != nil {
		b.Fatalf("generator errors: %v", err)
	}
	cpu := cpuTime(b) - before
	return r.ReqPerSec, float64(cpu.Microseconds()) / float64(r.Requests)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// cpuTime returns the user and system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
