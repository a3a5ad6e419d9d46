package browser

import (
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

func browserOrSkip(t *testing.T) string {
	t.Helper()
	bin, err := Find()
	if err != nil {
		t.Skipf("%v: the leaderboard is not checked in a browser", err)
	}
	return bin
}

// A page whose script fails is caught: the console check can fail.
func TestLoadReportsConsoleErrors(t *testing.T) {
	bin := browserOrSkip(t)
	p := filepath.Join(t.TempDir(), "bad.html")
	os.WriteFile(p, []byte(`<!DOCTYPE html><html><body><p id="x">before</p><script>
document.getElementById("x").textContent = "after";
console.error("something broke");
noSuchFunction();
</script></body></html>`), 0o644)
	page, err := Load(context.Background(), bin, "file://"+p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.DOM, `<p id="x">after</p>`) {
		t.Errorf("the script did not run:\n%s", page.DOM)
	}
	joined := strings.Join(page.Console, "\n")
	if len(page.Console) != 2 || !strings.Contains(joined, "something broke") || !strings.Contains(joined, "noSuchFunction is not defined") {
		t.Errorf("console %q", page.Console)
	}
}

// leaderboard is a leaderboard of four attempts, one of them Debian's
// Linux with bench figures, one failed.
func leaderboard() *report.Compare {
	c := report.NewCompare("attempts.json")
	stat := func(v ...float64) report.Stat { return report.NewStat(v) }
	passing := func(kind string, seed uint64) *report.Verify {
		v := report.NewVerify(kind, kind)
		for _, s := range report.StageOrder {
			v.Add(report.Passf(s, time.Second, "ok"))
		}
		v.FingerprintSeed = seed
		v.QEMUCommand = []string{"qemu-system-riscv64", "-machine", "virt", "-kernel", "k.elf"}
		return v
	}
	failing := report.NewVerify("broken", "attempt")
	failing.Add(report.Passf(report.StageBuild, time.Second, "make build"))
	failing.Add(report.Passf(report.StageBoot, time.Second, "console: hello"))
	failing.Add(report.Failf(report.StageProvenance, report.ClassNotFromScratch, time.Second, "the booted kernel is Linux"))
	bench := func(ka float64) *report.BenchTarget {
		return &report.BenchTarget{KeepAliveRPS: stat(ka, ka*1.1, ka*0.9), FreshRPS: stat(ka / 10), P99MS: stat(8),
			TransferMBps: stat(40), BootToFirst200: stat(3)}
	}
	c.Rows = []report.Row{
		report.RowFrom("linux", report.Meta{}, passing("linux", 11), bench(1000)),
		report.RowFrom("agent-a", report.Meta{Model: "m1", Cost: "12 USD"}, passing("attempt", 22), bench(500)),
		report.RowFrom("agent-b", report.Meta{Model: "m2"}, passing("attempt", 33), bench(250)),
		report.RowFrom("agent-c", report.Meta{Model: "m3"}, failing, nil),
	}
	c.Rows[3].ConsoleTail = "OpenSBI v1.1\nLinux version 6.12"
	c.Rank()
	c.ComputePeerRatios()
	return c
}

// The leaderboard page in a real browser: the table, a chart per figure
// and the evidence render with no console message; following an
// attempt's link opens its evidence; the screenshot is a real image.
func TestLeaderboardInChromium(t *testing.T) {
	bin := browserOrSkip(t)
	dir := t.TempDir()
	html := filepath.Join(dir, "leaderboard.html")
	if err := os.WriteFile(html, []byte(report.CompareHTML(leaderboard())), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	page, err := Load(ctx, bin, "file://"+html+"#evidence-agent-c")
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Console) > 0 {
		t.Errorf("console messages: %q", page.Console)
	}
	dom := page.DOM
	rows := regexp.MustCompile(`<tr data-attempt="([^"]+)">`).FindAllStringSubmatch(dom, -1)
	var names []string
	for _, r := range rows {
		names = append(names, r[1])
	}
	if strings.Join(names, ",") != "linux,agent-a,agent-b,agent-c" {
		t.Errorf("table rows %v", names)
	}
	if n := strings.Count(dom, "<svg"); n != 6 {
		t.Errorf("%d charts, want 6 (stages passed and five figures)", n)
	}
	if n := strings.Count(dom, "<rect"); n != 6*4 {
		t.Errorf("%d bars, want 24", n)
	}
	for _, want := range []string{"500 (450-550) x0.50", "250 (225-275) x0.25", "ratio to linux",
		"jiege verify --fingerprint-seed 22", "Linux version 6.12", "the booted kernel is Linux"} {
		if !strings.Contains(dom, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	open := regexp.MustCompile(`<details id="([^"]+)" class="evidence" open="">`).FindAllStringSubmatch(dom, -1)
	if len(open) != 1 || open[0][1] != "evidence-agent-c" {
		t.Errorf("open evidence %v, want agent-c's alone", open)
	}

	shot := filepath.Join(dir, "leaderboard.png")
	console, err := Screenshot(ctx, bin, "file://"+html, shot, 1280, 1600)
	if err != nil || len(console) > 0 {
		t.Fatalf("screenshot: %v, console %q", err, console)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() != 1280 || b.Dy() != 1600 {
		t.Errorf("screenshot %v", b)
	}
	// The blue bars are drawn: some pixel has their colour (#4a7ebb).
	blue := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 == 0x4a && g>>8 == 0x7e && bl>>8 == 0xbb {
				blue++
			}
		}
	}
	if blue < 100 {
		t.Errorf("only %d bar-coloured pixels in the screenshot", blue)
	}
}

// The leaderboard's screenshot shows the whole page: a table wider than
// the default window (long names, long causes) widens the shot, and the
// shot is as tall as the page; the last column and the last chart's
// bars are in it, and the failed attempts' causes are in their rows.
func TestLeaderboardScreenshotWhole(t *testing.T) {
	bin := browserOrSkip(t)
	c := leaderboard()
	for i := range c.Rows {
		c.Rows[i].Name += "-with-a-long-name-as-agents-choose-" + strings.Repeat("x", 40)
		c.Rows[i].Meta.Duration = "3 h 12 min of agent time"
	}
	for i := range 8 {
		more := leaderboard().Rows[3]
		more.Name = fmt.Sprintf("failed-attempt-%d", i)
		c.Rows = append(c.Rows, more)
	}
	c.Rank()
	dir := t.TempDir()
	html := filepath.Join(dir, "leaderboard.html")
	if err := os.WriteFile(html, []byte(report.CompareHTML(c)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	shot := filepath.Join(dir, "leaderboard.png")
	console, w, h, err := FullScreenshot(ctx, bin, "file://"+html, shot, 1280)
	if err != nil || len(console) > 0 {
		t.Fatalf("screenshot: %v, console %q", err, console)
	}
	if w <= 1280 {
		t.Errorf("a table wider than 1280 px shot %d px wide", w)
	}
	// The page at the shot's width: its size is the PNG's.
	pw, ph, err := size(ctx, bin, "file://"+html, w)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	t.Logf("page %dx%d at %d px, screenshot %v", pw, ph, w, b)
	if b.Dx() < pw || b.Dy() < ph || b.Dx() != w || b.Dy() != h {
		t.Errorf("screenshot %dx%d does not cover the page's %dx%d", b.Dx(), b.Dy(), pw, ph)
	}
	page, err := Load(ctx, bin, "file://"+html)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`<tr data-attempt="failed-attempt-7">.*<td class="cause">the booted kernel is Linux</td>`).MatchString(page.DOM) {
		t.Error("a failed attempt's row lacks its cause")
	}
}
