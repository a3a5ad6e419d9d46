package procfs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// procfs and sysfs: synthetic directories of the tree whose files are
// generated from the kernel's state when opened, in Linux's formats (what
// ps, top, free, df and the C library read).

func procFile(gen func() []byte) *fs.Node { return fs.NewGenerated(gen) }

// coverDir makes /proc/gocover in a kernel built for coverage (cover.go).
var coverDir func() *fs.Node

func procLink(target string) *fs.Node { return fs.NewMagicLink(target) }

func procDir(list func() map[string]*fs.Node) *fs.Node {
	n := fs.NewDir(0o555)
	n.ListDir = list
	n.Dev = fs.DevProc
	n.Touch()
	return n
}

// sysDir is a directory of sysfs holding children.
func sysDir(children map[string]*fs.Node) *fs.Node {
	n := fs.NewDir(0o755)
	for k, v := range children {
		n.Children[k] = v
	}
	n.Dev = fs.DevSysfs
	n.Touch()
	return n
}

// Mount registers procfs and sysfs as file system types and mounts
// them at /proc and /sys of tree (made when the initramfs has none); k
// is what they show.
func Mount(tree *fs.Tree, k Kernel) error {
	tree.RegisterFilesystem("proc", func(*fs.Cred, string) (*fs.Node, string, error) { return procRoot(tree, k), "", nil })
	tree.RegisterFilesystem("sysfs", func(*fs.Cred, string) (*fs.Node, string, error) { return sysRoot(k), "", nil })
	for _, m := range []struct{ dir, fstype string }{{"/proc", "proc"}, {"/sys", "sysfs"}} {
		if _, err := tree.Lookup(nil, m.dir, true); err != nil {
			if err := tree.Mkdir(nil, m.dir, 0o555); err != nil {
				return err
			}
		}
		if err := tree.Mount(nil, m.fstype, m.dir, m.fstype, unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mount %s: %v", m.dir, err)
		}
	}
	return nil
}

// procRoot is a procfs instance's root directory.
func procRoot(tree *fs.Tree, k Kernel) *fs.Node {
	static := map[string]*fs.Node{
		"cpuinfo": procFile(func() []byte { return cpuinfo(k) }),
		"meminfo": procFile(func() []byte { return meminfo(k) }),
		"stat":    procFile(func() []byte { return procStat(k) }),
		"uptime":  fs.NewGeneratedFor(func(viewer any) []byte { return uptime(k, viewer) }),
		"loadavg": procFile(func() []byte {
			return []byte(fmt.Sprintf("0.00 0.00 0.00 1/%d %d\n", len(k.Processes()), k.LastPID()))
		}),
		"mounts":    fs.NewGeneratedFor(func(viewer any) []byte { return mounts(tree, viewerMounts(viewer)) }),
		"mountinfo": fs.NewGeneratedFor(func(viewer any) []byte { return mountinfo(tree, viewerMounts(viewer)) }),
		"filesystems": procFile(func() []byte {
			return []byte("nodev\tsysfs\nnodev\ttmpfs\nnodev\tproc\nnodev\tdevtmpfs\n")
		}),
		"sys":       procSys(k, tree),
		"config.gz": procFile(func() []byte { return gzipStored(kernelConfigText()) }),
		"sysvipc": procDir(func() map[string]*fs.Node {
			ipc := k.SysVIPC()
			m := map[string]*fs.Node{}
			for _, kind := range []string{"shm", "sem", "msg"} {
				m[kind] = procFile(func() []byte { return ipc.Listing(kind) })
			}
			return m
		}),
		"cmdline": procFile(func() []byte { return []byte(k.Sysctl().Cmdline + "\n") }),
		"version": procFile(func() []byte {
			s := k.Sysctl()
			return []byte("Linux version " + s.OSRelease + " (jiege@jiege-go) (go) " + s.Version + "\n")
		}),
		"net": procDir(func() map[string]*fs.Node {
			network := k.Network()
			return map[string]*fs.Node{
				"dev":      procFile(network.ProcNetDev),
				"route":    procFile(network.ProcNetRoute),
				"if_inet6": procFile(network.ProcNetIfInet6),
			}
		}),
	}
	if coverDir != nil {
		static["gocover"] = coverDir()
	}
	return procDir(func() map[string]*fs.Node {
		m := make(map[string]*fs.Node, len(static)+8)
		for k, v := range static {
			m[k] = v
		}
		for _, p := range k.Processes() {
			m[strconv.Itoa(p.PID())] = procPID(p)
		}
		return m
	})
}

