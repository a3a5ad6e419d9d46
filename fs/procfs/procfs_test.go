package procfs

import (
	"strings"
	"testing"
	"time"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel/perf"
	"github.com/jiege-go/jiege/mm"
)

// fakeKernel is a kernel of one process.
type fakeKernel struct{ p *fakeProcess }

func (k fakeKernel) Processes() []Process             { return []Process{k.p} }
func (fakeKernel) LastPID() int64                     { return 7 }
func (fakeKernel) SetLastPID(int) error               { return nil }
func (fakeKernel) Uptime() time.Duration              { return 90 * time.Second }
func (fakeKernel) CPUs() int                          { return 2 }
func (fakeKernel) MemoryStats() (inUse, total uint64) { return 16 << 20, 64 << 20 }
func (fakeKernel) Network() Network                   { return nil }
func (fakeKernel) Sysctl() Sysctl {
	return Sysctl{Hostname: "host", PIDMax: 32768, Cmdline: "init=/x -- a"}
}
func (fakeKernel) SysVIPC() SysVIPC                        { return noIPC{} }
func (fakeKernel) KeyLimits() KeyLimits                    { return noKeys{} }
func (fakeKernel) CorePattern() string                     { return "core" }
func (fakeKernel) SetCorePattern(string)                   {}
func (fakeKernel) Pipes() *fs.PipeLimits                   { return fs.NewPipeLimits() }
func (fakeKernel) NrOpen() int                             { return 4096 }
func (fakeKernel) SetNrOpen(int) error                     { return nil }
func (fakeKernel) SetHostname(string)                      {}
func (fakeKernel) SetDomainname(string)                    {}
func (fakeKernel) Printk() string                          { return "7\t4\t1\t7" }
func (fakeKernel) SetPrintk([]byte) error                  { return nil }
func (fakeKernel) DmesgRestrict() string                   { return "1" }
func (fakeKernel) SetDmesgRestrict([]byte) error           { return nil }
func (fakeKernel) UnprivilegedUserfaultfd() string         { return "0" }
func (fakeKernel) SetUnprivilegedUserfaultfd([]byte) error { return nil }
func (fakeKernel) UnprivilegedBPFDisabled() string         { return "2" }
func (fakeKernel) SetUnprivilegedBPFDisabled([]byte) error { return nil }
func (fakeKernel) PerfSettings() PerfSettings              { return perf.New() }
func (fakeKernel) HugePools() []*mm.HugePool {
	return []*mm.HugePool{mm.NewHugePool(nil, 2<<20), mm.NewHugePool(nil, 1<<30)}
}

// noKeys is a kernel without key limits.
type noKeys struct{}

func (noKeys) LimitNames() []string          { return nil }
func (noKeys) Limit(string) string           { return "" }
func (noKeys) SetLimit(string, string) error { return nil }

// noIPC is a kernel without System V IPC objects or settings.
type noIPC struct{}

func (noIPC) Listing(string) []byte    { return nil }
func (noIPC) Settings() []string       { return nil }
func (noIPC) Setting(string) string    { return "" }
func (noIPC) Set(string, string) error { return nil }
func (noIPC) MQSettings() []string     { return nil }
func (noIPC) MQSetting(string) string  { return "" }
func (noIPC) MQSet(string, string) error {
	return nil
}

type fakeProcess struct {
	tree     *fs.Tree
	files    *fs.FDTable
	mappings []Mapping
}

