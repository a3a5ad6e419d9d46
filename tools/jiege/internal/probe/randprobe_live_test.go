package probe

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestRandomProbeLive runs the random requests of many seeds against a
// guest that is already serving, e.g. one started with
// `jiege run --kernel linux --port 18081`:
//
//	JIEGE_PROBE_ADDR=127.0.0.1:18081 JIEGE_PROBE_SEEDS=20 go test ./tools/jiege/internal/probe -run TestRandomProbeLive -v
//
// It shows that the probe never tells an honest kernel from the oracle.
// Without JIEGE_PROBE_ADDR it is skipped: it needs a running guest.
func TestRandomProbeLive(t *testing.T) {
	addr := os.Getenv("JIEGE_PROBE_ADDR")
	if addr == "" {
		t.Skip("set JIEGE_PROBE_ADDR to a serving guest's address")
	}
	seeds, err := strconv.Atoi(os.Getenv("JIEGE_PROBE_SEEDS"))
	if err != nil || seeds < 1 {
		seeds = 20
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	img, addrs := startOracles(t, ctx, 1)
	tg := Target{Addr: addr, Oracle: addrs[0], NginxVersion: img.NginxVersion}
	for _, f := range img.Files {
		tg.Files = append(tg.Files, File(f))
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		t0 := time.Now()
		rr, err := RandomProbe(ctx, tg, seed, RandomRequests)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Logf("seed %d: %d requests, %d differences, %.1fs", seed, rr.Sent, len(rr.Differences), time.Since(t0).Seconds())
		for _, d := range rr.Differences {
			t.Errorf("seed %d: %s", seed, d)
		}
	}
}
