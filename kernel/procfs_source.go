package kernel

import (
	"encoding/binary"
	"golang.org/x/sys/unix"
	"strings"

	"bytes"
	"slices"
	"time"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/fs/procfs"
	"github.com/jiege-go/jiege/kernel/aio"
	"github.com/jiege-go/jiege/kernel/loader"
	"github.com/jiege-go/jiege/mm"
)

// ProcfsSource is a kernel as procfs shows it (procfs.Kernel): the
// process table, the machine facts and the network stack.
type ProcfsSource struct{ k *Kernel }

// Procfs returns the kernel as procfs shows it.
func (k *Kernel) Procfs() ProcfsSource { return ProcfsSource{k} }

// Processes returns every process, by pid.
func (s ProcfsSource) Processes() []procfs.Process {
	ps := s.k.Processes()
	views := make([]procfs.Process, len(ps))
	for i, p := range ps {
		views[i] = procfsProcess{p}
	}
	return views
}

func (s ProcfsSource) LastPID() int64                     { return s.k.lastPID.Load() }
func (s ProcfsSource) SetLastPID(id int) error            { return s.k.SetLastPID(id) }
func (s ProcfsSource) Uptime() time.Duration              { return s.k.Uptime() }
func (s ProcfsSource) CPUs() int                          { return s.k.cpus }
func (s ProcfsSource) MemoryStats() (inUse, total uint64) { return s.k.memoryStats() }
func (s ProcfsSource) Network() procfs.Network            { return s.k.Network }

// SysVIPC is what /proc/sysvipc shows, and IPC's settings in /proc/sys.
func (s ProcfsSource) SysVIPC() procfs.SysVIPC { return s.k.ipc }

func (s ProcfsSource) NrOpen() int           { return s.k.NrOpen() }
func (s ProcfsSource) SetNrOpen(n int) error { return s.k.SetNrOpen(n) }

// KeyLimits are the key quotas of /proc/sys/kernel/keys.
func (s ProcfsSource) KeyLimits() procfs.KeyLimits { return s.k.keys }

// Sysctl is what /proc/sys shows.
func (s ProcfsSource) Sysctl() procfs.Sysctl {
	host, domain := s.k.UTSNames()
	return procfs.Sysctl{Hostname: host, Domainname: domain, OSRelease: Release, Version: Version, PIDMax: PIDMax, ThreadsMax: maxThreads,
		AIONr: s.k.aioLimit.Nr(), AIOMaxNr: aio.MaxNr, Cmdline: s.k.CommandLine}
}

func (s ProcfsSource) CorePattern() string               { return s.k.CorePattern() }
func (s ProcfsSource) SetCorePattern(p string)           { s.k.SetCorePattern(p) }
func (s ProcfsSource) Pipes() *fs.PipeLimits             { return s.k.pipes }
func (s ProcfsSource) SetHostname(n string)              { s.k.SetHostname(n) }
func (s ProcfsSource) SetDomainname(n string)            { s.k.SetDomainname(n) }
func (s ProcfsSource) Printk() string                    { return s.k.Printk() }
func (s ProcfsSource) SetPrintk(b []byte) error          { return s.k.SetPrintk(b) }
func (s ProcfsSource) DmesgRestrict() string             { return s.k.DmesgRestrict() }
func (s ProcfsSource) SetDmesgRestrict(b []byte) error   { return s.k.SetDmesgRestrict(b) }
func (s ProcfsSource) UnprivilegedUserfaultfd() string   { return s.k.UnprivilegedUserfaultfd() }
func (s ProcfsSource) PerfSettings() procfs.PerfSettings { return s.k.perf }
func (s ProcfsSource) HugePools() []*mm.HugePool         { return s.k.HugePools() }
func (s ProcfsSource) SetUnprivilegedUserfaultfd(b []byte) error {
	return s.k.SetUnprivilegedUserfaultfd(b)
}
func (s ProcfsSource) UnprivilegedBPFDisabled() string { return s.k.UnprivilegedBPFDisabled() }
func (s ProcfsSource) SetUnprivilegedBPFDisabled(b []byte) error {
	return s.k.SetUnprivilegedBPFDisabled(b)
}

