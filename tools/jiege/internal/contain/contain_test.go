package contain

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pidIn waits for a process to write its pid to path.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// A zombie has ended; its parent has not reaped it yet.
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// A process that clears its environment and leaves its parent's session
// and tree is still in the group, and Kill ends it.
func TestGroupHoldsDetached(t *testing.T) {
	g := New()
	if !g.Contained() {
		t.Skip(g.Why())
	}
	defer g.Kill()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("sh", "-c", `env -i setsid -f sh -c 'echo $$ >"$0"; exec sleep 300' "$1"`, "sh", pidFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := g.Prepare(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Run()
	g.Started()
	if err != nil {
		t.Fatal(err)
	}
	pid := pidIn(t, pidFile)
	if !alive(pid) || !slices.Contains(g.PIDs(), pid) {
		t.Fatalf("the detached sleep %d: alive %v, group %v", pid, alive(pid), g.PIDs())
	}
	dir := g.dir
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Error("the detached sleep outlived Kill")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cgroup %s not removed: %v", dir, err)
	}
	if err := g.Kill(); err != nil || g.PIDs() != nil {
		t.Errorf("a second Kill: %v, pids %v", err, g.PIDs())
	}
}
