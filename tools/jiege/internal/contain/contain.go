// Package contain owns the place jiege runs an attempt's build and run
// commands in: a cgroup v2 of their own, which no child leaves whatever
// its environment, session or parent, so that every process they start is
// found and ended. Without a cgroup v2 jiege may write (jiege not root, a
// cgroup v1 only host) a Group contains nothing and says why.
package contain

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Group is a cgroup for one command and everything it starts.
type Group struct {
	mu  sync.Mutex
	dir string // the cgroup's directory; "" when not contained or removed
	fd  int    // dir opened for the clone into it, -1 when not open
	why string // why the command is not contained, or ""
}

var seq atomic.Int64

// New makes a fresh cgroup, a child of jiege's own cgroup v2. When it
// cannot, the Group contains nothing and Why says so.
func New() *Group {
	g := &Group{fd: -1}
	parent, err := ownCgroup()
	if err == nil {
		dir := filepath.Join(parent, fmt.Sprintf("jiege-%d-%d", os.Getpid(), seq.Add(1)))
		if err = os.Mkdir(dir, 0o755); err == nil {
			g.dir = dir
			return g
		}
	}
	g.why = fmt.Sprintf("not contained (no cgroup v2 of its own: %v): a process that leaves the command's process tree and environment is neither found nor ended", err)
	return g
}

// ownCgroup is the directory of this process's cgroup v2.
func ownCgroup() (string, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if path, ok := strings.CutPrefix(l, "0::"); ok {
			dir := filepath.Join(mount, path)
			if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
				return "", err
			}
			return dir, nil
		}
	}
	return "", errors.New("this process is in no cgroup v2")
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup
// on a unified host, /sys/fs/cgroup/unified on a hybrid one.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		// "36 25 0:30 / /sys/fs/cgroup rw,... - cgroup2 cgroup2 rw"
		fields := strings.Fields(s.Text())
		for i, fl := range fields {
			if fl == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 && fields[3] == "/" {
				return fields[4], nil
			}
		}
	}
	return "", errors.New("no cgroup v2 hierarchy mounted")
}

// Contained reports whether the group holds what it starts.
func (g *Group) Contained() bool { return g.why == "" }

// Why says why the group contains nothing, "" when it does.
func (g *Group) Why() string { return g.why }

// Prepare makes cmd start inside the group (a clone straight into the
// cgroup, so not even its first fork is outside). Call Started after
// cmd.Start.
func (g *Group) Prepare(cmd *exec.Cmd) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dir == "" {
		return nil
	}
	fd, err := syscall.Open(g.dir, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	g.fd = fd
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	return nil
}

// Started closes what Prepare opened.
func (g *Group) Started() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fd >= 0 {
		syscall.Close(g.fd)
		g.fd = -1
	}
}

// PIDs lists the processes in the group.
func (g *Group) PIDs() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.pids()
}

func (g *Group) pids() []int {
	if g.dir == "" {
		return nil
	}
	b, _ := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// killWait bounds the wait for the group's processes to go.
const killWait = 5 * time.Second

// Kill ends every process in the group at once (SIGKILL) and removes the
// group. A later Kill does nothing.
func (g *Group) Kill() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dir == "" {
		return nil
	}
	// cgroup.kill (Linux 5.14) kills atomically; before it, the pids are
	// killed until none is left, which a fork in between only delays.
	killAll := os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0) != nil
	deadline := time.Now().Add(killWait)
	for {
		pids := g.pids()
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s: %d processes left after SIGKILL", g.dir, len(pids))
		}
		if killAll {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A killed process leaves cgroup.procs before it has finished
	// exiting, and the cgroup is busy (EBUSY) until it has.
	err := os.Remove(g.dir)
	for errors.Is(err, syscall.EBUSY) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		err = os.Remove(g.dir)
	}
	g.dir = ""
	return err
}