// procSys is /proc/sys: the settings LTP and programs read, in Linux's
// formats, read from the kernel at each open. Those Linux lets root
// write are writable (fs.NewSetting: the names, core_pattern, printk,
// dmesg_restrict, ns_last_pid, nr_open, the pipe, inotify, System V IPC,
// POSIX message queue and key limits); the rest are read-only.
func procSys(k Kernel, tree *fs.Tree) *fs.Node {
	sysctl, ipc := k.Sysctl, k.SysVIPC()
	line := func(v func(Sysctl) string) *fs.Node {
		return procFile(func() []byte { return []byte(v(sysctl()) + "\n") })
	}
	fixed := func(v string) *fs.Node { return line(func(Sysctl) string { return v }) }
	return procDir(func() map[string]*fs.Node {
		return map[string]*fs.Node{
			"kernel": procDir(func() map[string]*fs.Node {
				m := map[string]*fs.Node{
					"hostname": fs.NewSetting(func() []byte { return []byte(sysctl().Hostname + "\n") },
						func(b []byte) error { return setUTSName(k.SetHostname, b) }),
					"domainname": fs.NewSetting(func() []byte { return []byte(sysctl().Domainname + "\n") },
						func(b []byte) error { return setUTSName(k.SetDomainname, b) }),
					"ostype":    fixed("Linux"),
					"osrelease": line(func(s Sysctl) string { return s.OSRelease }),
					"version":   line(func(s Sysctl) string { return s.Version }),
					"pid_max":   line(func(s Sysctl) string { return strconv.Itoa(s.PIDMax) }),
					"ns_last_pid": fs.NewSetting(func() []byte { return []byte(strconv.FormatInt(k.LastPID(), 10) + "\n") },
						func(b []byte) error {
							id, err := strconv.Atoi(strings.TrimSpace(string(b)))
							if err != nil {
								return unix.EINVAL
							}
							return k.SetLastPID(id)
						}),
					"threads-max": line(func(s Sysctl) string { return strconv.Itoa(s.ThreadsMax) }),
					"tainted":     fixed("0"),
					// The generator is seeded before init runs, so its
					// pool reads full, as Linux's once its CRNG is ready.
					"random": procDir(func() map[string]*fs.Node {
						return map[string]*fs.Node{
							"entropy_avail":           fixed("256"),
							"poolsize":                fixed("256"),
							"urandom_min_reseed_secs": fixed("60"),
							"write_wakeup_threshold":  fixed("256"),
						}
					}),
					"core_pattern": fs.NewSetting(func() []byte { return []byte(k.CorePattern() + "\n") },
						func(b []byte) error { k.SetCorePattern(string(b)); return nil }),
					"sched_rr_timeslice_ms": fixed("100"), // SCHED_RR's quantum, as sched_rr_get_interval says
					"printk":                fs.NewSetting(func() []byte { return []byte(k.Printk() + "\n") }, k.SetPrintk),
					"dmesg_restrict":        fs.NewSetting(func() []byte { return []byte(k.DmesgRestrict() + "\n") }, k.SetDmesgRestrict),
					"unprivileged_bpf_disabled": fs.NewSetting(func() []byte { return []byte(k.UnprivilegedBPFDisabled() + "\n") },
						k.SetUnprivilegedBPFDisabled),
					"perf_event_paranoid": fs.NewSetting(func() []byte { return []byte(k.PerfSettings().Paranoid() + "\n") },
						k.PerfSettings().SetParanoid),
					"perf_event_max_sample_rate": fs.NewSetting(func() []byte { return []byte(k.PerfSettings().MaxSampleRate() + "\n") },
						k.PerfSettings().SetMaxSampleRate),
				}
				for _, name := range ipc.Settings() {
					m[name] = fs.NewSetting(func() []byte { return []byte(ipc.Setting(name) + "\n") },
						func(b []byte) error { return ipc.Set(name, string(b)) })
				}
				m["keys"] = procDir(func() map[string]*fs.Node {
					limits := k.KeyLimits()
					m := map[string]*fs.Node{}
					for _, name := range limits.LimitNames() {
						m[name] = fs.NewSetting(func() []byte { return []byte(limits.Limit(name) + "\n") },
							func(b []byte) error { return limits.SetLimit(name, string(b)) })
					}
					return m
				})
				return m
			}),
			"vm": procDir(func() map[string]*fs.Node {
				return map[string]*fs.Node{
					"unprivileged_userfaultfd": fs.NewSetting(func() []byte { return []byte(k.UnprivilegedUserfaultfd() + "\n") }, k.SetUnprivilegedUserfaultfd),
					"nr_hugepages":             nrHugepages(k.HugePools()[0]),
					"drop_caches":              dropCaches(),
					"compact_memory":           compactMemory(),
				}
			}),
			"fs": procDir(func() map[string]*fs.Node {
				return map[string]*fs.Node{
					"pipe-user-pages-soft": fixed(strconv.Itoa(fs.PipeUserPagesSoft)),
					"pipe-user-pages-hard": fixed("0"),
					"nr_open": fs.NewSetting(func() []byte { return []byte(strconv.Itoa(k.NrOpen()) + "\n") },
						func(b []byte) error {
							n, err := strconv.Atoi(strings.TrimSpace(string(b)))
							if err != nil {
								return unix.EINVAL
							}
							return k.SetNrOpen(n)
						}),
					"pipe-max-size": fs.NewSetting(func() []byte { return []byte(strconv.Itoa(k.Pipes().MaxSize()) + "\n") }, k.Pipes().SetMaxSize),
					"aio-nr":        line(func(s Sysctl) string { return strconv.FormatUint(s.AIONr, 10) }),
					"aio-max-nr":    line(func(s Sysctl) string { return strconv.FormatUint(s.AIOMaxNr, 10) }),
					"mqueue": procDir(func() map[string]*fs.Node {
						m := map[string]*fs.Node{}
						for _, name := range ipc.MQSettings() {
							m[name] = fs.NewSetting(func() []byte { return []byte(ipc.MQSetting(name) + "\n") },
								func(b []byte) error { return ipc.MQSet(name, string(b)) })
						}
						return m
					}),
					"inotify":  notifyLimitsDir(tree.InotifyLimits()),
					"fanotify": notifyLimitsDir(tree.FanotifyLimits()),
				}
			}),
		}
	})
}

