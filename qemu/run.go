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
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

	backlog chan error // Start's WidenBacklog result, kept for every reader
	widen   *widener   // StartCommand's: follows the QEMU that serves
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
	in, err := start(ctx, cmd, m.HostPort, m.LogPath, console)
	if err != nil {
		return nil, err
	}
	go func() { in.backlog <- widenWhenListening(in.PID(), in.port, in.done, 10*time.Second) }()
	return in, nil
}

// BacklogErr waits until the hostfwd backlog has been widened (see
// WidenBacklog) and says why it could not be, or nil.
func (in *Instance) BacklogErr() error {
	if in.widen != nil {
		deadline := time.Now().Add(15 * time.Second)
		for {
			if err, ok := in.widen.result(); ok {
				return err
			}
			if in.Exited() {
				return errors.New("the command exited")
			}
			if time.Now().After(deadline) {
				return errors.New("no QEMU of the command served within 15s")
			}
			time.Sleep(widenPoll)
		}
	}
	err := <-in.backlog
	in.backlog <- err
	return err
}

// WidenBacklog widens the backlog of the hostfwd socket of a QEMU this
// instance's command launched (an attempt's, through the shim) once it
// listens, waiting at most limit.
func (in *Instance) WidenBacklog(qemuPID int, limit time.Duration) error {
	return widenWhenListening(qemuPID, in.port, in.done, limit)
}

// StartCommand runs an arbitrary command (an attempt's own QEMU command line,
// through a shell) under the same lifecycle as Start: own process group,
// console logged, stopped with ctx or Stop. serving returns the pid of the
// QEMU that serves the attempt now and the host port it forwards (0 while
// there is none): a command may start QEMU more than once, so the hostfwd
// backlog of each QEMU that serves is widened as Start does, and
// BacklogErr speaks of the one serving last.
func StartCommand(ctx context.Context, cmd *exec.Cmd, port int, logPath string, console io.Writer, serving func() (pid, port int)) (*Instance, error) {
	in, err := start(ctx, cmd, port, logPath, console)
	if err != nil {
		return nil, err
	}
	in.widen = &widener{results: map[int]error{}, first: map[int]time.Time{}}
	go in.widen.follow(in.done, serving)
	return in, nil
}

// widener widens the backlog of every QEMU that serves in turn.
type widener struct {
	mu      sync.Mutex
	current int               // the serving QEMU's pid, 0 before one
	results map[int]error     // by pid: widened (nil) or why not
	first   map[int]time.Time // when each pid was first seen serving
}

// widenPoll is how often the serving QEMU is looked up.
const widenPoll = 50 * time.Millisecond

func (w *widener) follow(done <-chan struct{}, serving func() (pid, port int)) {
	every := widenPoll
	for {
		select {
		case <-done:
			return
		case <-time.After(every):
		}
		// Once the serving QEMU is settled, only a relaunch is watched for.
		every = widenPoll
		if _, ok := w.result(); ok {
			every = 10 * widenPoll
		}
		pid, port := serving()
		if pid == 0 {
			continue
		}
		w.mu.Lock()
		w.current = pid
		_, tried := w.results[pid]
		if w.first[pid].IsZero() {
			w.first[pid] = time.Now()
		}
		since := w.first[pid]
		w.mu.Unlock()
		if tried {
			continue
		}
		err := WidenBacklog(pid, port, Backlog)
		if errors.Is(err, errNoListener) && time.Since(since) < 10*time.Second {
			continue
		}
		w.mu.Lock()
		w.results[pid] = err
		w.mu.Unlock()
	}
}

// result is the widening result of the serving QEMU, ok false while
// there is none yet.
func (w *widener) result() (error, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.current == 0 {
		return nil, false
	}
	err, ok := w.results[w.current]
	return err, ok
}

