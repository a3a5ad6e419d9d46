package attempt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jiege-go/jiege/qemu"
	"github.com/jiege-go/jiege/tools/jiege/internal/contain"
)

// The test binary doubles as the jiege binary in shim mode and, copied
// under QEMU's name, as a stand-in for the emulator.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ShimArg {
		fmt.Fprintln(os.Stderr, Shim(os.Args[2:]))
		os.Exit(2)
	}
	if filepath.Base(os.Args[0]) == qemu.DefaultBinary {
		fakeQEMUMain(os.Args[1:])
	}
	os.Exit(m.Run())
}

// fakeExit makes the stand-in emulator exit at once, as a first try that fails.
const fakeExit = "-jiege-test-exit"

// fakeQEMUMain prints its arguments, serves HTTP on the host port its
// hostfwd rule to guest port 80 names, and stays up.
func fakeQEMUMain(args []string) {
	fmt.Println("real-qemu " + strings.Join(args, " "))
	if slices.Contains(args, fakeExit) {
		os.Exit(1)
	}
	if addr, port, ok := ForwardedPort(args, 80); ok {
		l, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
		if err != nil {
			fmt.Println("listen:", err)
			os.Exit(1)
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("HTTP/1.0 200 OK\r\n\r\nfake"))
				c.Close()
			}
		}()
	}
	time.Sleep(300 * time.Second)
	os.Exit(0)
}

