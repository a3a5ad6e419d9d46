package tests

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gitIn runs git in dir with a fixed identity and the commit time given.
func gitIn(t *testing.T, dir string, when time.Time, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	date := when.UTC().Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, b)
	}
	return strings.TrimSpace(string(b))
}

// treeState is every file of a directory with its size, mode and mtime.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st[p] = fmt.Sprintf("%v %d %v", info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// replayDoc is the part of the replay JSON the test reads.
type replayDoc struct {
	Kind    string `json:"kind"`
	Commits []struct {
		Hash    string     `json:"hash"`
		Sampled bool       `json:"sampled"`
		Verify  *verifyDoc `json:"verify"`
	} `json:"commits"`
	Timeline []struct {
		Milestone string    `json:"milestone"`
		Reached   bool      `json:"reached"`
		Index     int       `json:"index"`
		Hash      string    `json:"hash"`
		Time      time.Time `json:"time"`
		After     float64   `json:"after_first_commit_s"`
		Exact     bool      `json:"exact"`
	} `json:"timeline"`
}

// jiege replay on a synthetic attempt history: a build that fails, a run
// target without a kernel, our kernel with no init (it boots, nothing
// listens), a commit that changes nothing, then our kernel with nginx.
// Every second commit is sampled and the rest bisected; the timeline names
// the first commit of each milestone, and the attempt's repository is left
// as it was.
func TestJiegeReplay(t *testing.T) {
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	r := jiege(t, 10*time.Minute, nil, "rootfs", "--flavor", "ours", "--quiet")
	var initrd string
	for _, l := range strings.Split(r.stdout, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.HasPrefix(k, "rootfs") {
			initrd = strings.TrimSpace(v)
		}
	}
	if r.code != 0 || initrd == "" {
		t.Fatalf("rootfs: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	marker := "jiege-e2e-replay-" + strconv.Itoa(os.Getpid())
	qemuRun := func(initrdArg string) string {
		return fmt.Sprintf("run:\n\tqemu-system-riscv64 -machine virt -nographic -m 512M -bios %s -kernel %s %s -append %s "+
			"-global virtio-mmio.force-legacy=false -netdev user,id=net0,hostfwd=tcp::8080-:80 -device virtio-net-device,netdev=net0\n",
			filepath.Join(repoRoot, "build/tramp.bin"), filepath.Join(repoRoot, "build/kernel.elf"), initrdArg, marker)
	}
	steps := []struct{ subject, makefile, readme string }{
		{"a Makefile whose build fails", "build:\n\t@echo no compiler yet; exit 1\nrun:\n\t@exit 1\n", "plan\n"},
		{"build passes, no kernel to run", "build:\n\t@true\nrun:\n\t@echo no kernel yet; exit 1\n", "plan\n"},
		{"the kernel boots without an init", "build:\n\t@true\n" + qemuRun(""), "plan\n"},
		{"notes", "build:\n\t@true\n" + qemuRun(""), "plan: nginx next\n"},
		{"nginx as init", "build:\n\t@true\n" + qemuRun("-initrd "+initrd), "plan: nginx next\n"},
	}
	dir := t.TempDir()
	gitIn(t, dir, time.Now(), "init", "-q")
	start := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	var hashes []string
	for i, s := range steps {
		os.WriteFile(filepath.Join(dir, "Makefile"), []byte(s.makefile), 0o644)
		os.WriteFile(filepath.Join(dir, "README"), []byte(s.readme), 0o644)
		when := start.Add(time.Duration(i) * time.Hour)
		gitIn(t, dir, when, "add", "Makefile", "README")
		gitIn(t, dir, when, "commit", "-q", "-m", s.subject)
		hashes = append(hashes, gitIn(t, dir, when, "rev-parse", "HEAD"))
	}
	before := treeState(t, dir)

	out := filepath.Join(t.TempDir(), "replay.json")
	r = jiege(t, 20*time.Minute, nil, "replay", dir, "--every", "2", "--boot-timeout", "15s", "--port-timeout", "30s", "--json", out)
	t.Logf("jiege replay:\n%s", r.stdout)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var d replayDoc
	readJSON(t, out, &d)
	if d.Kind != "replay" || len(d.Commits) != len(steps) {
		t.Fatalf("kind %q, %d commits", d.Kind, len(d.Commits))
	}
	// Every commit was needed: 0, 2 and 4 sampled, 1 and 3 bisected.
	for i, c := range d.Commits {
		if c.Hash != hashes[i] || c.Sampled != (i%2 == 0) || c.Verify == nil {
			t.Errorf("commit %d: %s sampled %v verified %v", i, c.Hash, c.Sampled, c.Verify != nil)
		}
	}
	failedAt := []string{"build", "boot", "port-open", "port-open", ""}
	for i, c := range d.Commits {
		if c.Verify != nil && c.Verify.FailedStage != failedAt[i] {
			t.Errorf("commit %d (%s): failed at %q, want %q", i, steps[i].subject, c.Verify.FailedStage, failedAt[i])
		}
	}
	want := map[string]int{"boots": 2, "opens the port": 4, "serves 200": 4, "passes the fingerprint": 4, "passes stability": 4}
	if len(d.Timeline) != len(want) {
		t.Fatalf("timeline %+v", d.Timeline)
	}
	for _, e := range d.Timeline {
		i := want[e.Milestone]
		if !e.Reached || e.Index != i || e.Hash != hashes[i] || !e.Exact || !e.Time.Equal(start.Add(time.Duration(i)*time.Hour)) ||
			e.After != float64(i*3600) {
			t.Errorf("%s: %+v, want commit %d %s at %v", e.Milestone, e, i, hashes[i], start.Add(time.Duration(i)*time.Hour))
		}
	}
	if !strings.Contains(r.stdout, "boots") || !strings.Contains(r.stdout, hashes[2][:12]) || !strings.Contains(r.stdout, "2026-01-02 12:00:00 UTC") {
		t.Errorf("the printed timeline lacks the first booting commit:\n%s", r.stdout)
	}
	after := treeState(t, dir)
	for p, s := range before {
		if after[p] != s {
			t.Errorf("replay changed %s: %q -> %q", p, s, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("replay added %s to the attempt", p)
		}
	}
	noQEMUWith(t, marker)
}

// An attempt in a directory of a larger repository is built in that
// directory of each commit; a directory without history is a usage error.
func TestJiegeReplaySubdirectory(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "attempts", "a")
	os.MkdirAll(sub, 0o755)
	start := time.Date(2026, 3, 4, 8, 0, 0, 0, time.UTC)
	gitIn(t, dir, start, "init", "-q")
	// The build looks for here.txt in its own directory: the top's does
	// not count.
	os.WriteFile(filepath.Join(dir, "here.txt"), []byte("top\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "README"), []byte("a\n"), 0o644)
	gitIn(t, dir, start, "add", ".")
	gitIn(t, dir, start, "commit", "-q", "-m", "start")
	os.WriteFile(filepath.Join(sub, "here.txt"), []byte("a\n"), 0o644)
	gitIn(t, dir, start.Add(time.Hour), "add", ".")
	gitIn(t, dir, start.Add(time.Hour), "commit", "-q", "-m", "builds")

	out := filepath.Join(t.TempDir(), "replay.json")
	r := jiege(t, 5*time.Minute, nil, "replay", sub, "--every", "1", "--build", "test -f here.txt", "--run", "echo no kernel; exit 1",
		"--boot-timeout", "10s", "--json", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var d replayDoc
	readJSON(t, out, &d)
	if len(d.Commits) != 2 || d.Commits[0].Verify == nil || d.Commits[1].Verify == nil ||
		d.Commits[0].Verify.FailedStage != "build" || d.Commits[1].Verify.FailedStage != "boot" {
		t.Fatalf("commits %+v", d.Commits)
	}
	for _, e := range d.Timeline {
		if e.Reached || e.Index != -1 {
			t.Errorf("%s: %+v, want never", e.Milestone, e)
		}
	}
	if !strings.Contains(r.stdout, "boots                   never") {
		t.Errorf("timeline:\n%s", r.stdout)
	}

	r = jiege(t, time.Minute, nil, "replay", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "no git history") {
		t.Errorf("a directory without history: exit %d %s", r.code, r.stderr)
	}
}
