package attempt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jiege-go/jiege/qemu"
)

// The test binary doubles as the jiege binary in shim mode.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ShimArg {
		fmt.Fprintln(os.Stderr, Shim(os.Args[2:]))
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// fakeQEMU installs a stand-in for the real emulator that prints its
// arguments and then stays up.
func fakeQEMU(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho \"real-qemu $*\"\nexec sleep 300\n"
	if err := os.WriteFile(filepath.Join(dir, qemu.DefaultBinary), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func self(t *testing.T) string {
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunThroughShim(t *testing.T) {
	fakeQEMU(t)
	dir := t.TempDir()
	mk := "run:\n\tqemu-system-riscv64 -machine virt -netdev user,id=n,hostfwd=tcp::8080-:80 -kernel k\n"
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)
	a := &Attempt{Dir: dir, Self: self(t)}
	log := filepath.Join(t.TempDir(), "console.log")
	r, err := a.Start(context.Background(), log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if r.Port() == 0 {
		t.Fatal("no port picked")
	}
	waitFor(t, "qemu launch", r.QEMUAlive)
	ls := r.Launches()
	if len(ls) != 1 {
		t.Fatalf("launches %v", ls)
	}
	want := fmt.Sprintf("-machine virt -netdev user,id=n,hostfwd=tcp:127.0.0.1:%d-:80 -kernel k", r.Port())
	if got := strings.Join(ls[0].Args, " "); got != want {
		t.Errorf("recorded args %s", got)
	}
	waitFor(t, "console", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "real-qemu "+want)
	})
	pid := ls[0].PID
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if r.QEMUAlive() || isLive(pid) {
		t.Error("qemu survived Stop")
	}
}

// A run command that detaches QEMU into its own session: Stop still finds
// and ends it through the shim's record.
func TestStopFindsEscapedQEMU(t *testing.T) {
	fakeQEMU(t)
	dir := t.TempDir()
	a := &Attempt{Dir: dir, Self: self(t), Run: "setsid qemu-system-riscv64 -kernel k >/dev/null 2>&1 & sleep 300"}
	r, err := a.Start(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	waitFor(t, "qemu launch", r.QEMUAlive)
	pid := r.Launches()[0].PID
	old := qemu.StopTimeout
	qemu.StopTimeout = time.Second
	defer func() { qemu.StopTimeout = old }()
	r.Stop()
	waitFor(t, "escaped qemu to die", func() bool { return !isLive(pid) })
}

func TestMissingDir(t *testing.T) {
	a := &Attempt{Dir: filepath.Join(t.TempDir(), "nope"), Self: self(t)}
	if err := a.DoBuild(context.Background(), &bytes.Buffer{}); !errors.Is(err, ErrNoDir) {
		t.Errorf("build: %v", err)
	}
	if _, err := a.Start(context.Background(), "", nil); !errors.Is(err, ErrNoDir) {
		t.Errorf("start: %v", err)
	}
}

func TestBuild(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("build:\n\techo building\n"), 0o644)
	var out bytes.Buffer
	if err := (&Attempt{Dir: dir}).DoBuild(context.Background(), &out); err != nil || !strings.Contains(out.String(), "building") {
		t.Fatalf("%v %q", err, out.String())
	}
	if err := (&Attempt{Dir: dir, Build: "exit 7"}).DoBuild(context.Background(), &out); err == nil || !strings.Contains(err.Error(), "exit status 7") {
		t.Errorf("failing build: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := (&Attempt{Dir: dir, Build: "sleep 30"}).DoBuild(ctx, &out)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) > 5*time.Second {
		t.Errorf("timed-out build: %v after %v", err, time.Since(t0))
	}
}

func TestShimOutsideJiege(t *testing.T) {
	t.Setenv(envReal, "")
	if err := Shim([]string{"-kernel", "k"}); err == nil {
		t.Error("shim without environment must fail")
	}
}

func isLive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}