// notifyLimitsDir is a notification family's limits, root's to set.
func notifyLimitsDir(limits *fs.NotifyLimits) *fs.Node {
	return procDir(func() map[string]*fs.Node {
		m := map[string]*fs.Node{}
		for _, name := range limits.Names() {
			m[name] = fs.NewSetting(func() []byte { return []byte(limits.Setting(name) + "\n") },
				func(b []byte) error { return limits.Set(name, b) })
		}
		return m
	})
}

// setUTSName stores what root wrote to a UTS name's file as Linux's
// proc_dostring does: up to the first newline, cut to 64 bytes
// (__NEW_UTS_LEN).
func setUTSName(set func(string), b []byte) error {
	if i := bytes.IndexAny(b, "\n\x00"); i >= 0 {
		b = b[:i]
	}
	set(string(b[:min(len(b), 64)]))
	return nil
}

// sysRoot is a sysfs instance's root: the CPU list.
func sysRoot(k Kernel) *fs.Node {
	online := procFile(func() []byte { return []byte(cpuRange(k) + "\n") })
	online.Dev = fs.DevSysfs
	cpu := sysDir(map[string]*fs.Node{"online": online, "possible": online, "present": online})
	return sysDir(map[string]*fs.Node{
		"devices": sysDir(map[string]*fs.Node{"system": sysDir(map[string]*fs.Node{"cpu": cpu})}),
		"kernel":  sysDir(map[string]*fs.Node{"mm": sysDir(map[string]*fs.Node{"hugepages": hugepagesDir(k.HugePools())})}),
	})
}

func cpuRange(k Kernel) string {
	if k.CPUs() == 1 {
		return "0"
	}
	return fmt.Sprintf("0-%d", k.CPUs()-1)
}

