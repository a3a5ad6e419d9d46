package load

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
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
// JIEGE_LOADGEN_CONNS (default 50) and JIEGE_LOADGEN_SECONDS (default 10)
// set the connections and duration, identical for both tools.
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
	for i := 0; i < b.N; i++ {
		out, err := exec.Command(wrk, "-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", secs), "http://"+addr+"/").CombinedOutput()
		if err != nil {
			b.Fatalf("wrk: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindSubmatch(out)
		if m == nil {
			b.Fatalf("no Requests/sec in wrk's output:\n%s", out)
		}
		wrkRPS, _ := strconv.ParseFloat(string(m[1]), 64)
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs+30)*time.Second)
		r, err := Run(ctx, Config{Addr: addr, Conns: conns, KeepAlive: true, Duration: time.Duration(secs) * time.Second})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		if r.Errors.Total() > 0 {
			b.Fatalf("generator errors: %v", r.Err())
		}
		b.Logf("%d connections, %ds: wrk %.0f req/s; jiege load %.0f req/s (p50 %v, p99 %v); ratio %.2f",
			conns, secs, wrkRPS, r.ReqPerSec, r.P50, r.P99, r.ReqPerSec/wrkRPS)
		b.ReportMetric(wrkRPS, "wrk-req/s")
		b.ReportMetric(r.ReqPerSec, "jiege-req/s")
		b.ReportMetric(r.ReqPerSec/wrkRPS, "ratio")
	}
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
