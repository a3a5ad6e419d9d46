package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/perf"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.PerfEventOpen, sysPerfEventOpen)
}

// perf_event_open's flags and the ioctl requests of an event
// (linux/perf_event.h).
const (
	perfFlagFDNoGroup = 1 << 0
	perfFlagFDOutput  = 1 << 1
	perfFlagPIDCgroup = 1 << 2
	perfFlagFDCloexec = 1 << 3
	perfFlagAll       = perfFlagFDNoGroup | perfFlagFDOutput | perfFlagPIDCgroup | perfFlagFDCloexec

	perfIocEnable           = 0x2400
	perfIocDisable          = 0x2401
	perfIocRefresh          = 0x2402
	perfIocReset            = 0x2403
	perfIocPeriod           = 0x40082404
	perfIocSetOutput        = 0x2405
	perfIocSetFilter        = 0x40082406
	perfIocID               = 0x80082407
	perfIocSetBPF           = 0x40042408
	perfIocPauseOutput      = 0x40042409
	perfIocQueryBPF         = 0xc008240a
	perfIocModifyAttributes = 0x4008240b
	perfIocFlagGroup        = 1
)

// sysPerfEventOpen implements perf_event_open(2) for software events,
// with Linux's checks in Linux's order: the flags, the attribute (its
// size, then its form), the caller's access (perf_event_paranoid), the
// cgroup mode's arguments, the group descriptor, the task; then what
// perf.Open checks.
func sysPerfEventOpen(t *kernel.Task, a Args) (uint64, error) {
	pid, cpu, groupFD, flags := int(int32(a[1])), int(int32(a[2])), int(int32(a[3])), a[4]
	if flags&^perfFlagAll != 0 {
		return 0, unix.EINVAL
	}
	attr, err := copyInPerfAttr(t, a[0])
	if err != nil {
		return 0, err
	}
	k := t.Kernel()
	capable := t.PerfmonCapable()
	if err := k.Perf().CheckAccess(&attr, capable); err != nil {
		return 0, err
	}
	cgroup := flags&perfFlagPIDCgroup != 0
	if cgroup && (pid == -1 || cpu == -1) {
		return 0, unix.EINVAL
	}
	r := perf.Request{Attr: attr, CPU: cpu, CPUs: k.CPUs(), Owner: t.PerfEvents(), Capable: capable}
	if groupFD != -1 {
		ev, d, err := perfEventOf(t, groupFD)
		if err != nil {
			return 0, err
		}
		defer d.DecRef() // the group's event stays open while this one joins it
		r.Group, r.Output = ev, flags&perfFlagFDOutput != 0
		if flags&perfFlagFDNoGroup != 0 {
			r.Group = nil
		}
	}
	switch {
	case cgroup:
		// pid is a cgroup directory's descriptor: there are none.
		return 0, unix.EBADF
	case pid != -1:
		target := t
		if pid != 0 {
			if target = t.FindTask(pid); target == nil || target.Proc.Gone() {
				return 0, unix.ESRCH
			}
		}
		r.Task, r.Counters = target.PerfEvents(), target.PerfCounters()
		r.MayTrace = capable || t.MayPtrace(target.Proc)
	case cpu >= 0 && cpu < k.CPUs():
		r.Counters = k.HartPerfCounters(cpu)
	}
	ev, err := k.Perf().Open(r)
	if err != nil {
		return 0, err
	}
	fd, err := t.Proc.Files.Open(ev, unix.O_RDWR, flags&perfFlagFDCloexec != 0)
	if err != nil {
		ev.Close()
		return 0, err
	}
	return uint64(fd), nil
}

