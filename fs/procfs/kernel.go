package procfs

import (
	"time"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// Kernel is what procfs and sysfs read of the kernel: its processes, the
// machine and the network stack. Package kernel provides it; procfs cannot
// import kernel, which imports fs.
type Kernel interface {
	Processes() []Process  // every process (exited but not reaped included), by pid
	LastPID() int64        // the last pid given out (/proc/sys/kernel/ns_last_pid)
	SetLastPID(int) error  // which root sets
	Uptime() time.Duration // CLOCK_MONOTONIC
	CPUs() int
	MemoryStats() (inUse, total uint64) // RAM, in bytes
	Network() Network
	Sysctl() Sysctl
	SysVIPC() SysVIPC
	KeyLimits() KeyLimits
	CorePattern() string // /proc/sys/kernel/core_pattern, which root sets
	SetCorePattern(string)
	Pipes() *fs.PipeLimits // /proc/sys/fs/pipe-max-size, which root sets
	NrOpen() int           // /proc/sys/fs/nr_open, which root sets
	SetNrOpen(int) error
	SetHostname(string) // /proc/sys/kernel/hostname, which root sets
	SetDomainname(string)
	Printk() string // /proc/sys/kernel/printk, which root sets
	SetPrintk([]byte) error
	DmesgRestrict() string // /proc/sys/kernel/dmesg_restrict, which root sets
	SetDmesgRestrict([]byte) error
	// /proc/sys/vm/unprivileged_userfaultfd, which root sets
	UnprivilegedUserfaultfd() string
	SetUnprivilegedUserfaultfd([]byte) error
	// /proc/sys/kernel/unprivileged_bpf_disabled, which root sets
	UnprivilegedBPFDisabled() string
	SetUnprivilegedBPFDisabled([]byte) error
	// HugePools are the huge page pools, the default size's first.
	HugePools() []*mm.HugePool
	PerfSettings() PerfSettings
}

// PerfSettings are /proc/sys/kernel's perf_event_paranoid and
// perf_event_max_sample_rate, which root sets.
type PerfSettings interface {
	Paranoid() string
	SetParanoid([]byte) error
	MaxSampleRate() string
	SetMaxSampleRate([]byte) error
}

// SysVIPC is what /proc/sysvipc and the System V IPC settings of
// /proc/sys/kernel show, and the POSIX message queues' of
// /proc/sys/fs/mqueue, each in Linux's format.
type SysVIPC interface {
	Listing(kind string) []byte // kind: shm, sem or msg
	Settings() []string         // the names of the settings
	Setting(name string) string // a setting's value, without the newline
	Set(name, value string) error
	MQSettings() []string
	MQSetting(name string) string
	MQSet(name, value string) error
}

// KeyLimits are the key quotas of /proc/sys/kernel/keys, which root sets.
type KeyLimits interface {
	LimitNames() []string
	Limit(name string) string // a limit's value, without the newline
	SetLimit(name, value string) error
}

// Sysctl is what /proc/sys shows of the kernel's settings.
type Sysctl struct {
	Hostname, Domainname string
	OSRelease, Version   string // uname's release and version
	PIDMax               int    // ids wrap below it
	ThreadsMax           int    // the most threads (RLIMIT_NPROC's default is half)
	AIONr, AIOMaxNr      uint64 // native AIO events asked for, and their limit
	Cmdline              string // the kernel's command line (/proc/cmdline)
}

// Network is what /proc/net shows of the network stack, each file already
// in Linux's format.
type Network interface {
	ProcNetDev() []byte
	ProcNetRoute() []byte
	ProcNetIfInet6() []byte
}

// Process is what /proc/PID reads of a process, as it is at the call.
type Process interface {
	PID() int
	ParentPID() int // 0 for init
	PGID() int
	SID() int
	Paths() (exe, cwd, root string) // physical paths, read together under the process's lock
	Cmdline() []string              // argv of the program it runs
	IDs() IDs
	Exited() bool
	Tasks() []Task // its threads, by thread id
	Usage() (self, children Usage)
	Threads() int
	Start() time.Duration // Uptime when it was made
	Mappings() []Mapping
	MappingsResident() []Mapping // Mappings with their resident pages (smaps)
	ResidentPages() int          // user pages it has frames for
	Files() *fs.FDTable
	Root() *fs.Tree
	Mounts() *fs.MountNS    // its mount namespace
	Timers() []Timer        // its POSIX timers, by id
	CoredumpFilter() uint32 // /proc/PID/coredump_filter, which its owner sets
	SetCoredumpFilter(uint32)
	Pagemap(start uintptr, n int) []uint64 // /proc/PID/pagemap's entries of n pages from start
	Namespaces() []Namespace               // /proc/PID/ns
	// TimensOffsets is /proc/PID/timens_offsets; SetTimensOffsets takes
	// a write to it by the viewer that opened it.
	TimensOffsets() []byte
	SetTimensOffsets(viewer any, b []byte) error
	Auxv() []byte // /proc/PID/auxv: the auxiliary vector, to its AT_NULL
}

// Namespace is a namespace a process is in, as /proc/PID/ns names it:
// "uts:[4026531838]", whose file has the inode number Ino and is bound
// to Object (which setns takes).
type Namespace struct {
	Name   string
	Ino    uint64
	Object any
}

// Timer is a POSIX timer as /proc/PID/timers shows it.
type Timer struct {
	ID     int32
	Signo  int32
	Value  uint64 // si_value
	Notify int32  // sigev_notify: SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD, with SIGEV_THREAD_ID
	Target int    // the thread (SIGEV_THREAD_ID) or the process it notifies
	Clock  int32
}

// Task is a thread of a process, as /proc/PID/task/TID shows it.
type Task struct {
	TID      int
	Sleeping bool   // waits in a blocking call (ps's S)
	Name     string // prctl(PR_SET_NAME)'s, "" for the executable's
}

// IDs are a process's real, effective, saved and file-system user and
// group ids, and its umask.
type IDs struct {
	UID, EUID, SUID, FSUID, GID, EGID, SGID, FSGID uint32
	Umask                                          uint32
}

// Usage is CPU time spent in U-mode and in the kernel, and the page faults
// taken, as getrusage counts them.
type Usage struct {
	User, System time.Duration
	MinorFaults  uint64
}

// Mapping is a mapping of a process's address space and the name maps
// gives it: "[stack]", "[vvar]", "[vdso]" or none.
type Mapping struct {
	mm.VMA
	Name string
	// File is the file it maps, if any, whose device (as st_dev) and
	// inode are Dev and Ino, from byte VMA.Offset.
	File     *fs.Node
	Dev, Ino uint64
	Resident int // pages with a frame; filled by MappingsResident only
}