// procfsProcess is a process as /proc/PID reads it (procfs.Process).
type procfsProcess struct{ p *Process }

func (v procfsProcess) PID() int       { return v.p.PID }
func (v procfsProcess) ParentPID() int { return v.p.ParentPID() }
func (v procfsProcess) PGID() int      { return v.p.PGID() }
func (v procfsProcess) SID() int       { return v.p.SID() }

func (v procfsProcess) Paths() (exe, cwd, root string) {
	v.p.Lock()
	defer v.p.Unlock()
	return v.p.Exe, v.p.Cwd(), v.p.RootDir()
}

func (v procfsProcess) Cmdline() []string {
	v.p.Lock()
	defer v.p.Unlock()
	return v.p.Cmdline
}

func (v procfsProcess) IDs() procfs.IDs {
	p := v.p
	return procfs.IDs{UID: p.UID, EUID: p.EUID, SUID: p.SUID, FSUID: p.FSUID, GID: p.GID, EGID: p.EGID, SGID: p.SGID, FSGID: p.FSGID, Umask: p.Umask()}
}

func (v procfsProcess) Exited() bool {
	select {
	case <-v.p.exited:
		return true
	default:
		return false
	}
}

// Tasks lists the process's threads, by thread id.
func (v procfsProcess) Tasks() []procfs.Task {
	ts := tasksOf(v.p)
	views := make([]procfs.Task, len(ts))
	for i, t := range ts {
		views[i] = procfs.Task{TID: t.TID, Sleeping: t.sleeping.Load()}
		if name := t.Settings.Name.Load(); name != nil {
			views[i].Name = *name
		}
	}
	slices.SortFunc(views, func(a, b procfs.Task) int { return a.TID - b.TID })
	return views
}

func (v procfsProcess) Usage() (self, children procfs.Usage) {
	return procfs.Usage(v.p.Usage()), procfs.Usage(v.p.ChildUsage())
}

func (v procfsProcess) Threads() int         { return v.p.threads }
func (v procfsProcess) Start() time.Duration { return v.p.start }
func (v procfsProcess) ResidentPages() int   { return residentPages(v.p) }
func (v procfsProcess) Files() *fs.FDTable   { return v.p.Files }
func (v procfsProcess) Root() *fs.Tree       { return v.p.Root }
func (v procfsProcess) Mounts() *fs.MountNS  { return v.p.MountNS() }

// Mappings names the stack's mapping and the vDSO's two, as Linux does.
func (v procfsProcess) Mappings() []procfs.Mapping {
	vmas := v.p.vmas()
	ms := make([]procfs.Mapping, len(vmas))
	for i, vma := range vmas {
		ms[i].VMA = vma
		switch {
		case vma.End == mm.UserStackTop:
			ms[i].Name = "[stack]"
		case vma.Start == loader.VvarAddr && vma.Shared != nil:
			ms[i].Name = "[vvar]"
		case vma.Start == loader.VDSOAddr && vma.Perm == mm.PTERead|mm.PTEExec:
			ms[i].Name = "[vdso]"
		case vma.Path != "":
			ms[i].Name, ms[i].File, ms[i].Dev, ms[i].Ino = mappedFile(vma)
		}
	}
	return ms
}

// mappedFile is the name, device and inode of the file vma maps; an
// unlinked one's name ends " (deleted)", as Linux's d_path.
func mappedFile(vma mm.VMA) (name string, file *fs.Node, dev, ino uint64) {
	mem := vma.Cache
	if mem == nil {
		mem = vma.Shared
	}
	src, ok := mem.Source().(fs.MappedNode)
	if !ok {
		return vma.Path, nil, 0, 0
	}
	st := src.Stat()
	name = vma.Path
	if st.Nlink == 0 && !strings.HasSuffix(name, " (deleted)") {
		name += " (deleted)"
	}
	return name, src.Node(), st.Dev, st.Ino
}

