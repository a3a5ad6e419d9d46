package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// figureRuns is one bench figure as the JSON documents give it.
type figureRuns struct {
	Runs   []float64 `json:"runs"`
	Min    float64   `json:"min"`
	Median float64   `json:"median"`
	Max    float64   `json:"max"`
}

// loadedFigures is the part of a bench target's figures the test reads.
type loadedFigures struct {
	Target    string     `json:"target"`
	KeepAlive figureRuns `json:"keepalive_rps"`
	Fresh     figureRuns `json:"fresh_rps"`
	Transfer  figureRuns `json:"transfer_mb_per_s"`
	Error     string     `json:"error"`
}

func (b loadedFigures) figures() map[string]figureRuns {
	return map[string]figureRuns{"keep-alive req/s": b.KeepAlive, "fresh req/s": b.Fresh, "transfer MB/s": b.Transfer}
}

// TestJiegeCompareOnLoadedHost runs `jiege compare` of Debian's Linux,
// ours and an attempt (our kernel as a kernel file) on a host that a
// busy loop keeps loaded, then `jiege bench` of the same three beside it
// under the same load. Every ratio to Linux on the leaderboard must lie
// within the spread of the bench's (its slowest run over the peer's
// fastest, up to its fastest over the peer's slowest): a leaderboard that
// benched one entry minutes after the other, as compare once did, put
// ours at x17.5 where the bench said x1.94 (issue 35). A long test: `make
// compare-loaded` (JIEGE_LOADED=1) runs it, not make test.
func TestJiegeCompareOnLoadedHost(t *testing.T) {
	if os.Getenv("JIEGE_LOADED") == "" {
		t.Skip("a long test: make compare-loaded runs it")
	}
	// One busy loop: half of the shared 2-core machine, all of the
	// test's life, ended by its PID.
	busy := exec.Command("sh", "-c", "while :; do :; done")
	busy.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Process.Kill(); busy.Wait() })
	t.Logf("host: %d CPUs, busy loop pid %d", runtime.NumCPU(), busy.Process.Pid)

	dir := t.TempDir()
	attempt := filepath.Join(repoRoot, "build", "kernel.elf")
	manifest := filepath.Join(dir, "m.json")
	os.WriteFile(manifest, []byte(fmt.Sprintf(`{"schema": 1, "attempts": [
		{"name": "linux", "kernel": "linux"},
		{"name": "ours", "kernel": "ours"},
		{"name": "attempt", "kernel": %q}]}`, attempt)), 0o644)
	flags := []string{"--runs", "3", "--duration", "5s", "--smp", "2", "--no-wrk"}

	start := time.Now()
	r := jiege(t, 60*time.Minute, nil, append([]string{"compare", manifest, "--out", filepath.Join(dir, "cmp")}, flags...)...)
	if r.code != 0 {
		t.Fatalf("compare: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("compare took %v", time.Since(start).Round(time.Second))
	var board struct {
		Peer string `json:"peer"`
		Rows []struct {
			Name  string         `json:"name"`
			Pass  bool           `json:"pass"`
			Bench *loadedFigures `json:"bench"`
		} `json:"rows"`
	}
	readJSON(t, filepath.Join(dir, "cmp", "leaderboard.json"), &board)
	compared := map[string]loadedFigures{}
	for _, row := range board.Rows {
		if !row.Pass || row.Bench == nil || row.Bench.Error != "" {
			t.Fatalf("compare row %s: pass %v, bench %+v", row.Name, row.Pass, row.Bench)
		}
		compared[row.Name] = *row.Bench
	}
	if board.Peer != "linux" || len(compared) != 3 {
		t.Fatalf("leaderboard peer %q, rows %v", board.Peer, compared)
	}

	start = time.Now()
	out := filepath.Join(dir, "bench.json")
	r = jiege(t, 60*time.Minute, nil, append([]string{"bench", "linux", "ours", attempt, "--json", out}, flags...)...)
	if r.code != 0 {
		t.Fatalf("bench: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("bench took %v", time.Since(start).Round(time.Second))
	var bench struct {
		Targets []loadedFigures `json:"targets"`
	}
	readJSON(t, out, &bench)
	if len(bench.Targets) != 3 {
		t.Fatalf("bench targets: %+v", bench.Targets)
	}
	benched := map[string]loadedFigures{"linux": bench.Targets[0], "ours": bench.Targets[1], "attempt": bench.Targets[2]}

	peerCompared, peerBenched := compared["linux"].figures(), benched["linux"].figures()
	for _, name := range []string{"ours", "attempt"} {
		c, b := compared[name].figures(), benched[name].figures()
		for fig, cs := range c {
			bs, cp, bp := b[fig], peerCompared[fig], peerBenched[fig]
			if cp.Median == 0 || bp.Min == 0 || bp.Max == 0 {
				t.Errorf("%s: no %s for the peer (compare %+v, bench %+v)", name, fig, cp, bp)
				continue
			}
			ratio := cs.Median / cp.Median
			low, high := bs.Min/bp.Max, bs.Max/bp.Min
			t.Logf("%-8s %-17s compare x%.2f, bench x%.2f (spread x%.2f-x%.2f); compare runs %v over %v, bench runs %v over %v",
				name, fig, ratio, bs.Median/bp.Median, low, high, cs.Runs, cp.Runs, bs.Runs, bp.Runs)
			if ratio < low || ratio > high {
				t.Errorf("%s %s: the leaderboard's x%.2f lies outside the bench's spread x%.2f-x%.2f", name, fig, ratio, low, high)
			}
		}
	}
}