// procPID is /proc/PID.
func procPID(p Process) *fs.Node {
	d := procDir(func() map[string]*fs.Node {
		exe, cwd, root := p.Paths()
		return map[string]*fs.Node{
			"exe":            procLink(exe),
			"cwd":            procLink(cwd),
			"root":           procLink(root),
			"cmdline":        procFile(func() []byte { return cmdline(p) }),
			"comm":           procFile(func() []byte { return []byte(comm(p, p.PID()) + "\n") }),
			"stat":           procFile(func() []byte { return pidStat(p, p.PID(), state(p)) }),
			"status":         procFile(func() []byte { return pidStatus(p, p.PID(), state(p)) }),
			"task":           procDir(func() map[string]*fs.Node { return taskDirs(p) }),
			"maps":           mapsFile(p),
			"smaps":          procFile(func() []byte { return smaps(p) }),
			"mounts":         procFile(func() []byte { return mounts(p.Root(), p.Mounts()) }),
			"mountinfo":      procFile(func() []byte { return mountinfo(p.Root(), p.Mounts()) }),
			"fd":             procDir(func() map[string]*fs.Node { return fdLinks(p) }),
			"fdinfo":         procDir(func() map[string]*fs.Node { return fdInfos(p) }),
			"ns":             procDir(func() map[string]*fs.Node { return nsLinks(p) }),
			"map_files":      owned(p, procDir(func() map[string]*fs.Node { return mapFiles(p) })),
			"auxv":           ownerOnly(p, procFile(p.Auxv)),
			"timens_offsets": owned(p, fs.NewSettingFor(func(any) []byte { return p.TimensOffsets() }, p.SetTimensOffsets)),
			"timers":         procFile(func() []byte { return timers(p) }),
			"pagemap":        owned(p, fs.NewReadAt(func(b []byte, off int64) (int, error) { return pagemap(p, b, off) })),
			"coredump_filter": owned(p, fs.NewSetting(func() []byte { return fmt.Appendf(nil, "%08x\n", p.CoredumpFilter()) },
				func(b []byte) error {
					v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 0, 32)
					if err != nil {
						return unix.EINVAL
					}
					p.SetCoredumpFilter(uint32(v))
					return nil
				})),
		}
	})
	ids := p.IDs()
	d.UID, d.GID = ids.UID, ids.GID
	d.Bound = PIDDir{PID: p.PID(), Start: p.Start()}
	return d
}

// nsLinks are /proc/PID/ns's links, each to its namespace's file: a
// file of no contents, whose inode number is the namespace's. A link
// "time_for_children" names a namespace of kind time.
func nsLinks(p Process) map[string]*fs.Node {
	links := map[string]*fs.Node{}
	for _, ns := range p.Namespaces() {
		kind, _ := strings.CutSuffix(ns.Name, "_for_children")
		links[ns.Name] = owned(p, fs.NewObjectLink(NamespaceName(kind, ns.Ino), NamespaceFile(ns.Ino, ns.Object)))
	}
	return links
}

// NamespaceFile is the file a /proc/PID/ns link leads to, bound to the
// namespace (which its open descriptions keep, fs.OpenCounter).
func NamespaceFile(ino uint64, object any) *fs.Node {
	file := procFile(func() []byte { return nil })
	file.Ino, file.Dev, file.Bound = ino, fs.DevNsfs, object
	return file
}

// NamespaceName is what a namespace's link reads, "uts:[4026531838]".
func NamespaceName(kind string, ino uint64) string { return fmt.Sprintf("%s:[%d]", kind, ino) }

// pagemapEntry is the size of one page's entry in /proc/PID/pagemap.
const pagemapEntry = 8

// pagemap reads /proc/PID/pagemap at off into b: an entry per page of
// the user address space, at 8 bytes per page number; both must be
// multiples of an entry (EINVAL), and the file ends with the space.
func pagemap(p Process, b []byte, off int64) (int, error) {
	if off%pagemapEntry != 0 || len(b)%pagemapEntry != 0 {
		return 0, unix.EINVAL
	}
	first := uint64(off) / pagemapEntry
	last := min(first+uint64(len(b))/pagemapEntry, uint64(mm.MaxUserVA)/mm.PageSize)
	if first >= last {
		return 0, nil
	}
	for i, e := range p.Pagemap(uintptr(first*mm.PageSize), int(last-first)) {
		binary.LittleEndian.PutUint64(b[i*pagemapEntry:], e)
	}
	return int(last-first) * pagemapEntry, nil
}