func start(ctx context.Context, cmd *exec.Cmd, port int, logPath string, console io.Writer) (*Instance, error) {
	in := &Instance{cmd: cmd, port: port, logPath: logPath, done: make(chan struct{}), console: newConsoleWriter(),
		backlog: make(chan error, 1)}
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
	// running its cleanup. The caller's attributes (a cgroup to start
	// in) stay.
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid, cmd.SysProcAttr.Pdeathsig = true, syscall.SIGKILL
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

// ConsoleBytesAt is how many console bytes had come before t (as far
// back as the kept marks reach): where the output of a process started
// at t begins.
func (in *Instance) ConsoleBytesAt(t time.Time) int64 {
	c := in.console
	c.mu.Lock()
	defer c.mu.Unlock()
	i := sort.Search(len(c.marks), func(i int) bool { return !c.marks[i].t.Before(t) })
	switch {
	case i > 0:
		return c.marks[i-1].n
	case len(c.marks) > 0 && len(c.marks) >= keepMarks:
		return c.marks[0].n // older than the kept marks: from the oldest
	}
	return 0
}

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
	marks []consoleMark // when the bytes came, for ConsoleBytesAt
}

// consoleMark says that n bytes had come by t.
type consoleMark struct {
	t time.Time
	n int64
}

// keepMarks bounds the console's time marks (one per write).
const keepMarks = 1 << 14

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
	c.marks = append(c.marks, consoleMark{time.Now(), c.n.Load()})
	if len(c.marks) > 2*keepMarks {
		c.marks = append(c.marks[:0], c.marks[len(c.marks)-keepMarks:]...)
	}
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

// Backlog is the listen backlog Start gives QEMU's hostfwd socket.
const Backlog = 1024

// WidenBacklog raises the listen backlog of the hostfwd socket that process
// pid listens with on 127.0.0.1:port to n. QEMU's user networking listens
// with a backlog of 1: when several clients connect at once, the host's
// accept queue overflows and connections that the client already sees as
// established are dropped (it then waits for an answer that never comes,
// or gets a reset), whatever the guest kernel does. Calling listen again on
// a listening socket only changes its backlog, so WidenBacklog takes a
// duplicate of QEMU's socket (pidfd_getfd, allowed for our own child) and
// calls listen on it.
func WidenBacklog(pid, port, n int) error {
	inode, err := listenInode(pid, port)
	if err != nil {
		return err
	}
	fd, err := socketFD(pid, inode)
	if err != nil {
		return err
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(pidfd)
	dup, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		return fmt.Errorf("pidfd_getfd %d/%d: %w", pid, fd, err)
	}
	defer unix.Close(dup)
	if err := unix.Listen(dup, n); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return nil
}

// errNoListener reports that the process does not listen on the port (yet).
var errNoListener = errors.New("no listening socket")

// listenInode finds the inode of the TCP socket listening on
// 127.0.0.1:port (or on every address, as an attempt's own hostfwd rule
// may) in pid's network namespace.
func listenInode(pid, port int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		return "", err
	}
	loop, all := fmt.Sprintf("0100007F:%04X", port), fmt.Sprintf("00000000:%04X", port)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
		if len(f) >= 10 && (f[1] == loop || f[1] == all) && f[3] == "0A" {
			return f[9], nil
		}
	}
	return "", fmt.Errorf("%w on 127.0.0.1:%d", errNoListener, port)
}

// Listening reports whether process pid holds a socket listening on the
// port (the hostfwd rule of a QEMU that serves).
func Listening(pid, port int) bool {
	inode, err := listenInode(pid, port)
	if err != nil {
		return false
	}
	_, err = socketFD(pid, inode)
	return err == nil
}

// socketFD finds pid's file descriptor for the socket with this inode.
func socketFD(pid int, inode string) (int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	want := "socket:[" + inode + "]"
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && l == want {
			return strconv.Atoi(e.Name())
		}
	}
	return 0, fmt.Errorf("%w: socket %s not among pid %d's files", errNoListener, inode, pid)
}

// widenWhenListening waits (bounded) for the hostfwd socket to appear and
// widens its backlog.
func widenWhenListening(pid, port int, done <-chan struct{}, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		err := WidenBacklog(pid, port, Backlog)
		if err == nil || !errors.Is(err, errNoListener) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-done:
			return errors.New("QEMU exited")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
