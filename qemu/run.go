package qemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var (
	// ErrNotInstalled reports that the emulator binary is not on PATH.
	ErrNotInstalled = errors.New("QEMU is not installed")
	// ErrPortInUse reports that the requested host port is already taken.
	ErrPortInUse = errors.New("host port already in use")
)

// StopTimeout is how long Stop waits after SIGTERM before SIGKILL.
var StopTimeout = 5 * time.Second

// Instance is one running QEMU process started by this process.
type Instance struct {
	cmd     *exec.Cmd
	port    int
	logPath string
	log     *os.File
	console *consoleWriter
	started time.Time

	done    chan struct{}
	waitErr error

	stopOnce sync.Once
	stopErr  error
}

// Start launches QEMU for m. The host port is checked (or picked when 0)
// before QEMU starts, so a taken port is reported as ErrPortInUse. When ctx
// ends, the instance is stopped. console, when not nil, receives a live copy
// of everything QEMU prints.
func Start(ctx context.Context, m Machine, console io.Writer) (*Instance, error) {
	bin := m.QEMU
	if bin == "" {
		bin = DefaultBinary
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("%w: %s not found on PATH (Debian: apt-get install qemu-system-misc)", ErrNotInstalled, bin)
	}
	if m.HostPort == 0 {
		if m.HostPort, err = FreePort(); err != nil {
			return nil, err
		}
	} else if err := CheckPort(m.HostPort); err != nil {
		return nil, err
	}
	cmd := exec.Command(path, m.Args()...)
	return start(ctx, cmd, m.HostPort, m.LogPath, console)
}

// StartCommand runs an arbitrary command (an attempt's own QEMU command line,
// through a shell) under the same lifecycle as Start: own process group,
// console logged, stopped with ctx or Stop.
func StartCommand(ctx context.Context, cmd *exec.Cmd, port int, logPath string, console io.Writer) (*Instance, error) {
	return start(ctx, cmd, port, logPath, console)
}

func start(ctx context.Context, cmd *exec.Cmd, port int, logPath string, console io.Writer) (*Instance, error) {
	in := &Instance{cmd: cmd, port: port, logPath: logPath, done: make(chan struct{}), console: newConsoleWriter()}
	var out io.Writer = in.console
	if logPath != "" {
		if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		in.log = f
		out = io.MultiWriter(f, in.console)
	}
	if console != nil {
		out = io.MultiWriter(out, console)
	}
	cmd.Stdout = out
	cmd.Stderr = out
	// Own process group so Stop reaches QEMU's children too (a make or
	// shell wrapper); Pdeathsig kills it if this process dies without
	// running its cleanup.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	in.started = time.Now()
	if err := cmd.Start(); err != nil {
		if in.log != nil {
			in.log.Close()
		}
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	register(in)
	go func() {
		in.waitErr = cmd.Wait()
		if in.log != nil {
			in.log.Close()
		}
		unregister(in)
		close(in.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			in.Stop()
		case <-in.done:
		}
	}()
	return in, nil
}

// Port is the host port forwarded to the guest.
func (in *Instance) Port() int { return in.port }

// Addr is the host address forwarded to the guest.
func (in *Instance) Addr() string { return "127.0.0.1:" + strconv.Itoa(in.port) }

// PID is QEMU's (or the wrapper command's) process id.
func (in *Instance) PID() int { return in.cmd.Process.Pid }

// LogPath is the console log file.
func (in *Instance) LogPath() string { return in.logPath }

// Started is when the process was started.
func (in *Instance) Started() time.Time { return in.started }

// Done is closed when the process has exited and been reaped.
func (in *Instance) Done() <-chan struct{} { return in.done }

// Exited reports whether the process has exited.
func (in *Instance) Exited() bool {
	select {
	case <-in.done:
		return true
	default:
		return false
	}
}

// Wait blocks until the process exits and returns its exit error.
func (in *Instance) Wait() error {
	<-in.done
	return in.waitErr
}

// ConsoleBytes is how many bytes the guest and QEMU have printed so far.
func (in *Instance) ConsoleBytes() int64 { return in.console.n.Load() }

// FirstOutput is closed when the first console byte arrives.
func (in *Instance) FirstOutput() <-chan struct{} { return in.console.first }

// Tail returns up to n bytes from the end of the console output.
func (in *Instance) Tail(n int) string { return in.console.tail(n) }

// Stop ends the process group: SIGTERM, then SIGKILL after StopTimeout, and
// waits until the process is reaped. It is safe to call more than once.
func (in *Instance) Stop() error {
	in.stopOnce.Do(func() { in.stopErr = in.stop() })
	return in.stopErr
}

func (in *Instance) stop() error {
	if in.Exited() {
		return nil
	}
	pgid := in.cmd.Process.Pid
	// The group id equals the leader's pid (Setpgid); signal the group,
	// and the leader directly in case it has left the group.
	syscall.Kill(-pgid, syscall.SIGTERM)
	in.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-in.done:
	case <-time.After(StopTimeout):
		syscall.Kill(-pgid, syscall.SIGKILL)
		in.cmd.Process.Kill()
		select {
		case <-in.done:
		case <-time.After(StopTimeout):
			return fmt.Errorf("qemu pid %d did not exit after SIGKILL", pgid)
		}
	}
	// Children that ignored SIGTERM while the leader exited.
	syscall.Kill(-pgid, syscall.SIGKILL)
	return nil
}

// CheckPort returns ErrPortInUse when 127.0.0.1:port cannot be bound.
func CheckPort(port int) error {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return fmt.Errorf("%w: 127.0.0.1:%d: %v", ErrPortInUse, port, err)
	}
	return l.Close()
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// consoleWriter counts console bytes, signals the first one and keeps a
// bounded tail for failure messages.
type consoleWriter struct {
	n     atomic.Int64
	first chan struct{}
	mu    sync.Mutex
	buf   []byte
}

const tailKeep = 64 << 10

func newConsoleWriter() *consoleWriter { return &consoleWriter{first: make(chan struct{})} }

func (c *consoleWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.n.Add(int64(len(p))) == int64(len(p)) {
		close(c.first)
	}
	c.mu.Lock()
	c.buf = append(c.buf, p...)
	if len(c.buf) > 2*tailKeep {
		c.buf = append(c.buf[:0], c.buf[len(c.buf)-tailKeep:]...)
	}
	c.mu.Unlock()
	return len(p), nil
}

func (c *consoleWriter) tail(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.buf) > n {
		return string(c.buf[len(c.buf)-n:])
	}
	return string(c.buf)
}

// Registry of live instances, so an interrupted process can stop them all.
var (
	liveMu sync.Mutex
	live   = map[*Instance]bool{}
)

func register(in *Instance) {
	liveMu.Lock()
	live[in] = true
	liveMu.Unlock()
}

func unregister(in *Instance) {
	liveMu.Lock()
	delete(live, in)
	liveMu.Unlock()
}

// StopAll stops every instance this process started that is still running.
func StopAll() {
	liveMu.Lock()
	all := make([]*Instance, 0, len(live))
	for in := range live {
		all = append(all, in)
	}
	liveMu.Unlock()
	var wg sync.WaitGroup
	for _, in := range all {
		wg.Add(1)
		go func() { defer wg.Done(); in.Stop() }()
	}
	wg.Wait()
}

// Running is the number of instances this process started that have not
// exited yet.
func Running() int {
	liveMu.Lock()
	defer liveMu.Unlock()
	return len(live)
}
