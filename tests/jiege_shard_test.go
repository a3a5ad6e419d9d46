package tests

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// compareDoc is the part of a leaderboard JSON the tests read.
type compareDoc struct {
	Kind  string `json:"kind"`
	Shard *struct {
		Index, Count int
		Attempts     []string
	} `json:"shard"`
	Merged []string `json:"merged"`
	Rows   []struct {
		Name         string `json:"name"`
		Rank         int    `json:"rank"`
		Pass         bool   `json:"pass"`
		FailedStage  string `json:"failed_stage"`
		FailClass    string `json:"fail_class"`
		StagesPassed int    `json:"stages_passed"`
		ConsoleTail  string `json:"console_tail"`
		Verify       struct {
			QEMUCommand []string `json:"qemu_command"`
		} `json:"verify"`
	} `json:"rows"`
}

// verdicts is a leaderboard's rows as "rank name pass stage class stages".
func (c compareDoc) verdicts() []string {
	var v []string
	for _, r := range c.Rows {
		v = append(v, fmt.Sprintf("%d %s %v %s %s %d", r.Rank, r.Name, r.Pass, r.FailedStage, r.FailClass, r.StagesPassed))
	}
	return v
}

// compare --shard K/3 run as three processes at once, then merge: the
// merged leaderboard has the single-process run's verdicts. The attempts
// are cheap: builds that fail, a run command that exits, a kernel that
// prints garbage and never serves.
func TestJiegeShardsAndMerge(t *testing.T) {
	dir := t.TempDir()
	garbage := garbageELF(t)
	manifest := filepath.Join(dir, "m.json")
	os.WriteFile(manifest, []byte(fmt.Sprintf(`{"schema": 1, "attempts": [
		{"name": "a-no-compiler", "dir": ".", "build": "echo no compiler; exit 4", "run": "exit 1"},
		{"name": "b-no-make", "dir": ".", "build": "exit 2", "run": "exit 1"},
		{"name": "c-run-exits", "dir": ".", "build": "true", "run": "echo nothing to run; exit 1"},
		{"name": "d-garbage", "kernel": %q},
		{"name": "e-no-linker", "dir": ".", "build": "echo ld missing >&2; exit 1", "run": "exit 1"}]}`, garbage)), 0o644)
	flags := []string{"--no-bench", "--boot-timeout", "15s", "--port-timeout", "8s"}

	single := filepath.Join(dir, "single")
	r := jiege(t, 5*time.Minute, nil, append([]string{"compare", manifest, "--out", single}, flags...)...)
	if r.code != 1 {
		t.Fatalf("single compare: exit %d\n%s", r.code, r.stderr)
	}
	var whole compareDoc
	readJSON(t, filepath.Join(single, "leaderboard.json"), &whole)
	if len(whole.Rows) != 5 || whole.Shard != nil {
		t.Fatalf("single run: %+v", whole)
	}

	shards := filepath.Join(dir, "shards")
	bin, err := jiegeBin()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	var stderrs []*bytes.Buffer
	for k := range 3 {
		args := append([]string{"compare", manifest, "--out", shards, "--shard", fmt.Sprintf("%d/3", k)}, flags...)
		cmd := exec.Command(bin, args...)
		stderrs = append(stderrs, &bytes.Buffer{})
		cmd.Stderr = stderrs[k]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	// Each shard is a process of its own, all at once; interrupted (so
	// that it stops its QEMU) if it overruns.
	timer := time.AfterFunc(5*time.Minute, func() {
		for _, c := range cmds {
			c.Process.Signal(syscall.SIGINT)
		}
	})
	codes := make([]int, 3)
	for k, c := range cmds {
		c.Wait()
		codes[k] = c.ProcessState.ExitCode()
	}
	if !timer.Stop() {
		t.Fatal("the shards did not finish within 5 minutes")
	}
	var parts []string
	for k, code := range codes {
		if code != 1 {
			t.Fatalf("shard %d/3: exit %d\n%s", k, code, stderrs[k])
		}
		p := filepath.Join(shards, fmt.Sprintf("leaderboard-shard-%d-of-3.json", k))
		var d compareDoc
		readJSON(t, p, &d)
		// Shard k holds attempts k and k+3 of the manifest.
		want := []string{"a-no-compiler", "b-no-make", "c-run-exits", "d-garbage", "e-no-linker"}
		var got []string
		for _, row := range d.Rows {
			got = append(got, row.Name)
		}
		if d.Shard == nil || d.Shard.Index != k || d.Shard.Count != 3 || len(d.Shard.Attempts) != 5 ||
			!sameSet(got, want[k:k+1], want[min(k+3, 5):min(k+4, 5)]) {
			t.Errorf("shard %d: %+v holds %v", k, d.Shard, got)
		}
		parts = append(parts, p)
	}

	merged := filepath.Join(dir, "merged")
	args := append([]string{"merge", "--out", merged}, parts...)
	_, haveBrowser := findBrowser()
	if haveBrowser {
		args = append(args, "--screenshot")
	}
	r = jiege(t, 2*time.Minute, nil, args...)
	if r.code != 1 {
		t.Fatalf("merge: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var m compareDoc
	readJSON(t, filepath.Join(merged, "leaderboard.json"), &m)
	if got, want := strings.Join(m.verdicts(), "\n"), strings.Join(whole.verdicts(), "\n"); got != want {
		t.Errorf("merged verdicts:\n%s\nsingle-process verdicts:\n%s", got, want)
	}
	t.Logf("verdicts:\n%s", strings.Join(m.verdicts(), "\n"))
	if len(m.Merged) != 3 || m.Shard != nil {
		t.Errorf("merged from %v, shard %+v", m.Merged, m.Shard)
	}
	for _, f := range []string{"leaderboard.md", "leaderboard.html"} {
		if b, err := os.ReadFile(filepath.Join(merged, f)); err != nil || !strings.Contains(string(b), "d-garbage") {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The garbage kernel's evidence: its console tail and QEMU command.
	for _, row := range m.Rows {
		if row.Name == "d-garbage" {
			if !strings.Contains(row.ConsoleTail, "####") || len(row.Verify.QEMUCommand) == 0 {
				t.Errorf("d-garbage evidence: tail %q, qemu %q", row.ConsoleTail, row.Verify.QEMUCommand)
			}
			noQEMUFor(t, row.Verify.QEMUCommand)
		}
	}
	if haveBrowser {
		f, err := os.Open(filepath.Join(merged, "leaderboard.png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() < 1280 {
			t.Errorf("screenshot: %v, %v (the whole page, at least 1280 px wide)", err, img.Bounds())
		}
	} else {
		t.Log("no headless Chromium: the merged page's screenshot was not taken")
	}

	// A shard missing is an error that names it.
	r = jiege(t, time.Minute, nil, "merge", "--out", merged, parts[0], parts[2])
	if r.code != 2 || !strings.Contains(r.stderr, "shards missing: 1/3") {
		t.Errorf("merge without shard 1: exit %d %s", r.code, r.stderr)
	}
}

func sameSet(got []string, wants ...[]string) bool {
	var want []string
	for _, w := range wants {
		want = append(want, w...)
	}
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			return false
		}
	}
	return true
}

// findBrowser finds a headless Chromium as jiege does.
func findBrowser() (string, bool) {
	for _, b := range []string{"chromium-headless-shell", "chromium", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			return p, true
		}
	}
	return "", false
}