// copyInPerfAttr reads a struct perf_event_attr as Linux's perf_copy_attr
// does: size 0 is the first version's; a size below it or above a page,
// or a larger structure than Linux 6.12's whose extra bytes are not zero,
// is E2BIG, and the size Linux knows is written back for the caller to
// retry with. Then CheckAttr's EINVALs.
func copyInPerfAttr(t *kernel.Task, addr uint64) (linux.PerfEventAttr, error) {
	var attr linux.PerfEventAttr
	var size uint32
	if err := copyInStruct(t, addr+4, &size); err != nil {
		return attr, err
	}
	if size == 0 {
		size = linux.PerfAttrSizeVer0
	}
	tooBig := func() (linux.PerfEventAttr, error) {
		copyOutStruct(t, addr+4, uint32(linux.PerfAttrSize))
		return linux.PerfEventAttr{}, unix.E2BIG
	}
	if size < linux.PerfAttrSizeVer0 || size > mm.PageSize {
		return tooBig()
	}
	if err := copyIn(t, addr, linux.AsBytes(&attr)[:min(size, linux.PerfAttrSize)]); err != nil {
		return attr, err
	}
	if size > linux.PerfAttrSize {
		extra := make([]byte, size-linux.PerfAttrSize)
		if err := copyIn(t, addr+linux.PerfAttrSize, extra); err != nil {
			return attr, err
		}
		for _, b := range extra {
			if b != 0 {
				return tooBig()
			}
		}
	}
	attr.Size = size
	return attr, perf.CheckAttr(&attr)
}

// perfEventOf returns the event a descriptor holds, and the description
// (held until DecRef): EBADF for a descriptor that is not an event.
func perfEventOf(t *kernel.Task, fd int) (*perf.Event, *fs.Description, error) {
	d, err := t.Proc.Files.Get(fd)
	if err != nil {
		return nil, nil, err
	}
	ev, ok := d.File.(*perf.Event)
	if !ok || d.Flags()&unix.O_PATH != 0 {
		d.DecRef()
		return nil, nil, unix.EBADF
	}
	return ev, d, nil
}

// perfEventIoctl serves the ioctls of an event. What concerns sampling,
// ring buffers, filters and BPF programs answers as Linux does for a
// counting software event that has none of them.
func perfEventIoctl(t *kernel.Task, ev *perf.Event, req, arg uint64) (uint64, error) {
	group := arg&perfIocFlagGroup != 0
	switch req {
	case perfIocEnable:
		ev.Enable(group)
	case perfIocDisable:
		ev.Disable(group)
	case perfIocReset:
		ev.Reset(group)
	case perfIocID:
		return 0, copyOutStruct(t, arg, ev.ID())
	case perfIocRefresh, perfIocPauseOutput, perfIocQueryBPF:
		return 0, unix.EINVAL // no sampling, no ring buffer, no tracepoint
	case perfIocPeriod:
		var period uint64
		if err := copyInStruct(t, arg, &period); err != nil {
			return 0, err
		}
		return 0, unix.EINVAL // not a sampling event
	case perfIocSetOutput:
		if arg == ^uint64(0) {
			return 0, nil // no output to redirect: nothing to undo
		}
		_, d, err := perfEventOf(t, int(int32(arg)))
		if err != nil {
			return 0, err
		}
		d.DecRef()
		return 0, unix.EINVAL // neither has a ring buffer
	case perfIocSetFilter:
		if _, err := copyInString(t, arg); err != nil {
			if err == unix.ENAMETOOLONG {
				err = unix.EINVAL
			}
			return 0, err
		}
		return 0, unix.EINVAL // only tracepoints and address filters take one
	case perfIocSetBPF:
		d, err := t.Proc.Files.Get(int(int32(arg)))
		if err != nil {
			return 0, err
		}
		d.DecRef()
		return 0, unix.EINVAL // not a BPF program
	case perfIocModifyAttributes:
		attr, err := copyInPerfAttr(t, arg)
		if err != nil {
			return 0, err
		}
		return 0, ev.Modify(&attr)
	default:
		return 0, unix.ENOTTY
	}
	return 0, nil
}