// ownerOnly is owned with only the owner's read permission.
func ownerOnly(p Process, n *fs.Node) *fs.Node {
	n.Mode = 0o400
	return owned(p, n)
}

// owned gives n, a file of /proc/PID, the process's owner, who may write
// it.
func owned(p Process, n *fs.Node) *fs.Node {
	ids := p.IDs()
	n.UID, n.GID = ids.UID, ids.GID
	return n
}

// PIDDir is what a /proc/PID directory's node is bound to: the process,
// which pidfd_send_signal takes an open /proc/PID for, by its pid and
// when it was made, so that one that reuses the pid is not taken for it.
type PIDDir struct {
	PID   int
	Start time.Duration
}

func cmdline(p Process) []byte {
	var b bytes.Buffer
	for _, a := range p.Cmdline() {
		b.WriteString(a)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// comm is a thread's name (id is its tid; the process's is its main
// thread's): what prctl(PR_SET_NAME) gave it, else its executable's base
// name, at most 15 bytes.
func comm(p Process, id int) string {
	for _, t := range p.Tasks() {
		if t.TID == id && t.Name != "" {
			return t.Name
		}
	}
	exe, _, _ := p.Paths()
	name := exe[strings.LastIndexByte(exe, '/')+1:]
	return name[:min(len(name), 15)]
}

// state is the one-letter state ps shows of a process: Z once exited, and
// as on Linux its main thread's state otherwise, Z when that thread ended
// first (pthread_exit) while others run.
func state(p Process) string {
	if p.Exited() {
		return "Z"
	}
	for _, t := range p.Tasks() {
		if t.TID == p.PID() {
			return taskState(t)
		}
	}
	return "Z"
}

// taskState is a thread's letter: S while it waits in a blocking call
// (a futex, a read, a sleep), R otherwise.
func taskState(t Task) string {
	if t.Sleeping {
		return "S"
	}
	return "R"
}

// taskDirs is /proc/PID/task: a directory per thread with the process's
// stat and status as that thread shows them (its id and state).
func taskDirs(p Process) map[string]*fs.Node {
	m := map[string]*fs.Node{}
	for _, t := range p.Tasks() {
		tid := t.TID
		threadState := func() string {
			for _, t := range p.Tasks() {
				if t.TID == tid {
					return taskState(t)
				}
			}
			return "Z" // ended since the directory was listed
		}
		d := procDir(func() map[string]*fs.Node {
			return map[string]*fs.Node{
				"stat":   procFile(func() []byte { return pidStat(p, tid, threadState()) }),
				"status": procFile(func() []byte { return pidStatus(p, tid, threadState()) }),
				"comm":   procFile(func() []byte { return []byte(comm(p, tid) + "\n") }),
			}
		})
		ids := p.IDs()
		d.UID, d.GID = ids.UID, ids.GID
		m[strconv.Itoa(tid)] = d
	}
	return m
}

// mapped is the process's virtual memory size in pages: its mappings.
func mapped(p Process) uint64 {
	pages := uint64(0)
	for _, v := range p.Mappings() {
		pages += uint64(v.End-v.Start) / mm.PageSize
	}
	return pages
}

// pidStat is /proc/PID/stat, or a thread's (id is its tid): 52 fields,
// those the kernel does not track 0; CPU times are the process's.
func pidStat(p Process, id int, state string) []byte {
	ticks := func(d time.Duration) string { return strconv.FormatInt(int64(d/(time.Second/100)), 10) }
	self, children := p.Usage()
	f := []string{strconv.Itoa(id), "(" + comm(p, id) + ")", state, strconv.Itoa(p.ParentPID()),
		strconv.Itoa(p.PGID()), strconv.Itoa(p.SID()), "0", "-1", "4194560",
		strconv.FormatUint(self.MinorFaults, 10), strconv.FormatUint(children.MinorFaults, 10), "0", "0", // minflt, cminflt, majflt, cmajflt
		ticks(self.User), ticks(self.System), ticks(children.User), ticks(children.System),
		"20", "0", strconv.Itoa(max(p.Threads(), 1)), "0", ticks(p.Start()),
		strconv.FormatUint(mapped(p)*mm.PageSize, 10), strconv.Itoa(p.ResidentPages())}
	for len(f) < 52 {
		f = append(f, "0")
	}
	return []byte(strings.Join(f, " ") + "\n")
}

// pidStatus is /proc/PID/status, or a thread's (id is its tid).
func pidStatus(p Process, id int, state string) []byte {
	var b bytes.Buffer
	name := map[string]string{"R": "R (running)", "S": "S (sleeping)", "Z": "Z (zombie)"}[state]
	ids := p.IDs()
	fmt.Fprintf(&b, "Name:\t%s\nUmask:\t%04o\nState:\t%s\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n",
		comm(p, id), ids.Umask, name, p.PID(), id, p.ParentPID())
	fmt.Fprintf(&b, "Uid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\n", ids.UID, ids.EUID, ids.SUID, ids.FSUID, ids.GID, ids.EGID, ids.SGID, ids.FSGID)
	fmt.Fprintf(&b, "FDSize:\t%d\nVmSize:\t%d kB\nVmLck:\t%d kB\nVmRSS:\t%d kB\nThreads:\t%d\n", p.Files().Limit(),
		mapped(p)*mm.PageSize>>10, lockedKB(p), p.ResidentPages()*mm.PageSize>>10, max(p.Threads(), 1))
	return b.Bytes()
}

func maps(p Process) []byte {
	var b bytes.Buffer
	for _, v := range p.Mappings() {
		b.WriteString(mapsLine(v))
	}
	return b.Bytes()
}

// mapFiles are /proc/PID/map_files's links, one per mapping of a file,
// named by its range: each reads as the file's path and leads to the
// file itself, as Linux's (checkpoint/restore reopens unlinked files
// through them).
func mapFiles(p Process) map[string]*fs.Node {
	links := map[string]*fs.Node{}
	for _, v := range p.Mappings() {
		if v.File != nil {
			links[fmt.Sprintf("%x-%x", v.Start, v.End)] = owned(p, fs.NewObjectLink(v.Name, v.File))
		}
	}
	return links
}

// mapsFile is /proc/PID/maps, bound to the process (MapsOf), whose
// mappings its PROCMAP_QUERY ioctl looks up.
func mapsFile(p Process) *fs.Node {
	n := procFile(func() []byte { return maps(p) })
	n.Bound = MapsOf{p}
	return n
}

// MapsOf is what a /proc/PID/maps node is bound to: the process whose
// mappings it shows.
type MapsOf struct{ Process }

// mapsLine is a mapping's line of /proc/PID/maps: 's' for shared memory,
// a file's offset, device and inode, and its name.
func mapsLine(v Mapping) string {
	perm := []byte("---p")
	if v.Perm&mm.PTERead != 0 {
		perm[0] = 'r'
	}
	if v.Perm&mm.PTEWrite != 0 {
		perm[1] = 'w'
	}
	if v.Perm&mm.PTEExec != 0 {
		perm[2] = 'x'
	}
	if v.IsShared() {
		perm[3] = 's'
	}
	var off, dev, ino uint64
	if v.File != nil {
		off, dev, ino = uint64(v.Offset), v.Dev, v.Ino
	}
	line := fmt.Sprintf("%08x-%08x %s %08x %02x:%02x %d ", v.Start, v.End, perm, off,
		dev>>8&0xfff, dev&0xff|dev>>12&^0xff, ino)
	if v.Name != "" {
		// Linux pads the fields to 72 columns before a name (seq_pad).
		line = fmt.Sprintf("%-72s %s", line, v.Name)
	}
	return line + "\n"
}

// smaps is /proc/PID/smaps: each mapping's line, then its sizes in kB
// (the fields programs read: Size, Rss, Locked; those the kernel does
// not track 0).
func smaps(p Process) []byte {
	var b bytes.Buffer
	for _, v := range p.MappingsResident() {
		b.WriteString(mapsLine(v))
		size, rss := (v.End-v.Start)>>10, uint64(v.Resident)*mm.PageSize>>10
		locked := uint64(0)
		if v.Locked {
			locked = rss
		}
		fmt.Fprintf(&b, "Size:%17d kB\nKernelPageSize:%7d kB\nMMUPageSize:%10d kB\nRss:%18d kB\nPss:%18d kB\n",
			size, 4, 4, rss, rss)
		for _, f := range []string{"Pss_Dirty", "Shared_Clean", "Shared_Dirty", "Private_Clean"} {
			fmt.Fprintf(&b, "%s:%*d kB\n", f, 21-len(f), 0)
		}
		fmt.Fprintf(&b, "Private_Dirty:%8d kB\nReferenced:%11d kB\nAnonymous:%12d kB\n", rss, rss, rss)
		for _, f := range []string{"KSM", "LazyFree", "AnonHugePages", "ShmemPmdMapped", "FilePmdMapped",
			"Shared_Hugetlb", "Private_Hugetlb", "Swap", "SwapPss"} {
			fmt.Fprintf(&b, "%s:%*d kB\n", f, 21-len(f), 0)
		}
		fmt.Fprintf(&b, "Locked:%15d kB\n", locked)
	}
	return b.Bytes()
}

// fdInfos is /proc/PID/fdinfo: a file per descriptor with its position,
// flags (close-on-exec as O_CLOEXEC), inode and, for an inotify
// instance, its watches.
func fdInfos(p Process) map[string]*fs.Node {
	m := map[string]*fs.Node{}
	files := p.Files()
	for _, fd := range files.Numbers() {
		m[strconv.Itoa(fd)] = procFile(func() []byte {
			d, err := files.Get(fd)
			if err != nil {
				return nil
			}
			defer d.DecRef()
			flags := d.Flags()
			if cloexec, _ := files.CloExec(fd); cloexec {
				flags |= unix.O_CLOEXEC
			}
			pos, _ := d.Seek(0, io.SeekCurrent)
			var b bytes.Buffer
			fmt.Fprintf(&b, "pos:\t%d\nflags:\t0%o\nmnt_id:\t%d\nino:\t%d\n", max(pos, 0), flags, 1, d.File.Stat().Ino)
			if in, ok := d.File.(*fs.Inotify); ok {
				for _, w := range in.Watches() {
					b.WriteString(w + "\n")
				}
			}
			return b.Bytes()
		})
	}
	return m
}

// lockedKB is the size of the process's locked mappings (VmLck).
func lockedKB(p Process) uint64 {
	n := uint64(0)
	for _, v := range p.Mappings() {
		if v.Locked {
			n += uint64(v.End-v.Start) >> 10
		}
	}
	return n
}

// fdLinks is /proc/PID/fd: a link per descriptor, named as Linux names
// what it refers to.
func fdLinks(p Process) map[string]*fs.Node {
	m := map[string]*fs.Node{}
	files := p.Files()
	for _, fd := range files.Numbers() {
		d, err := files.Get(fd)
		if err != nil {
			continue
		}
		m[strconv.Itoa(fd)] = procLink(describe(d.File))
		d.DecRef()
	}
	return m
}

// describe is what readlink of /proc/PID/fd/N gives.
func describe(f fs.File) string {
	if pf, ok := f.(interface{ Path() string }); ok {
		return pf.Path() // files and devices opened by path
	}
	st := f.Stat()
	switch st.Mode & 0o170000 {
	case 0o010000:
		return fmt.Sprintf("pipe:[%d]", st.Ino)
	case 0o140000:
		return fmt.Sprintf("socket:[%d]", st.Ino)
	case 0o020000:
		return "/dev/console"
	}
	return fmt.Sprintf("anon_inode:[%d]", st.Ino)
}

func cpuinfo(k Kernel) []byte {
	var b bytes.Buffer
	for i := 0; i < k.CPUs(); i++ {
		fmt.Fprintf(&b, "processor\t: %d\nhart\t\t: %d\nisa\t\t: rv64imafdc\nmmu\t\t: sv39\n\n", i, i)
	}
	return b.Bytes()
}

// meminfo is /proc/meminfo. The kernel heap's garbage and free pages (what
// closed files, pipes and sockets held) are its reclaimable slab: part of
// MemAvailable, as Linux counts SReclaimable, for a user allocation that
// finds no frame reclaims them before the OOM killer runs.
func meminfo(k Kernel) []byte {
	inUse, total := k.MemoryStats()
	free := (total - inUse) >> 10
	reclaimable := min(mm.ReclaimableHeap(), inUse) >> 10
	if total == 0 {
		reclaimable = 0 // no machine (host tests)
	}
	return []byte(fmt.Sprintf("MemTotal:       %8d kB\nMemFree:        %8d kB\nMemAvailable:   %8d kB\n"+
		"Buffers:               0 kB\nCached:                0 kB\nSwapCached:            0 kB\n"+
		"SwapTotal:             0 kB\nSwapFree:              0 kB\nShmem:                 0 kB\n"+
		"KReclaimable:   %8d kB\nSlab:           %8d kB\nSReclaimable:   %8d kB\nSUnreclaim:            0 kB\n"+
		"Charged:        %8d kB\nChargeLimit:    %8d kB\n%s",
		total>>10, free, free+reclaimable, reclaimable, reclaimable, reclaimable, mm.Charged.Total()>>10, mm.Charged.Limit()>>10,
		hugeMeminfo(k.HugePools())))
}

func procStat(k Kernel) []byte {
	up := k.Uptime() / (time.Second / 100)
	var b bytes.Buffer
	fmt.Fprintf(&b, "cpu  0 0 0 %d 0 0 0 0 0 0\n", up)
	for i := 0; i < k.CPUs(); i++ {
		fmt.Fprintf(&b, "cpu%d 0 0 0 %d 0 0 0 0 0 0\n", i, up)
	}
	fmt.Fprintf(&b, "intr 0\nctxt 0\nbtime %d\nprocesses %d\nprocs_running 1\nprocs_blocked 0\n",
		time.Now().Add(-k.Uptime()).Unix(), k.LastPID())
	return b.Bytes()
}

// uptime is /proc/uptime as its viewer sees it: CLOCK_BOOTTIME in its
// time namespace, then the idle time (here the same), in seconds cut to
// hundredths as Linux prints them.
func uptime(k Kernel, viewer any) []byte {
	up := k.Uptime()
	if v, ok := viewer.(interface{ BoottimeOffset() time.Duration }); ok {
		up += v.BoottimeOffset()
	}
	cs := up / (time.Second / 100)
	return fmt.Appendf(nil, "%d.%02d %d.%02d\n", cs/100, cs%100, cs/100, cs%100)
}

// viewerMounts is the mount namespace of the task that opens a file, nil
// (the initial one) for the kernel.
func viewerMounts(viewer any) *fs.MountNS {
	if v, ok := viewer.(interface{ MountNS() *fs.MountNS }); ok {
		return v.MountNS()
	}
	return nil
}

// mounts is /proc/mounts: source, target, type and options of each mount
// of ns.
func mounts(tree *fs.Tree, ns *fs.MountNS) []byte {
	var b bytes.Buffer
	for _, m := range tree.Mounts(ns) {
		fmt.Fprintf(&b, "%s %s %s %s 0 0\n", m.Source, m.Target, m.Type, joinOptions(m.MountOptions(), m.Options))
	}
	return b.Bytes()
}

// mountinfo is /proc/PID/mountinfo: ids, the device, the mount's own
// options, then the file system's, of each mount of ns.
func mountinfo(tree *fs.Tree, ns *fs.MountNS) []byte {
	var b bytes.Buffer
	for _, m := range tree.Mounts(ns) {
		fmt.Fprintf(&b, "%d %d 0:%d %s %s %s - %s %s %s\n", m.ID, m.ParentID, m.Dev, m.RootPath, m.Target, m.MountOptions(),
			m.Type, m.Source, m.SuperOptions())
	}
	return b.Bytes()
}

func joinOptions(a, b string) string {
	if b == "" {
		return a
	}
	return a + "," + b
}

// timers is /proc/PID/timers, as Linux's show_timer writes it.
func timers(p Process) []byte {
	var b []byte
	for _, t := range p.Timers() {
		how, whom := [...]string{"signal", "none", "thread"}[t.Notify&^4], "pid"
		if t.Notify&4 != 0 {
			whom = "tid"
		}
		b = fmt.Appendf(b, "ID: %d\nsignal: %d/%016x\nnotify: %s/%s.%d\nClockID: %d\n",
			t.ID, t.Signo, t.Value, how, whom, t.Target, t.Clock)
	}
	return b
}
