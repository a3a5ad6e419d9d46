package attempt

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// An attempt's run command may start QEMU without the shim: a directory
// put before jiege's on PATH, or the emulator called by absolute path.
// Such a QEMU is found through the run command's process tree (and,
// when it escaped the tree, through the shim directory in its
// environment) and its command line read from /proc. jiege cannot
// rewrite it; it reports that and probes the host port the attempt
// forwards itself. (Bind-mounting the shim over the emulator in a
// private mount namespace would rewrite it too, but only as root, and
// only a QEMU at the path jiege knows: a QEMU built by the attempt under
// its own directory would still escape.)

// procInfo is what /proc says about one process.
type procInfo struct {
	pid, ppid int
	state     string
	start     uint64 // clock ticks after boot: tells a reused pid apart
}

// readStat parses /proc/PID/stat; the command name may hold spaces and
// parentheses, so the fields are read after the last ')'.
func readStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	// utime stime cutime cstime priority nice threads itrealvalue starttime
	if len(f) < 20 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procInfo{pid: pid, ppid: ppid, state: f[0], start: start}, true
}

// allProcs lists the live processes of the machine.
func allProcs() []procInfo {
	ents, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readStat(pid); ok && p.state != "Z" && p.state != "X" {
			out = append(out, p)
		}
	}
	return out
}

// descendants returns root's live descendants (root excluded).
func descendants(root int, procs []procInfo) []procInfo {
	children := map[int][]procInfo{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []procInfo
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// isQEMU reports whether pid runs the riscv64 system emulator, by its
// executable or, when that is unreadable, by argv[0].
func isQEMU(pid int) bool {
	if exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil {
		return strings.HasPrefix(filepath.Base(strings.TrimSuffix(exe, " (deleted)")), qemuName)
	}
	args := cmdline(pid)
	return len(args) > 0 && strings.HasPrefix(filepath.Base(args[0]), qemuName)
}

const qemuName = "qemu-system-riscv64"

// cmdline is a process's argument vector.
func cmdline(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// hasEnv reports whether pid's environment holds kv.
func hasEnv(pid int, kv string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, e := range strings.Split(string(b), "\x00") {
		if e == kv {
			return true
		}
	}
	return false
}

// liveSince reports whether pid is alive and is the process that started
// at start.
func liveSince(pid int, start uint64) bool {
	p, ok := readStat(pid)
	return ok && p.start == start && p.state != "Z" && p.state != "X"
}

// clockTick is the unit of /proc/PID/stat's start time (USER_HZ, 100 on
// every Linux architecture jiege runs on).
const clockTick = 10 * time.Millisecond

// startedAt converts a process start time (clock ticks after boot) to
// wall-clock time through /proc/uptime, to within a tick or two.
func startedAt(ticks uint64) time.Time {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Time{}
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return time.Time{}
	}
	up, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return time.Time{}
	}
	age := time.Duration(up*float64(time.Second)) - time.Duration(ticks)*clockTick
	return time.Now().Add(-age)
}