func (*fakeProcess) PID() int       { return 7 }
func (*fakeProcess) ParentPID() int { return 1 }
func (*fakeProcess) PGID() int      { return 7 }
func (*fakeProcess) SID() int       { return 1 }
func (*fakeProcess) Paths() (exe, cwd, root string) {
	return "/usr/sbin/a-long-program-name", "/tmp", "/"
}
func (*fakeProcess) Cmdline() []string { return []string{"prog", "-x"} }
func (*fakeProcess) IDs() IDs {
	return IDs{UID: 1000, EUID: 1001, SUID: 1002, FSUID: 1003, GID: 100, EGID: 101, SGID: 102, FSGID: 103, Umask: 0o022}
}
func (*fakeProcess) Exited() bool                  { return false }
func (*fakeProcess) Tasks() []Task                 { return []Task{{TID: 7, Sleeping: true}, {TID: 8}} }
func (*fakeProcess) Usage() (self, children Usage) { return Usage{User: time.Second}, Usage{} }
func (*fakeProcess) Threads() int                  { return 3 }
func (*fakeProcess) Start() time.Duration          { return 2 * time.Second }
func (p *fakeProcess) Mappings() []Mapping         { return p.mappings }
func (p *fakeProcess) MappingsResident() []Mapping {
	ms := append([]Mapping(nil), p.mappings...)
	for i := range ms {
		ms[i].Resident = 1
	}
	return ms
}
func (*fakeProcess) ResidentPages() int                    { return 2 }
func (p *fakeProcess) Files() *fs.FDTable                  { return p.files }
func (p *fakeProcess) Root() *fs.Tree                      { return p.tree }
func (p *fakeProcess) Mounts() *fs.MountNS                 { return nil }
func (*fakeProcess) CoredumpFilter() uint32                { return 0x33 }
func (*fakeProcess) SetCoredumpFilter(uint32)              {}
func (*fakeProcess) Pagemap(start uintptr, n int) []uint64 { return make([]uint64, n) }
func (*fakeProcess) Auxv() []byte                          { return nil }
func (*fakeProcess) TimensOffsets() []byte                 { return nil }
func (*fakeProcess) SetTimensOffsets(any, []byte) error    { return nil }
func (*fakeProcess) Namespaces() []Namespace {
	return []Namespace{{Name: "uts", Ino: 0xeffffffe, Object: "the uts namespace"}}
}
func (*fakeProcess) Timers() []Timer {
	return []Timer{{ID: 0, Signo: 14, Notify: 0, Target: 7}, {ID: 3, Signo: 34, Value: 0xabc, Notify: 4, Target: 8, Clock: 1}}
}

// read returns the generated contents of a file of tree.
func read(t *testing.T, tree *fs.Tree, path string) string {
	t.Helper()
	n, err := tree.Lookup(nil, path, true)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(n.Generate(nil))
}