// MappingsResident is Mappings with each mapping's resident pages.
func (v procfsProcess) MappingsResident() []procfs.Mapping {
	ms := v.Mappings()
	v.p.Lock()
	defer v.p.Unlock()
	for i := range ms {
		vec, err := v.p.AS.Resident(ms[i].Start, ms[i].End-ms[i].Start)
		if err != nil {
			continue // unmapped since
		}
		ms[i].Resident = bytes.Count(vec, []byte{1})
	}
	return ms
}

// Pagemap reads the process's page table under its address space's lock.
func (v procfsProcess) Pagemap(start uintptr, n int) []uint64 {
	v.p.Lock()
	defer v.p.Unlock()
	return v.p.AS.Pagemap(start, n)
}

// vmas returns the process's mappings, read under its address space's lock.
func (p *Process) vmas() []mm.VMA {
	p.Lock()
	defer p.Unlock()
	return p.AS.VMAs()
}

// Timers lists the process's POSIX timers by id.
func (v procfsProcess) CoredumpFilter() uint32 { return v.p.Settings.CoredumpFilter.Load() }

// SetCoredumpFilter keeps the filter's bits Linux keeps.
func (v procfsProcess) SetCoredumpFilter(f uint32) {
	v.p.Settings.CoredumpFilter.Store(f & mm.CoredumpFilterBits)
}

func (v procfsProcess) Timers() []procfs.Timer {
	p := v.p
	p.k.sigMu.Lock()
	defer p.k.sigMu.unlockUnchanged()
	ts := make([]procfs.Timer, 0, len(p.sig.timers.byID))
	for _, pt := range p.sig.timers.byID {
		target := p.PID
		if pt.target != nil {
			target = pt.target.TID
		}
		ts = append(ts, procfs.Timer{ID: pt.id, Signo: int32(pt.signo), Value: pt.value, Notify: pt.notify,
			Target: target, Clock: pt.clock})
	}
	slices.SortFunc(ts, func(a, b procfs.Timer) int { return int(a.ID - b.ID) })
	return ts
}

// Namespaces are the namespaces the process is in, by name:
// pid_for_children only once its namespace has had its init (before, it
// names nothing, as Linux's pidns_for_children_get).
func (v procfsProcess) Namespaces() []procfs.Namespace {
	s, pid, user := v.p.ns.Load(), v.p.pidNS().self, v.p.k.userNS
	ns := []procfs.Namespace{
		{Name: "ipc", Ino: s.ipc.Ino, Object: s.ipc},
		{Name: "mnt", Ino: s.mnt.Ino, Object: s.mnt},
		{Name: "pid", Ino: pid.Ino, Object: pid},
		{Name: "time", Ino: s.time.Ino, Object: s.time},
		{Name: "time_for_children", Ino: s.timeForChildren.Ino, Object: s.timeForChildren},
		{Name: "user", Ino: user.Ino, Object: user},
		{Name: "uts", Ino: s.uts.Ino, Object: s.uts},
	}
	if v.p.k.reaperOf(s.pidForChildren.pid) != nil {
		ns = append(ns, procfs.Namespace{Name: "pid_for_children", Ino: s.pidForChildren.Ino, Object: s.pidForChildren})
	}
	return ns
}

func (v procfsProcess) TimensOffsets() []byte { return v.p.TimensOffsets() }

// SetTimensOffsets takes a write to /proc/PID/timens_offsets by the task
// that opened it (EPERM for none).
func (v procfsProcess) SetTimensOffsets(viewer any, b []byte) error {
	t, ok := viewer.(*Task)
	if !ok {
		return unix.EPERM
	}
	return v.p.SetTimensOffsets(t.Proc, b)
}

// Auxv is the saved auxiliary vector's entries up to its AT_NULL, as
// Linux's auxv_read shows them.
func (v procfsProcess) Auxv() []byte {
	v.p.Lock()
	defer v.p.Unlock()
	auxv := v.p.AS.SavedAuxv
	for i := 0; i+16 <= len(auxv); i += 16 {
		if binary.LittleEndian.Uint64(auxv[i:]) == 0 {
			return append([]byte(nil), auxv[:i+16]...)
		}
	}
	return append([]byte(nil), auxv...)
}
