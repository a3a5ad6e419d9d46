package attempt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jiege-go/jiege/qemu"
	"github.com/jiege-go/jiege/tools/jiege/internal/contain"
)

// ShimLine starts the line the shim prints, with the QEMU arguments, just
// before it becomes QEMU: the guest's console begins after it.
const ShimLine = "jiege: qemu "

// ShimArg is the hidden first argument that makes the jiege binary act as
// the qemu-system-riscv64 shim.
const ShimArg = "__qemu-shim"

// Environment of the shim, set by Start.
const (
	envReal    = "JIEGE_SHIM_QEMU"    // the real emulator's path
	envPort    = "JIEGE_SHIM_PORT"    // host port to forward
	envGuest   = "JIEGE_SHIM_GUEST"   // guest port the rule targets
	envDir     = "JIEGE_SHIM_DIR"     // where each launch records its pid and arguments
	envExtra   = "JIEGE_SHIM_EXTRA"   // extra QEMU arguments, a JSON list
	envCapture = "JIEGE_SHIM_CAPTURE" // "1": add a packet capture
)

// ErrNoDir reports an attempt directory that does not exist.
var ErrNoDir = errors.New("attempt directory not found")

// ErrNoRun reports an attempt without a run command: no Makefile with a
// run target, no run.sh, none given.
var ErrNoRun = errors.New("no run command: no Makefile run target and no run.sh")

// Attempt is one project directory with its build and run commands.
type Attempt struct {
	Dir       string
	Build     string   // shell command, default "make build"
	Run       string   // shell command, default "make run"
	Self      string   // the jiege executable, re-invoked as the shim
	Port      int      // host port for the guest's HTTP server; 0 picks a free one per Start
	GuestPort int      // default 80
	QEMUArgs  []string // extra QEMU arguments (e.g. -m 1G), applied by the shim
	// Capture makes the shim record the guest's network traffic (headers
	// only) for a failure report; the verifier sets it, bench does not.
	Capture bool
}

func (a *Attempt) check() error {
	st, err := os.Stat(a.Dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("%w: %s", ErrNoDir, a.Dir)
	}
	return nil
}

// DoBuild runs the build command in the attempt's directory, output to log,
// in its own process group and cgroup (contain), killed when ctx ends;
// whatever it left running is killed when it ends.
func (a *Attempt) DoBuild(ctx context.Context, log io.Writer) error {
	if err := a.check(); err != nil {
		return err
	}
	build := a.BuildCommand()
	if build == "" {
		return nil
	}
	cmd := exec.Command("sh", "-c", build)
	cmd.Dir = a.Dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// A process the build left running may hold its output open; the
	// build has ended when its command has, and that process is killed.
	cmd.WaitDelay = time.Second
	group := contain.New()
	defer group.Kill()
	if err := group.Prepare(cmd); err != nil {
		return err
	}
	err := cmd.Start()
	group.Started()
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			return fmt.Errorf("%q in %s: %w", build, a.Dir, err)
		}
		return nil
	case <-ctx.Done():
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("%q in %s: %w", build, a.Dir, ctx.Err())
	}
}

// BuildCommand is the build command: the one given, else "make build"
// when a Makefile has that target, else "sh build.sh" when there is one;
// "" when the attempt has no build step (a setup with only run.sh).
func (a *Attempt) BuildCommand() string {
	switch {
	case a.Build != "":
		return a.Build
	case makeTarget(a.Dir, "build"):
		return "make build"
	case fileExists(filepath.Join(a.Dir, "build.sh")):
		return "sh build.sh"
	}
	return ""
}

// RunCommand is the run command: the one given, else "make run" when a
// Makefile has that target, else "sh run.sh"; "" when there is none.
func (a *Attempt) RunCommand() string {
	switch {
	case a.Run != "":
		return a.Run
	case makeTarget(a.Dir, "run"):
		return "make run"
	case fileExists(filepath.Join(a.Dir, "run.sh")):
		return "sh run.sh"
	}
	return ""
}

