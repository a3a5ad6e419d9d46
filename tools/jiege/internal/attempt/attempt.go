package attempt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jiege-go/jiege/qemu"
)

// ShimArg is the hidden first argument that makes the jiege binary act as
// the qemu-system-riscv64 shim.
const ShimArg = "__qemu-shim"

// Environment of the shim, set by Start.
const (
	envReal  = "JIEGE_SHIM_QEMU"  // the real emulator's path
	envPort  = "JIEGE_SHIM_PORT"  // host port to forward
	envGuest = "JIEGE_SHIM_GUEST" // guest port the rule targets
	envDir   = "JIEGE_SHIM_DIR"   // where each launch records its pid and arguments
)

// ErrNoDir reports an attempt directory that does not exist.
var ErrNoDir = errors.New("attempt directory not found")

// Attempt is one project directory with its build and run commands.
type Attempt struct {
	Dir       string
	Build     string // shell command, default "make build"
	Run       string // shell command, default "make run"
	Self      string // the jiege executable, re-invoked as the shim
	Port      int    // host port for the guest's HTTP server; 0 picks a free one per Start
	GuestPort int    // default 80
}

func (a *Attempt) check() error {
	st, err := os.Stat(a.Dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("%w: %s", ErrNoDir, a.Dir)
	}
	return nil
}

// DoBuild runs the build command in the attempt's directory, output to log,
// in its own process group, killed when ctx ends.
func (a *Attempt) DoBuild(ctx context.Context, log io.Writer) error {
	if err := a.check(); err != nil {
		return err
	}
	build := a.Build
	if build == "" {
		build = "make build"
	}
	cmd := exec.Command("sh", "-c", build)
	cmd.Dir = a.Dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%q in %s: %w", build, a.Dir, err)
		}
		return nil
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("%q in %s: %w", build, a.Dir, ctx.Err())
	}
}

// Running is an attempt's run command with the QEMU processes it launched.
type Running struct {
	*qemu.Instance
	shimDir string
}

// Start runs the attempt's run command with the shim first on PATH. The
// console (the run command's output) goes to logPath and console.
func (a *Attempt) Start(ctx context.Context, logPath string, console io.Writer) (*Running, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	real, err := exec.LookPath(qemu.DefaultBinary)
	if err != nil {
		return nil, fmt.Errorf("%w: %s not found on PATH", qemu.ErrNotInstalled, qemu.DefaultBinary)
	}
	port := a.Port
	if port == 0 {
		if port, err = qemu.FreePort(); err != nil {
			return nil, err
		}
	} else if err := qemu.CheckPort(port); err != nil {
		return nil, err
	}
	guest := a.GuestPort
	if guest == 0 {
		guest = 80
	}
	shimDir, err := os.MkdirTemp("", "jiege-shim-")
	if err != nil {
		return nil, err
	}
	script := fmt.Sprintf("#!/bin/sh\nexec %s %s \"$@\"\n", shellQuote(a.Self), ShimArg)
	if err := os.WriteFile(filepath.Join(shimDir, qemu.DefaultBinary), []byte(script), 0o755); err != nil {
		return nil, err
	}
	run := a.Run
	if run == "" {
		run = "make run"
	}
	cmd := exec.Command("sh", "-c", run)
	cmd.Dir = a.Dir
	cmd.Env = append(os.Environ(),
		"PATH="+shimDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		envReal+"="+real, envPort+"="+strconv.Itoa(port), envGuest+"="+strconv.Itoa(guest), envDir+"="+shimDir)
	r := &Running{shimDir: shimDir}
	in, err := qemu.StartCommand(ctx, cmd, port, logPath, console, r.qemuPID)
	if err != nil {
		os.RemoveAll(shimDir)
		return nil, err
	}
	r.Instance = in
	go func() {
		// Also clean up when ctx ends without an explicit Stop.
		select {
		case <-ctx.Done():
			r.Stop()
		case <-in.Done():
		}
	}()
	return r, nil
}

// Launch is one QEMU started through the shim.
type Launch struct {
	PID  int
	Args []string // rewritten arguments
}

// Launches lists the QEMU processes the shim started so far.
func (r *Running) Launches() []Launch {
	ents, _ := os.ReadDir(r.shimDir)
	var ls []Launch
	for _, e := range ents {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "qemu."))
		if err != nil || !strings.HasPrefix(e.Name(), "qemu.") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(r.shimDir, e.Name()))
		ls = append(ls, Launch{PID: pid, Args: strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")})
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].PID < ls[j].PID })
	return ls
}

// qemuPID is the first live QEMU the shim started, or 0.
func (r *Running) qemuPID() int {
	for _, l := range r.Launches() {
		if r.ours(l.PID) {
			return l.PID
		}
	}
	return 0
}

// QEMUAlive reports whether a QEMU started through the shim still runs.
func (r *Running) QEMUAlive() bool {
	for _, l := range r.Launches() {
		if r.ours(l.PID) {
			return true
		}
	}
	return false
}

// ours reports whether pid is a live process launched by this run's shim:
// its environment carries this run's shim directory (pids get reused).
func (r *Running) ours(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) == 0 || f[0] == "Z" {
		return false
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		if kv == envDir+"="+r.shimDir {
			return true
		}
	}
	return false
}

// Stop ends the run command's process group and then any QEMU the shim
// started that escaped it (a run command may daemonize or setsid).
func (r *Running) Stop() error {
	err := r.Instance.Stop()
	for _, l := range r.Launches() {
		if !r.ours(l.PID) {
			continue
		}
		syscall.Kill(l.PID, syscall.SIGTERM)
		deadline := time.Now().Add(qemu.StopTimeout)
		for r.ours(l.PID) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if r.ours(l.PID) {
			syscall.Kill(l.PID, syscall.SIGKILL)
		}
	}
	os.RemoveAll(r.shimDir)
	return err
}

// Shim is the shim mode's main: rewrite the arguments, record this process
// (which becomes QEMU), and exec the real emulator. It returns only on error.
func Shim(args []string) error {
	real, dir := os.Getenv(envReal), os.Getenv(envDir)
	port, err1 := strconv.Atoi(os.Getenv(envPort))
	guest, err2 := strconv.Atoi(os.Getenv(envGuest))
	if real == "" || dir == "" || err1 != nil || err2 != nil {
		return errors.New("qemu shim: started outside jiege (environment not set)")
	}
	out, err := Rewrite(args, port, guest, qemu.FreePort)
	if err != nil {
		return fmt.Errorf("qemu shim: %w", err)
	}
	rec := filepath.Join(dir, "qemu."+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(rec, []byte(strings.Join(out, "\x00")), 0o644); err != nil {
		return fmt.Errorf("qemu shim: %w", err)
	}
	fmt.Fprintf(os.Stderr, "jiege: qemu %s\n", strings.Join(out, " "))
	return syscall.Exec(real, append([]string{real}, out...), os.Environ())
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
