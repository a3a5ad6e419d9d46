package probe

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/report"
	"github.com/jiege-go/jiege/tools/jiege/internal/rootfs"
)

// TestRealNginx runs every HTTP stage against the real thing: Debian's
// riscv64 nginx from the project's root filesystem under qemu-riscv64
// (rootfs.StartOracle), checked against a second such nginx as the oracle.
// The recorded-response and imitation tests above cannot show that the
// fingerprint accepts the nginx version the guests run; this does.
func TestRealNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the root filesystem (cached) and runs nginx under qemu-riscv64")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, err := rootfs.Build(ctx, rootfs.Options{Flavor: rootfs.Ours, Nonce: true})
	if err != nil {
		t.Fatal(err)
	}
	addrs := make([]string, 2)
	for i := range addrs {
		port, err := strconv.Atoi(freePort(t)[len("127.0.0.1:"):])
		if err != nil {
			t.Fatal(err)
		}
		stop, err := rootfs.StartOracle(ctx, img, port)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		addrs[i] = "127.0.0.1:" + strconv.Itoa(port)
	}
	tg := Target{Addr: addrs[0], Oracle: addrs[1], NginxVersion: img.NginxVersion}
	for _, f := range img.Files {
		tg.Files = append(tg.Files, File(f))
	}
	if img.Nonce == nil {
		t.Fatal("no nonce in the image")
	}
	n := File(*img.Nonce)
	tg.Nonce = &n

	wantStage(t, PortOpen(ctx, tg.Addr), report.Pass, "")
	s, _ := First200(ctx, tg.Addr)
	wantStage(t, s, report.Pass, "")
	s = Fingerprint(ctx, tg)
	wantStage(t, s, report.Pass, "")
	t.Logf("fingerprint: %s", s.Detail)
	s = Content(ctx, tg)
	wantStage(t, s, report.Pass, "")
	t.Logf("content: %s", s.Detail)
	s = Stability(ctx, tg, DefaultBars)
	wantStage(t, s, report.Pass, "")
	t.Logf("stability: %s (%.1fs)", s.Detail, s.Duration.Seconds())
	wantStage(t, Survival(ctx, tg.Addr), report.Pass, "")

	// The same nginx claiming another version fails against the image's.
	tg.NginxVersion = "1.0.0"
	wantStage(t, Fingerprint(ctx, tg), report.Fail, report.ClassNotNginx)
}

// Debian's nginx configured with keep-alive off (keepalive_timeout 0) is
// measured with fresh connections and passes stability; the same server
// with keep-alive on is measured on kept connections.
func TestStabilityKeepAliveOff(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the root filesystem (cached) and runs nginx under qemu-riscv64")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, err := rootfs.Build(ctx, rootfs.Options{Flavor: rootfs.Ours})
	if err != nil {
		t.Fatal(err)
	}
	bars := Bars{KeepAlive: 40, Concurrent: 10, Fresh: 20, Checked: 5}
	for _, off := range []bool{true, false} {
		port, err := strconv.Atoi(freePort(t)[len("127.0.0.1:"):])
		if err != nil {
			t.Fatal(err)
		}
		o := rootfs.OracleOptions{}
		if off {
			o.Server = "keepalive_timeout 0;"
		}
		stop, err := rootfs.StartOracleWith(ctx, img, port, o)
		if err != nil {
			t.Fatal(err)
		}
		s := Stability(ctx, Target{Addr: "127.0.0.1:" + strconv.Itoa(port)}, bars)
		stop()
		t.Logf("keep-alive off %v: %s", off, s.Detail)
		wantStage(t, s, report.Pass, "")
		said := strings.Contains(s.Detail, "keep-alive off in the server's configuration (it answers `Connection: close`): measured with fresh connections") &&
			strings.Contains(s.Detail, "keepalive 20/20") && strings.Contains(s.Detail, "concurrent 10 connections x 1")
		if said != off {
			t.Errorf("keep-alive off %v, detail %q", off, s.Detail)
		}
	}
}