// makeTarget reports whether dir's makefile, or a file it includes,
// names target as a rule (make's own lookup would run the makefile's
// shell commands).
func makeTarget(dir, target string) bool {
	rule := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `\s*::?([^=]|$)`)
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		if p := filepath.Join(dir, name); fileExists(p) {
			return makefileHas(dir, p, rule, map[string]bool{})
		}
	}
	return false
}

// includeLine is make's include directive (include, -include, sinclude)
// with its file names.
var includeLine = regexp.MustCompile(`(?m)^[ ]*(?:-?include|sinclude)[ \t]+([^#\n]*)`)

// maxMakefiles bounds the files one makefile scan reads.
const maxMakefiles = 64

// makefileHas reports whether the makefile at path, or one it includes,
// holds rule. Included names are relative to dir, where make runs, and
// may be globs, as make takes them; a name with a variable is skipped.
func makefileHas(dir, path string, rule *regexp.Regexp, seen map[string]bool) bool {
	if seen[path] || len(seen) >= maxMakefiles {
		return false
	}
	seen[path] = true
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	if rule.Match(b) {
		return true
	}
	for _, m := range includeLine.FindAllSubmatch(b, -1) {
		for _, name := range strings.Fields(string(m[1])) {
			if strings.Contains(name, "$") {
				continue
			}
			if !filepath.IsAbs(name) {
				name = filepath.Join(dir, name)
			}
			files, _ := filepath.Glob(name)
			for _, f := range files {
				if makefileHas(dir, f, rule, seen) {
					return true
				}
			}
		}
	}
	return false
}

// Running is an attempt's run command with the QEMU processes it launched.
type Running struct {
	*qemu.Instance
	shimDir   string
	guestPort int
	group     *contain.Group // the run command and all it starts

	mu      sync.Mutex
	found   map[int]Launch // QEMUs found without the shim, by pid
	scanned time.Time      // the last look through /proc for them
}

// scanEvery bounds how often the process table is read.
const scanEvery = 500 * time.Millisecond

// Start runs the attempt's run command with the shim first on PATH. The
// console (the run command's output) goes to logPath and console.
func (a *Attempt) Start(ctx context.Context, logPath string, console io.Writer) (*Running, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	run := a.RunCommand()
	if run == "" {
		return nil, fmt.Errorf("%w in %s (give a run command)", ErrNoRun, a.Dir)
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
	capture := ""
	if a.Capture {
		capture = "1"
	}
	cmd := exec.Command("sh", "-c", run)
	cmd.Dir = a.Dir
	cmd.Env = append(os.Environ(),
		"PATH="+shimDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		envReal+"="+real, envPort+"="+strconv.Itoa(port), envGuest+"="+strconv.Itoa(guest), envDir+"="+shimDir,
		envExtra+"="+extraJSON(a.QEMUArgs), envCapture+"="+capture)
	r := &Running{shimDir: shimDir, guestPort: guest, found: map[int]Launch{}, group: contain.New()}
	if err := r.group.Prepare(cmd); err != nil {
		r.group.Kill()
		os.RemoveAll(shimDir)
		return nil, err
	}
	in, err := qemu.StartCommand(ctx, cmd, port, logPath, console, r.serving)
	r.group.Started()
	if err != nil {
		r.group.Kill()
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

// Launch is one QEMU the run command started.
type Launch struct {
	PID   int
	Args0 string   // the program: qemu-system-riscv64, or the path the run command gave
	Args  []string // as QEMU runs them: rewritten when Shimmed
	// Shimmed says it came through jiege's shim, which rewrote its
	// hostfwd rule; otherwise jiege found it in the run command's process
	// tree and read its command line from /proc.
	Shimmed bool
	// Capture is the pcap file of its user netdev, when the shim added one.
	Capture string
	start   uint64 // process start time, for the liveness check
}

// Started is when the process started (the shim, or the process that
// exec'd QEMU), zero when not known.
func (l Launch) Started() time.Time {
	if l.start == 0 {
		return time.Time{}
	}
	return startedAt(l.start)
}

// Launches lists the QEMU processes the run command started so far,
// through the shim or not, oldest first.
func (r *Running) Launches() []Launch {
	ents, _ := os.ReadDir(r.shimDir)
	var ls []Launch
	shimmed := map[int]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "qemu."))
		if err != nil || !strings.HasPrefix(e.Name(), "qemu.") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(r.shimDir, e.Name()))
		start, args, ok := parseRecord(b)
		if !ok {
			continue
		}
		l := Launch{PID: pid, Args0: qemu.DefaultBinary, Args: args, Shimmed: true, start: start}
		if c := captureFile(r.shimDir, pid); slices.ContainsFunc(l.Args, func(a string) bool { return strings.HasSuffix(a, ",file="+c) }) {
			l.Capture = c
		}
		shimmed[pid] = true
		ls = append(ls, l)
	}
	r.mu.Lock()
	r.findUnshimmed(shimmed)
	for _, l := range r.found {
		if !shimmed[l.PID] {
			ls = append(ls, l)
		}
	}
	r.mu.Unlock()
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].start != ls[j].start {
			return ls[i].start < ls[j].start
		}
		return ls[i].PID < ls[j].PID
	})
	return ls
}

