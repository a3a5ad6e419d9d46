package probe

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/probe/fakehttp"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
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

// TestRandomProbeAttemptOracle runs the fingerprint as for an attempt:
// the target (a real nginx serving the whole tree) has a root filesystem
// the oracle does not know, so the oracle serves only the target's "/",
// learned from it, with the same bytes and mtime.
func TestRandomProbeAttemptOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the root filesystem (cached) and runs nginx under qemu-riscv64")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, addrs := startOracles(t, ctx, 1)
	body, mtime, err := Index(ctx, addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(freePort(t)[len("127.0.0.1:"):])
	if err != nil {
		t.Fatal(err)
	}
	stop, err := rootfs.StartOracleWith(ctx, img, port, rootfs.OracleOptions{Index: body, IndexModTime: mtime})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	tg := Target{Addr: addrs[0], Oracle: "127.0.0.1:" + strconv.Itoa(port), OwnRoot: true}
	for seed := uint64(1); seed <= 3; seed++ {
		tg.Seed = seed
		s := Fingerprint(ctx, tg)
		wantStage(t, s, report.Pass, "")
		t.Logf("seed %d: %s", seed, s.Detail)
	}
}

// TestRandomProbeCatchesImitation: an imitation of nginx that answers the
// fixed fingerprint sequence as nginx does (fakehttp's, serving the same
// files with the same mtime) passes that sequence against the real oracle
// and fails on the random requests.
func TestRandomProbeCatchesImitation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the root filesystem (cached) and runs nginx under qemu-riscv64")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, addrs := startOracles(t, ctx, 1)
	files := map[string][]byte{}
	tg := Target{Oracle: addrs[0], NginxVersion: img.NginxVersion, Seed: 1}
	for _, f := range img.Files {
		if f.Content != nil {
			files[f.URLPath] = f.Content
			tg.Files = append(tg.Files, File(f))
		}
	}
	_, mtime, err := Index(ctx, addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	fake := start(t, fakehttp.Options{Files: files, Version: img.NginxVersion, ModTime: mtime})
	tg.Addr = fake.Addr
	s := Fingerprint(ctx, tg)
	// It gets malformed requests wrong, which any nginx answers alike.
	wantStage(t, s, report.Fail, report.ClassNotNginx)
	if !strings.Contains(s.Detail, "random requests differ") || !strings.HasPrefix(s.Detail, "not nginx") {
		t.Errorf("the imitation did not pass the fixed sequence to fail on the random requests: %s", s.Detail)
	}
	t.Logf("imitation: %s", s.Detail)
}

// TestRandomProbeOtherConfiguration: a real nginx configured otherwise than
// the oracle is told apart from a server that is not nginx, and the detail
// names the configuration.
func TestRandomProbeOtherConfiguration(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the root filesystem (cached) and runs nginx under qemu-riscv64")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, addrs := startOracles(t, ctx, 1)
	for _, c := range []struct{ directives, says string }{
		{"keepalive_timeout 0;", "nginx with another configuration: " + cfgKeepAliveOff},
		{"gzip on;", "nginx with another configuration: " + cfgGzip},
	} {
		port, err := strconv.Atoi(freePort(t)[len("127.0.0.1:"):])
		if err != nil {
			t.Fatal(err)
		}
		stop, err := rootfs.StartOracleWith(ctx, img, port, rootfs.OracleOptions{Server: c.directives})
		if err != nil {
			t.Fatal(err)
		}
		tg := Target{Addr: "127.0.0.1:" + strconv.Itoa(port), Oracle: addrs[0], NginxVersion: img.NginxVersion}
		for _, f := range img.Files {
			tg.Files = append(tg.Files, File(f))
		}
		for seed := uint64(1); seed <= 3; seed++ {
			rr, err := RandomProbe(ctx, tg, seed, RandomRequests)
			if err != nil {
				t.Fatal(err)
			}
			s := randomFailure(rr, 0)
			if len(rr.Differences) == 0 || s.Class != report.ClassFingerprint || !strings.HasPrefix(s.Detail, c.says) {
				t.Errorf("%s seed %d: %d differences: %s", c.directives, seed, len(rr.Differences), s.Detail)
			}
		}
		tg.Seed = 1
		s := Fingerprint(ctx, tg)
		wantStage(t, s, report.Fail, report.ClassFingerprint)
		// The fixed probes already see a closed connection.
		if says, _, _ := strings.Cut(c.says, " ("); !strings.HasPrefix(s.Detail, says) {
			t.Errorf("%s: fingerprint says %s", c.directives, s.Detail)
		}
		stop()
	}
}