// fakeQEMUDir puts the stand-in emulator in a directory of its own.
func fakeQEMUDir(t *testing.T) string {
	dir := t.TempDir()
	b, err := os.ReadFile(self(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, qemu.DefaultBinary), b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fakeQEMU installs the stand-in first on PATH, where Start finds the
// emulator the shim runs.
func fakeQEMU(t *testing.T) {
	t.Setenv("PATH", fakeQEMUDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
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
	a := &Attempt{Dir: dir, Self: self(t), Capture: true}
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
	want := fmt.Sprintf("-machine virt -netdev user,id=n,hostfwd=tcp:127.0.0.1:%d-:80 -kernel k -object filter-dump,id=jiegedump,netdev=n,maxlen=96,file=%s", r.Port(), ls[0].Capture)
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

// What a build leaves running, detached and with a cleared environment,
// is ended with the build, even while it holds the build's output open.
func TestBuildLeavesNothing(t *testing.T) {
	g := contain.New()
	g.Kill()
	if why := g.Why(); why != "" {
		t.Skip(why)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	build := fmt.Sprintf(`env -i setsid -f sh -c 'echo $$ >%s; exec sleep 300'; echo built`, pidFile)
	var out bytes.Buffer
	t0 := time.Now()
	if err := (&Attempt{Dir: t.TempDir(), Build: build}).DoBuild(context.Background(), &out); err != nil || !strings.Contains(out.String(), "built") {
		t.Fatalf("%v %q", err, out.String())
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("the build took %v", d)
	}
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file: %q", b)
	}
	if isLive(pid) {
		t.Errorf("the detached sleep %d outlived the build", pid)
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

// get fetches from addr what the stand-in emulator serves.
func get(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	return string(b), err
}

// A run command that puts its own directory before the shim on PATH, or
// calls the emulator by absolute path: jiege finds the QEMU in the run
// command's process tree, reports it as not rewritten, serves through
// the host port it forwards itself, and Stop ends it.
func TestQEMUBesideTheShim(t *testing.T) {
	other := fakeQEMUDir(t)
	fakeQEMU(t)
	for _, how := range []string{"PATH", "absolute"} {
		t.Run(how, func(t *testing.T) {
			port, err := qemu.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			args := fmt.Sprintf("-machine virt -netdev user,id=n,hostfwd=tcp::%d-:80 -device virtio-net-device,netdev=n", port)
			run := "PATH=" + other + ":$PATH; " + qemu.DefaultBinary + " " + args
			if how == "absolute" {
				run = filepath.Join(other, qemu.DefaultBinary) + " " + args
			}
			a := &Attempt{Dir: t.TempDir(), Self: self(t), Run: run}
			t0 := time.Now()
			r, err := a.Start(context.Background(), "", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Stop()
			waitFor(t, "qemu found", r.QEMUAlive)
			l, addr, p, ok := r.Serving()
			if !ok || l.Shimmed || p != port || addr != "127.0.0.1" || strings.Join(l.Args, " ") != args {
				t.Fatalf("serving %+v %s:%d %v, want the unshimmed QEMU on port %d", l, addr, p, ok, port)
			}
			// Its start, to /proc's clock tick, is where its console output begins.
			if st := l.Started(); st.Before(t0.Add(-100*time.Millisecond)) || st.After(time.Now()) {
				t.Errorf("started %v, not between %v and now", st, t0)
			}
			if how == "absolute" && l.Args0 != filepath.Join(other, qemu.DefaultBinary) {
				t.Errorf("program %q", l.Args0)
			}
			if want := "127.0.0.1:" + strconv.Itoa(port); r.Addr() != want {
				t.Errorf("Addr %s, want %s", r.Addr(), want)
			}
			waitFor(t, "listening", func() bool { return qemu.Listening(l.PID, port) })
			if body, err := get(r.Addr()); err != nil || !strings.HasSuffix(body, "fake") {
				t.Errorf("GET: %q %v", body, err)
			}
			if err := r.BacklogErr(); err != nil {
				t.Errorf("backlog of the unshimmed QEMU: %v", err)
			}
			r.Stop()
			if isLive(l.PID) {
				t.Error("unshimmed QEMU survived Stop")
			}
		})
	}
}

// A run command that starts QEMU with a cleared environment, detached
// into a session of its own (env -i setsid -f), and leaves a detached
// process beside it: the QEMU is found in the run command's cgroup and
// serves, and Stop ends both.
func TestDetachedQEMUInCgroup(t *testing.T) {
	other := fakeQEMUDir(t)
	fakeQEMU(t)
	port, err := qemu.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	args := fmt.Sprintf("-machine virt -netdev user,id=n,hostfwd=tcp::%d-:80 -device virtio-net-device,netdev=n", port)
	run := fmt.Sprintf(`env -i setsid -f %s %s >/dev/null 2>&1; env -i setsid -f sh -c 'echo $$ >%s; exec sleep 300'`,
		filepath.Join(other, qemu.DefaultBinary), args, pidFile)
	a := &Attempt{Dir: t.TempDir(), Self: self(t), Run: run}
	r, err := a.Start(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if why := r.Uncontained(); why != "" {
		t.Skip(why)
	}
	waitFor(t, "qemu found", r.QEMUAlive)
	l, addr, p, ok := r.Serving()
	if !ok || l.Shimmed || p != port || addr != "127.0.0.1" {
		t.Fatalf("serving %+v %s:%d %v, want the detached QEMU on port %d", l, addr, p, ok, port)
	}
	var sleeper int
	waitFor(t, "the detached sleep", func() bool {
		b, _ := os.ReadFile(pidFile)
		sleeper, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return sleeper != 0
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if isLive(l.PID) || isLive(sleeper) {
		t.Errorf("after Stop: qemu %d live %v, sleep %d live %v", l.PID, isLive(l.PID), sleeper, isLive(sleeper))
	}
}

// A run command whose first QEMU exits and whose second serves: the
// serving QEMU, its command line and the backlog widening are the
// second's.
func TestSecondLaunchServes(t *testing.T) {
	fakeQEMU(t)
	dir := t.TempDir()
	run := qemu.DefaultBinary + " " + fakeExit + " -netdev user,id=n,hostfwd=tcp::5555-:80; sleep 1; " +
		qemu.DefaultBinary + " -m 256M -netdev user,id=n,hostfwd=tcp::5555-:80 -device virtio-net-device,netdev=n"
	a := &Attempt{Dir: dir, Self: self(t), Run: run, QEMUArgs: []string{"-m", "1G", "-smp", "2"}, Capture: true}
	r, err := a.Start(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	waitFor(t, "two launches", func() bool { return len(r.Launches()) == 2 })
	ls := r.Launches()
	waitFor(t, "the second serves", func() bool {
		l, _, _, ok := r.Serving()
		return ok && l.PID == ls[1].PID && qemu.Listening(l.PID, r.Port())
	})
	if err := r.BacklogErr(); err != nil {
		t.Errorf("backlog: %v", err)
	}
	l, addr, port, _ := r.Serving()
	if port != r.Port() || addr != "127.0.0.1" || !l.Shimmed {
		t.Errorf("serving %+v on %s:%d, want the shim's port %d", l, addr, port, r.Port())
	}
	want := fmt.Sprintf("-m 1G -netdev user,id=n,hostfwd=tcp:127.0.0.1:%d-:80 -device virtio-net-device,netdev=n -smp 2 -object filter-dump,id=jiegedump,netdev=n,maxlen=96,file=%s",
		r.Port(), l.Capture)
	if got := strings.Join(l.Args, " "); got != want || l.Capture == "" {
		t.Errorf("serving QEMU's arguments\n%s\nwant\n%s", got, want)
	}
	if body, err := get(r.Addr()); err != nil || !strings.HasSuffix(body, "fake") {
		t.Errorf("GET: %q %v", body, err)
	}
}

// The default commands: make targets when the Makefile has them, else
// run.sh (and no build step).
func TestDefaultCommands(t *testing.T) {
	dir := t.TempDir()
	a := &Attempt{Dir: dir}
	if a.BuildCommand() != "" || a.RunCommand() != "" {
		t.Errorf("empty dir: %q %q", a.BuildCommand(), a.RunCommand())
	}
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte("echo hi\n"), 0o755)
	if a.BuildCommand() != "" || a.RunCommand() != "sh run.sh" {
		t.Errorf("run.sh only: %q %q", a.BuildCommand(), a.RunCommand())
	}
	if err := a.DoBuild(context.Background(), io.Discard); err != nil {
		t.Errorf("no build step: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("X := run\nbuild: a b\n\ttrue\n"), 0o644)
	if a.BuildCommand() != "make build" || a.RunCommand() != "sh run.sh" {
		t.Errorf("Makefile with build: %q %q", a.BuildCommand(), a.RunCommand())
	}
	a.Run = "./go.sh"
	if a.RunCommand() != "./go.sh" {
		t.Errorf("given run: %q", a.RunCommand())
	}
	os.Remove(filepath.Join(dir, "run.sh"))
	a.Run = ""
	if _, err := a.Start(context.Background(), "", nil); !errors.Is(err, ErrNoRun) {
		t.Errorf("no run command: %v", err)
	}
}

// A run target in a file the Makefile includes is a run target: include,
// -include and sinclude, names relative to the attempt's directory, globs,
// includes of includes; a name with a variable or a missing file is not
// followed, and an include loop ends.
func TestMakeTargetThroughInclude(t *testing.T) {
	for _, c := range []struct {
		name     string
		files    map[string]string
		hasRun   bool
		hasBuild bool
	}{
		{"include", map[string]string{
			"Makefile":  "build:\n\ttrue\ninclude mk/run.mk # the QEMU line\n",
			"mk/run.mk": "run: build\n\tqemu-system-riscv64 -kernel k\n",
		}, true, true},
		{"-include glob", map[string]string{
			"Makefile":   "-include mk/*.mk\n",
			"mk/a.mk":    "X := 1\n",
			"mk/run.mk":  "include mk/deep.mk\n",
			"mk/deep.mk": "build::\n\ttrue\nrun:\n\ttrue\n",
		}, true, true},
		{"sinclude, several names", map[string]string{
			"makefile": "sinclude missing.mk other.mk\n",
			"other.mk": "run:\n\ttrue\n",
		}, true, false},
		{"variable and loop", map[string]string{
			"Makefile": "include $(MK)/run.mk\ninclude self.mk\n",
			"self.mk":  "include Makefile self.mk\nrunner:\n\ttrue\n",
			"x/run.mk": "run:\n\ttrue\n",
		}, false, false},
		{"not a directive", map[string]string{
			"Makefile": "# include run.mk\nINCLUDES := run.mk\n",
			"run.mk":   "run:\n\ttrue\n",
		}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range c.files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
				os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
			}
			if got := makeTarget(dir, "run"); got != c.hasRun {
				t.Errorf("run target %v, want %v", got, c.hasRun)
			}
			if got := makeTarget(dir, "build"); got != c.hasBuild {
				t.Errorf("build target %v, want %v", got, c.hasBuild)
			}
		})
	}
}