// findUnshimmed records the QEMUs among the run command's descendants,
// its cgroup's processes, and processes that carry this run's shim
// directory in their environment (escaped from the tree, where there is
// no cgroup), that the shim did not start. Called with r.mu held.
func (r *Running) findUnshimmed(shimmed map[int]bool) {
	if r.Instance == nil || time.Since(r.scanned) < scanEvery {
		return
	}
	r.scanned = time.Now()
	procs := allProcs()
	cands := descendants(r.PID(), procs)
	inTree := map[int]bool{}
	for _, p := range cands {
		inTree[p.pid] = true
	}
	inGroup := map[int]bool{}
	for _, pid := range r.group.PIDs() {
		inGroup[pid] = true
	}
	for _, p := range procs {
		if !inTree[p.pid] && (inGroup[p.pid] || isQEMU(p.pid) && hasEnv(p.pid, envDir+"="+r.shimDir)) {
			cands = append(cands, p)
		}
	}
	for _, p := range cands {
		if shimmed[p.pid] {
			continue
		}
		if l, ok := r.found[p.pid]; ok && l.start == p.start {
			continue
		}
		if !isQEMU(p.pid) {
			continue
		}
		if args := cmdline(p.pid); len(args) > 0 {
			r.found[p.pid] = Launch{PID: p.pid, Args0: args[0], Args: args[1:], start: p.start}
		}
	}
}

// Alive reports whether l's process still runs (a reused pid does not
// count: the start time the shim recorded, or /proc gave, must match).
func (r *Running) Alive(l Launch) bool {
	return liveSince(l.PID, l.start)
}

// Serving is the QEMU that serves the attempt now: of the live ones, the
// newest that listens on its forwarded host port, else the newest; ok
// false when none runs. port is the host port it forwards to the guest's
// HTTP port (jiege's for a shimmed QEMU), 0 when it forwards none.
func (r *Running) Serving() (l Launch, addr string, port int, ok bool) {
	var live []Launch
	for _, l := range r.Launches() {
		if r.Alive(l) {
			live = append(live, l)
		}
	}
	if len(live) == 0 {
		return Launch{}, "", 0, false
	}
	pick := live[len(live)-1]
	// Several at once: the one whose hostfwd socket listens serves.
	for i := len(live) - 1; i >= 0 && len(live) > 1; i-- {
		if _, p := r.forward(live[i]); p != 0 && qemu.Listening(live[i].PID, p) {
			pick = live[i]
			break
		}
	}
	addr, port = r.forward(pick)
	return pick, addr, port, true
}

// forward is the host address and port l forwards to the guest's port.
func (r *Running) forward(l Launch) (string, int) {
	if l.Shimmed {
		return "127.0.0.1", r.Port()
	}
	addr, port, ok := ForwardedPort(l.Args, r.guestPort)
	if !ok {
		return "", 0
	}
	return addr, port
}

// Addr is the host address of the serving QEMU's forwarded port: jiege's
// own port unless the QEMU that serves escaped the shim.
func (r *Running) Addr() string {
	if _, addr, port, ok := r.Serving(); ok && port != 0 {
		return net.JoinHostPort(addr, strconv.Itoa(port))
	}
	return r.Instance.Addr()
}