// TestProcPIDFiles checks /proc/PID's files in Linux's formats from what
// the kernel shows of a process.
func TestProcPIDFiles(t *testing.T) {
	tree := fs.NewTree(fs.NewDir(0o755))
	p := &fakeProcess{tree: tree, files: &fs.FDTable{}, mappings: []Mapping{
		{VMA: mm.VMA{Start: 0x10000, End: 0x12000, Perm: mm.PTERead | mm.PTEExec, Locked: true}},
		{VMA: mm.VMA{Start: 0x20000, End: 0x21000, Perm: mm.PTERead}, Name: "[vvar]"},
		{VMA: mm.VMA{Start: 0x21000, End: 0x22000, Perm: mm.PTERead | mm.PTEExec}, Name: "[vdso]"},
	}}
	if err := Mount(tree, fakeKernel{p}); err != nil {
		t.Fatal(err)
	}
	// A name starts at column 73, as Linux pads the fields before it
	// (conform-linux/memory/maps.c checks the column against Linux).
	pad := strings.Repeat(" ", 73-len("00020000-00021000 r--p 00000000 00:00 0 "))
	if got, want := read(t, tree, "/proc/7/maps"), "00010000-00012000 r-xp 00000000 00:00 0 \n"+
		"00020000-00021000 r--p 00000000 00:00 0 "+pad+"[vvar]\n00021000-00022000 r-xp 00000000 00:00 0 "+pad+"[vdso]\n"; got != want {
		t.Errorf("maps:\n%s\nwant:\n%s", got, want)
	}
	smaps := read(t, tree, "/proc/7/smaps")
	for _, want := range []string{"00010000-00012000 r-xp 00000000 00:00 0 \nSize:                8 kB\n",
		"Rss:                 4 kB\n", "Locked:              4 kB\n00020000-00021000"} {
		if !strings.Contains(smaps, want) {
			t.Errorf("smaps lacks %q:\n%s", want, smaps)
		}
	}
	// A namespace's link reads as its name and inode number, and leads to
	// a file of that inode number bound to the namespace.
	link, err := tree.Lookup(nil, "/proc/7/ns/uts", false)
	if err != nil || link.Link != "uts:[4026531838]" {
		t.Errorf("/proc/7/ns/uts: %v, %v", link, err)
	}
	if file, err := tree.Lookup(nil, "/proc/7/ns/uts", true); err != nil || file.Ino != 4026531838 || file.Dev != fs.DevNsfs ||
		file.Bound != "the uts namespace" || !file.Mode.IsRegular() {
		t.Errorf("/proc/7/ns/uts followed: %+v, %v", file, err)
	}
	if _, err := tree.Lookup(nil, "/proc/7/ns/uts/x", true); err != fs.ErrNotDir {
		t.Errorf("/proc/7/ns/uts/x: %v, want ENOTDIR", err)
	}
	if got := read(t, tree, "/proc/cmdline"); got != "init=/x -- a\n" {
		t.Errorf("/proc/cmdline %q", got)
	}
	// Linux's show_timer: si_value as %px, SIGEV_THREAD_ID as tid.
	if got, want := read(t, tree, "/proc/7/timers"), "ID: 0\nsignal: 14/0000000000000000\nnotify: signal/pid.7\nClockID: 0\n"+
		"ID: 3\nsignal: 34/0000000000000abc\nnotify: signal/tid.8\nClockID: 1\n"; got != want {
		t.Errorf("timers:\n%s\nwant:\n%s", got, want)
	}
	if got := read(t, tree, "/proc/7/cmdline"); got != "prog\x00-x\x00" {
		t.Errorf("cmdline %q", got)
	}
	if got := read(t, tree, "/proc/7/comm"); got != "a-long-program-\n" {
		t.Errorf("comm %q: the executable's name, at most 15 bytes", got)
	}
	stat := strings.Fields(read(t, tree, "/proc/7/stat"))
	if len(stat) != 52 || stat[0] != "7" || stat[1] != "(a-long-program-)" || stat[2] != "S" || stat[3] != "1" ||
		stat[13] != "100" || stat[19] != "3" || stat[21] != "200" || stat[22] != "16384" || stat[23] != "2" {
		t.Errorf("stat %q", stat)
	}
	status := read(t, tree, "/proc/7/status")
	for _, line := range []string{"State:\tS (sleeping)\n", "Uid:\t1000\t1001\t1002\t1003\n", "Gid:\t100\t101\t102\t103\n",
		"VmSize:\t16 kB\n", "VmLck:\t8 kB\n", "VmRSS:\t8 kB\n", "Threads:\t3\n", "Umask:\t0022\n"} {
		if !strings.Contains(status, line) {
			t.Errorf("status lacks %q:\n%s", line, status)
		}
	}
	// The process is S as its main thread is, while thread 8 runs.
	task := strings.Fields(read(t, tree, "/proc/7/task/8/stat"))
	if len(task) != 52 || task[0] != "8" || task[2] != "R" {
		t.Errorf("task 8 stat %q", task)
	}
	taskStatus := read(t, tree, "/proc/7/task/8/status")
	for _, line := range []string{"State:\tR (running)\n", "Tgid:\t7\n", "\nPid:\t8\n"} {
		if !strings.Contains(taskStatus, line) {
			t.Errorf("task 8 status lacks %q:\n%s", line, taskStatus)
		}
	}
	if got := read(t, tree, "/sys/devices/system/cpu/online"); got != "0-1\n" {
		t.Errorf("cpu online %q", got)
	}
	if got := read(t, tree, "/proc/loadavg"); got != "0.00 0.00 0.00 1/1 7\n" {
		t.Errorf("loadavg %q", got)
	}
}
