package probe

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/rootfs"
)

// startOracles builds the root filesystem (cached) and runs n nginx
// oracles from it under qemu-riscv64.
func startOracles(t *testing.T, ctx context.Context, n int) (*rootfs.Image, []string) {
	t.Helper()
	img, err := rootfs.Build(ctx, rootfs.Options{Flavor: rootfs.Ours, Nonce: true})
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for range n {
		port, err := strconv.Atoi(freePort(t)[len("127.0.0.1:"):])
		if err != nil {
			t.Fatal(err)
		}
		stop, err := rootfs.StartOracle(ctx, img, port)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stop() })
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(port))
	}
	return img, addrs
}

// TestRandomProbeTwoOracles runs the random requests of 20 seeds against
// two real nginx instances from the same root filesystem: they must never
// disagree, or the probe would fail honest kernels.
func TestRandomProbeTwoOracles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the root filesystem (cached) and runs nginx under qemu-riscv64")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	img, addrs := startOracles(t, ctx, 2)
	tg := Target{Addr: addrs[0], Oracle: addrs[1], NginxVersion: img.NginxVersion}
	for _, f := range img.Files {
		tg.Files = append(tg.Files, File(f))
	}
	statuses := map[int]int{}
	for seed := uint64(1); seed <= 20; seed++ {
		rr, err := RandomProbe(ctx, tg, seed, RandomRequests)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if rr.Sent != RandomRequests {
			t.Errorf("seed %d: %d requests sent, want %d", seed, rr.Sent, RandomRequests)
		}
		for _, d := range rr.Differences {
			t.Errorf("seed %d: %s", seed, d)
		}
		for st, n := range rr.OracleStatuses {
			statuses[st] += n
		}
	}
	t.Logf("statuses over 20 seeds: %v", statuses)
}