// serving feeds qemu.StartCommand's backlog widening.
func (r *Running) serving() (pid, port int) {
	l, _, port, ok := r.Serving()
	if !ok || port == 0 {
		return 0, 0
	}
	return l.PID, port
}

// GuestPort is the guest's HTTP port.
func (r *Running) GuestPort() int { return r.guestPort }

// QEMUAlive reports whether a QEMU of the run command still runs.
func (r *Running) QEMUAlive() bool {
	_, _, _, ok := r.Serving()
	return ok
}

// Uncontained says why the run command's processes are not held in a
// cgroup of their own, "" when they are.
func (r *Running) Uncontained() string { return r.group.Why() }

// Stop ends the run command and every QEMU it started. In a cgroup: the
// QEMUs get SIGTERM and StopTimeout to exit, then everything left in the
// cgroup SIGKILL. Without one: the run command's process group, then any
// QEMU the shim started that escaped it (a run command may daemonize or
// setsid).
func (r *Running) Stop() error {
	ls := r.Launches() // before the tree goes
	var err error
	if r.group.Contained() {
		r.end(ls)
		err = r.group.Kill()
		if serr := r.Instance.Stop(); err == nil {
			err = serr
		}
	} else {
		err = r.Instance.Stop()
		r.end(ls)
	}
	os.RemoveAll(r.shimDir)
	return err
}

// end sends each live launch SIGTERM, and SIGKILL after StopTimeout.
func (r *Running) end(ls []Launch) {
	for _, l := range ls {
		if !r.Alive(l) {
			continue
		}
		syscall.Kill(l.PID, syscall.SIGTERM)
		deadline := time.Now().Add(qemu.StopTimeout)
		for r.Alive(l) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if r.Alive(l) {
			syscall.Kill(l.PID, syscall.SIGKILL)
		}
	}
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
	var extra []string
	if e := os.Getenv(envExtra); e != "" {
		if err := json.Unmarshal([]byte(e), &extra); err != nil {
			return fmt.Errorf("qemu shim: %s: %w", envExtra, err)
		}
	}
	out, err := Rewrite(args, port, guest, qemu.FreePort)
	if err != nil {
		return fmt.Errorf("qemu shim: %w", err)
	}
	if !informational(args) {
		out = WithExtra(out, extra)
		// The capture tells a failed attempt's silence apart: no
		// handshake, or a handshake and no byte.
		if os.Getenv(envCapture) == "1" {
			out, _ = WithCapture(out, guest, captureFile(dir, os.Getpid()))
		}
	}
	if err := writeRecord(dir, out); err != nil {
		return fmt.Errorf("qemu shim: %w", err)
	}
	fmt.Fprintf(os.Stderr, "%s%s\n", ShimLine, strings.Join(out, " "))
	return syscall.Exec(real, append([]string{real}, out...), os.Environ())
}

// writeRecord leaves in dir the shim's record of this process: its start
// time (which exec keeps, and which tells a reused pid apart) on the
// first line, then QEMU's arguments separated by NULs. It appears whole,
// by a rename, so a reader never sees half of it.
func writeRecord(dir string, args []string) error {
	self, ok := readStat(os.Getpid())
	if !ok {
		return errors.New("cannot read /proc/self/stat")
	}
	name := "qemu." + strconv.Itoa(os.Getpid())
	tmp := filepath.Join(dir, "."+name)
	body := strconv.FormatUint(self.start, 10) + "\n" + strings.Join(args, "\x00")
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// parseRecord reads what writeRecord wrote.
func parseRecord(b []byte) (start uint64, args []string, ok bool) {
	head, rest, found := strings.Cut(string(b), "\n")
	start, err := strconv.ParseUint(head, 10, 64)
	if !found || err != nil || start == 0 {
		return 0, nil, false
	}
	return start, strings.Split(rest, "\x00"), true
}

func captureFile(dir string, pid int) string {
	return filepath.Join(dir, "net."+strconv.Itoa(pid)+".pcap")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func extraJSON(args []string) string {
	if len(args) == 0 {
		return ""
	}
	b, _ := json.Marshal(args)
	return string(b)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
