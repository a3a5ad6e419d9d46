package perf

import (
	"encoding/binary"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// Event types (perf_type_id) and PERF_TYPE_SOFTWARE's configs
// (perf_sw_ids).
const (
	TypeSoftware = 1

	SWCPUClock        = 0
	SWTaskClock       = 1
	SWPageFaults      = 2
	SWContextSwitches = 3
	SWCPUMigrations   = 4
	SWPageFaultsMin   = 5
	SWPageFaultsMaj   = 6
	SWAlignmentFaults = 7
	SWEmulationFaults = 8
	SWDummy           = 9
	SWBPFOutput       = 10
	SWCgroupSwitches  = 11
	swMax             = 12
)

// read_format's bits (perf_event_read_format).
const (
	FormatTotalTimeEnabled = 1 << 0
	FormatTotalTimeRunning = 1 << 1
	FormatID               = 1 << 2
	FormatGroup            = 1 << 3
	FormatLost             = 1 << 4
	formatMax              = 1 << 5
)

// sample_type's bits that the checks of an attribute look at
// (perf_event_sample_format).
const (
	sampleTID          = 1 << 1
	sampleRead         = 1 << 4
	sampleBranchStack  = 1 << 11
	sampleRegsUser     = 1 << 12
	sampleStackUser    = 1 << 13
	sampleWeight       = 1 << 14
	sampleRegsIntr     = 1 << 18
	samplePhysAddr     = 1 << 19
	sampleWeightStruct = 1 << 24
	sampleMax          = 1 << 25

	branchPLMAll  = 1<<0 | 1<<1 | 1<<2 // PERF_SAMPLE_BRANCH_USER, KERNEL, HV
	branchPerm    = 1<<1 | 1<<2        // KERNEL, HV: Linux's PERF_SAMPLE_BRANCH_PERM_PLM
	branchMax     = 1 << 20
	riscvRegsMask = 1<<32 - 1 // PERF_REG_RISCV_MAX registers
)

// maxReadSize is the most a group's read may return, Linux's
// perf_event_validate_size.
const maxReadSize = 16 << 10

// eventCharge is what an event costs the kernel-wide budget.
const eventCharge = 512

// counted is what an event's value counts.
type counted uint8

const (
	countsNothing counted = iota // an event that never happens here
	countsTime
	countsFaults
	countsSwitches
)

// Event is one perf event: the descriptor's file, or a copy of it in a
// child task (inherit). Its state is guarded by its Perf's mu.
type Event struct {
	p    *Perf
	attr linux.PerfEventAttr
	id   uint64
	ino  uint64
	what counted
	src  Counters
	task *TaskEvents // the task it counts; nil for a CPU-wide event
	cpu  int         // the hart of a CPU-wide event; -1 for a task's

	owner        *TaskEvents // who opened it, until that task exits
	enableOnExec bool

	leader   *Event   // its group's leader: itself when it leads
	siblings []*Event // a leader's other members, in the order they joined
	parent   *Event   // the descriptor's event a copy was inherited from
	children []*Event // a descriptor's live copies in other tasks

	enabled  bool // PERF_EVENT_IOC_ENABLE'd (or opened enabled)
	running  bool // counting now: enabled, its leader enabled, attached
	detached bool // its task exited (or exec'd with remove_on_exec)
	closed   bool

	count, time    uint64 // counted, and time spent counting, up to the last update
	base, timeBase uint64 // the counter and the clock at the last update
	childCount     uint64 // what copies counted before their tasks exited
	childTime      uint64
}

// Request is an event to open, checked by the system call (the
// attribute's form, the caller's access) up to what Open checks.
type Request struct {
	Attr     linux.PerfEventAttr
	Task     *TaskEvents // the task to count; nil: the hart CPU
	Counters Counters    // the task's or the hart's
	CPU      int         // -1: whichever hart the task runs on
	CPUs     int         // the harts there are
	Group    *Event      // the group to join; nil: lead a new one
	Output   bool        // PERF_FLAG_FD_OUTPUT with Group
	Owner    *TaskEvents // the caller
	Capable  bool        // CAP_PERFMON or CAP_SYS_ADMIN (perfmon_capable)
	MayTrace bool        // the caller may observe Task (ptrace's read check, or Capable)
}

// CheckAttr checks an attribute as Linux's perf_copy_attr does: EINVAL
// for reserved bits, unknown sample and read formats, and flags that
// contradict each other.
func CheckAttr(a *linux.PerfEventAttr) error {
	switch {
	case a.Flags&linux.PerfAttrReserved1 != 0, a.Reserved2 != 0, a.AuxAction&^(linux.PerfAuxStartPaused|linux.PerfAuxPauseResume) != 0,
		a.SampleType&^(sampleMax-1) != 0, a.ReadFormat&^(formatMax-1) != 0:
		return unix.EINVAL
	case a.SampleType&sampleBranchStack != 0 && (a.BranchSampleType&^(branchMax-1) != 0 || a.BranchSampleType&^branchPLMAll == 0),
		a.SampleType&sampleRegsUser != 0 && (a.SampleRegsUser == 0 || a.SampleRegsUser&^riscvRegsMask != 0),
		a.SampleType&sampleStackUser != 0 && (a.SampleStackUser >= 0xffff || a.SampleStackUser%8 != 0),
		a.SampleType&sampleRegsIntr != 0 && (a.SampleRegsIntr == 0 || a.SampleRegsIntr&^riscvRegsMask != 0),
		a.SampleType&sampleWeight != 0 && a.SampleType&sampleWeightStruct != 0,
		a.Flags&linux.PerfAttrInheritThread != 0 && a.Flags&linux.PerfAttrInherit == 0,
		a.Flags&linux.PerfAttrRemoveOnExec != 0 && a.Flags&linux.PerfAttrEnableOnExec != 0,
		a.Flags&linux.PerfAttrSigtrap != 0 && a.Flags&linux.PerfAttrRemoveOnExec == 0:
		return unix.EINVAL
	}
	return nil
}

// CheckAccess checks what perf_event_paranoid lets a caller without
// CAP_PERFMON ask (capable: one with it), and the sampling rate, in
// Linux's order: nothing at 3 and above (Debian's restriction), kernel
// mode and physical addresses at 2 and above, namespaces never.
func (p *Perf) CheckAccess(a *linux.PerfEventAttr, capable bool) error {
	paranoid := p.paranoid.Load()
	kernelMode := capable || paranoid <= 1
	switch {
	case paranoid > 2 && !capable:
		return unix.EACCES
	case a.Flags&linux.PerfAttrExcludeKernel == 0 && !kernelMode:
		return unix.EACCES
	case a.Flags&linux.PerfAttrNamespaces != 0 && !capable:
		return unix.EACCES
	case a.Flags&linux.PerfAttrFreq != 0 && a.Sample > uint64(p.maxSampleRate.Load()):
		return unix.EINVAL
	case a.Flags&linux.PerfAttrFreq == 0 && a.Sample&(1<<63) != 0:
		return unix.EINVAL
	case a.SampleType&samplePhysAddr != 0 && !kernelMode:
		return unix.EACCES
	case a.SampleType&sampleBranchStack != 0 && branchLevels(a)&branchPerm != 0 && !kernelMode:
		return unix.EACCES
	}
	return nil
}

// branchLevels are the privilege levels a branch stack samples: those
// asked, or by default those the event does not exclude.
func branchLevels(a *linux.PerfEventAttr) uint64 {
	if m := a.BranchSampleType & branchPLMAll; m != 0 {
		return m
	}
	var m uint64
	if a.Flags&linux.PerfAttrExcludeUser == 0 {
		m |= 1 << 0
	}
	if a.Flags&linux.PerfAttrExcludeKernel == 0 {
		m |= 1 << 1
	}
	if a.Flags&(1<<6) == 0 { // exclude_hv
		m |= 1 << 2
	}
	return m
}

// counts says what a software event counts here, and Linux's errno for
// one it does not: ENOENT for a type with no PMU here (hardware, cache,
// raw, tracepoints, breakpoints) or a config unknown or not counted
// (CPU migrations: goroutines move between harts unseen), EOPNOTSUPP for
// a branch stack. Faults are taken in user mode and switches made in the
// kernel, so exclude_user and exclude_kernel hide them; the clocks count
// the task's whole time whatever they exclude, as Linux's do.
func counts(a *linux.PerfEventAttr) (counted, error) {
	if a.Type != TypeSoftware {
		return 0, unix.ENOENT
	}
	if a.SampleType&sampleBranchStack != 0 {
		return 0, unix.EOPNOTSUPP
	}
	switch a.Config {
	case SWCPUClock, SWTaskClock:
		return countsTime, nil
	case SWPageFaults, SWPageFaultsMin:
		if a.Flags&linux.PerfAttrExcludeUser != 0 {
			return countsNothing, nil
		}
		return countsFaults, nil
	case SWContextSwitches:
		if a.Flags&linux.PerfAttrExcludeKernel != 0 {
			return countsNothing, nil
		}
		return countsSwitches, nil
	case SWPageFaultsMaj, SWAlignmentFaults, SWEmulationFaults, SWDummy, SWBPFOutput, SWCgroupSwitches:
		// No fault reads a disk, no access is emulated, no BPF program
		// writes and there is one cgroup: none of these happens.
		return countsNothing, nil
	}
	return 0, unix.ENOENT
}

// validClock reports whether use_clockid may name c: the clocks Linux's
// perf_event_set_clock takes.
func validClock(c int32) bool {
	switch c {
	case unix.CLOCK_MONOTONIC, unix.CLOCK_MONOTONIC_RAW, unix.CLOCK_REALTIME, unix.CLOCK_BOOTTIME, unix.CLOCK_TAI:
		return true
	}
	return false
}

// clock is the clock an event's samples would be timed with: -1 for
// the default. Events of a group share one.
func (e *Event) clock() int32 {
	if e.attr.Flags&linux.PerfAttrUseClockid == 0 {
		return -1
	}
	return e.attr.Clockid
}

// Open makes the event r asks for, with the checks of Linux's
// perf_event_open that follow the attribute's (CheckAttr, CheckAccess)
// and the lookups of the group and the task, in its order.
func (p *Perf) Open(r Request) (*Event, error) {
	a := &r.Attr
	inherit := a.Flags&linux.PerfAttrInherit != 0
	if r.Task != nil && r.Group != nil && (r.Group.attr.Flags&linux.PerfAttrInherit != 0) != inherit {
		return nil, unix.EINVAL
	}
	if (r.CPU < 0 || r.CPU >= r.CPUs) && (r.Task == nil || r.CPU != -1) {
		return nil, unix.EINVAL
	}
	if a.Flags&linux.PerfAttrSigtrap != 0 && r.Task == nil {
		return nil, unix.EINVAL
	}
	what, err := counts(a)
	if err != nil {
		return nil, err
	}
	switch {
	case a.Flags&linux.PerfAttrAuxOutput != 0, a.AuxAction&linux.PerfAuxStartPaused != 0:
		return nil, unix.EOPNOTSUPP // no PMU with an AUX area
	case a.AuxAction&linux.PerfAuxPauseResume != 0:
		return nil, unix.EINVAL
	case inherit && a.SampleType&sampleRead != 0 && a.SampleType&sampleTID == 0:
		return nil, unix.EINVAL
	case a.Flags&linux.PerfAttrUseClockid != 0 && !validClock(a.Clockid):
		return nil, unix.EINVAL
	case a.Sample != 0:
		return nil, unix.EOPNOTSUPP // a sampling event: nothing here interrupts
	case r.Task != nil && !r.MayTrace:
		return nil, unix.EACCES
	case r.Task == nil && p.paranoid.Load() > 0 && !r.Capable:
		return nil, unix.EACCES
	}
	e := &Event{p: p, attr: *a, what: what, src: r.Counters, task: r.Task, cpu: r.CPU, owner: r.Owner,
		enableOnExec: a.Flags&linux.PerfAttrEnableOnExec != 0, enabled: a.Flags&linux.PerfAttrDisabled == 0}
	e.leader = e
	p.mu.Lock()
	defer p.mu.Unlock()
	if g := r.Group; g != nil {
		switch {
		case g.leader != g, g.clock() != e.clock(), g.cpu != e.cpu, g.task != e.task,
			a.Flags&(linux.PerfAttrPinned|linux.PerfAttrExclusive) != 0:
			return nil, unix.EINVAL
		}
		e.leader = g
	}
	if r.Output {
		return nil, unix.EINVAL // there is no ring buffer to share
	}
	if r.Task != nil && r.CPU >= 0 && r.CPUs > 1 {
		// A task's counters are not kept by hart: its time on one of
		// several cannot be told apart (with one, it is all of it).
		return nil, unix.EOPNOTSUPP
	}
	if r.Group != nil && !r.Group.sizeFits(a.ReadFormat) {
		return nil, unix.E2BIG
	}
	if r.Task != nil && r.Task.gone {
		return nil, unix.ESRCH
	}
	if mm.Charged.Charge(eventCharge) != nil {
		return nil, unix.ENOMEM
	}
	e.id = p.ids.Add(1)
	e.ino = fs.NewAnonIno()
	if e.leader != e {
		e.leader.siblings = append(e.leader.siblings, e)
	}
	if r.Task != nil {
		r.Task.attached = append(r.Task.attached, e)
	}
	if r.Owner != nil {
		r.Owner.owned = append(r.Owner.owned, e)
	}
	e.refresh()
	return e, nil
}

// ID is the event's id (PERF_EVENT_IOC_ID, PERF_FORMAT_ID): a copy's is
// its descriptor's.
func (e *Event) ID() uint64 {
	if e.parent != nil {
		return e.parent.id
	}
	return e.id
}

// sizeFits reports whether the reads of e's group and of a member
// joining it with format stay within maxReadSize.
func (e *Event) sizeFits(format uint64) bool {
	l := e.leader
	n := 2 + len(l.siblings)
	if readSize(format, n) > maxReadSize {
		return false
	}
	for _, m := range append([]*Event{l}, l.siblings...) {
		if readSize(m.attr.ReadFormat, n) > maxReadSize {
			return false
		}
	}
	return true
}

// readSize is what a read returns with format for a group of n.
func readSize(format uint64, n int) int {
	entry := 8
	if format&FormatID != 0 {
		entry += 8
	}
	if format&FormatLost != 0 {
		entry += 8
	}
	size := 0
	if format&FormatTotalTimeEnabled != 0 {
		size += 8
	}
	if format&FormatTotalTimeRunning != 0 {
		size += 8
	}
	if format&FormatGroup == 0 {
		return size + entry
	}
	return 8 + size + entry*n
}

// counter reads the running total the event counts.
func (e *Event) counter(now uint64) uint64 {
	switch e.what {
	case countsTime:
		return now
	case countsFaults:
		return e.src.Faults()
	case countsSwitches:
		return e.src.Switches()
	}
	return 0
}

// update adds what a running event counted since its last update.
func (e *Event) update() {
	if !e.running {
		return
	}
	now := e.src.Time()
	c := e.counter(now)
	e.count += c - e.base
	e.time += now - e.timeBase
	e.base, e.timeBase = c, now
}

// setRunning starts or stops counting.
func (e *Event) setRunning(on bool) {
	if e.running == on {
		return
	}
	if on {
		e.timeBase = e.src.Time()
		e.base = e.counter(e.timeBase)
	} else {
		e.update()
	}
	e.running = on
}

// refresh starts or stops the members of e's group as their states and
// their leader's say: a member counts only while its leader is enabled.
func (e *Event) refresh() {
	l := e.leader
	for _, m := range append([]*Event{l}, l.siblings...) {
		m.setRunning(m.enabled && l.enabled && !m.detached && !m.closed)
	}
}

// setEnabled turns the event and its copies on or off.
func (e *Event) setEnabled(on bool) {
	for _, x := range append([]*Event{e}, e.children...) {
		x.enabled = on
		x.refresh()
	}
}

// reset zeroes the event's count and its live copies' (what exited
// copies left stays, as Linux's _perf_event_reset leaves child_count).
func (e *Event) reset() {
	for _, x := range append([]*Event{e}, e.children...) {
		x.update()
		x.count = 0
	}
}

// each applies f to the event, or with group to every member of its
// group (PERF_IOC_FLAG_GROUP).
func (e *Event) each(group bool, f func(*Event)) {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	if !group {
		f(e)
		return
	}
	l := e.leader
	for _, m := range append([]*Event{l}, l.siblings...) {
		f(m)
	}
}

// Enable is PERF_EVENT_IOC_ENABLE.
func (e *Event) Enable(group bool) { e.each(group, func(x *Event) { x.setEnabled(true) }) }

// Disable is PERF_EVENT_IOC_DISABLE.
func (e *Event) Disable(group bool) { e.each(group, func(x *Event) { x.setEnabled(false) }) }

// Reset is PERF_EVENT_IOC_RESET.
func (e *Event) Reset(group bool) { e.each(group, (*Event).reset) }

// totals are an event's count and time with its copies'.
func (e *Event) totals() (count, time uint64) {
	e.update()
	count, time = e.count+e.childCount, e.time+e.childTime
	for _, c := range e.children {
		c.update()
		count += c.count
		time += c.time
	}
	return count, time
}

// values encodes what a read returns (perf_read_one, perf_read_group).
// The times are enabled and running alike: a software event is never
// multiplexed off its hart. There are no samples to lose.
func (e *Event) values() []byte {
	format := e.attr.ReadFormat
	var out []byte
	put := func(v uint64) { out = binary.LittleEndian.AppendUint64(out, v) }
	entry := func(m *Event, count uint64) {
		put(count)
		if format&FormatID != 0 {
			put(m.ID())
		}
		if format&FormatLost != 0 {
			put(0)
		}
	}
	times := func(time uint64) {
		if format&FormatTotalTimeEnabled != 0 {
			put(time)
		}
		if format&FormatTotalTimeRunning != 0 {
			put(time)
		}
	}
	if format&FormatGroup == 0 {
		count, time := e.totals()
		put(count)
		times(time)
		if format&FormatID != 0 {
			put(e.ID())
		}
		if format&FormatLost != 0 {
			put(0)
		}
		return out
	}
	l := e.leader
	put(uint64(1 + len(l.siblings)))
	count, time := l.totals()
	times(time)
	entry(l, count)
	for _, s := range l.siblings {
		c, _ := s.totals()
		entry(s, c)
	}
	return out
}

// ReadTo reads the event's values: ENOSPC for a buffer too small for
// them all, EFAULT for one that cannot take them.
func (e *Event) ReadTo(dst fs.UserIO) (int64, error) {
	e.p.mu.Lock()
	b := e.values()
	e.p.mu.Unlock()
	if dst.Len() < int64(len(b)) {
		return 0, unix.ENOSPC
	}
	if dst.Writable(len(b)) < len(b) {
		return 0, unix.EFAULT
	}
	n, err := dst.CopyOut(b)
	return int64(n), err
}

// WriteFrom refuses: an event is not written (EINVAL).
func (e *Event) WriteFrom(fs.UserIO) (int64, error) { return 0, unix.EINVAL }

// Readiness is always POLLHUP: Linux's perf_poll reports the ring
// buffer's wake-ups, and hang-up when there is none.
func (e *Event) Readiness(uint32) uint32 { return unix.POLLHUP }

// Watch never notifies: readiness never changes.
func (e *Event) Watch(func()) func() { return func() {} }

// Stat is an anonymous inode's. An event has no position (lseek is
// ESPIPE), as Linux's perf_fops has no llseek.
func (e *Event) Stat() fs.Stat { return fs.AnonStat(e.ino) }

// Path is what /proc/PID/fd shows, as Linux names the anonymous inode.
func (e *Event) Path() string { return "anon_inode:[perf_event]" }

// Close ends the event and its copies: the other members of a group it
// leads go on as groups of their own.
func (e *Event) Close() error {
	p := e.p
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range e.children {
		c.drop()
	}
	e.children = nil
	e.drop()
	return nil
}

// drop takes the event out of its group and its tasks' lists and gives
// back its charge.
func (e *Event) drop() {
	e.closed = true
	e.setRunning(false)
	e.leave()
	if e.task != nil {
		e.task.attached = slices.DeleteFunc(e.task.attached, func(x *Event) bool { return x == e })
	}
	if e.owner != nil {
		e.owner.owned = slices.DeleteFunc(e.owner.owned, func(x *Event) bool { return x == e })
		e.owner = nil
	}
	mm.Charged.Uncharge(eventCharge)
}

// leave takes the event out of its group: a leader's members each lead
// their own from now on, as Linux's perf_group_detach.
func (e *Event) leave() {
	if e.leader != e {
		l := e.leader
		l.siblings = slices.DeleteFunc(l.siblings, func(x *Event) bool { return x == e })
		e.leader = e
		return
	}
	for _, s := range e.siblings {
		s.leader = s
		s.refresh()
	}
	e.siblings = nil
}

// detach ends the counting of an event whose task exited or exec'd it
// away: a copy gives what it counted to its descriptor's event and goes;
// a descriptor's event keeps its counts for reads.
func (e *Event) detach() {
	e.setRunning(false)
	e.detached = true
	if par := e.parent; par != nil {
		par.childCount += e.count
		par.childTime += e.time
		par.children = slices.DeleteFunc(par.children, func(x *Event) bool { return x == e })
		e.leave()
		mm.Charged.Uncharge(eventCharge)
	}
}

// Modify is PERF_EVENT_IOC_MODIFY_ATTRIBUTES with a checked attribute:
// EINVAL for another type, and for the clocks (Linux gives them PMUs of
// their own, whose type no attribute names); EOPNOTSUPP for the other
// software events, as Linux modifies only breakpoints.
func (e *Event) Modify(a *linux.PerfEventAttr) error {
	if a.Type != e.attr.Type || e.attr.Config == SWCPUClock || e.attr.Config == SWTaskClock {
		return unix.EINVAL
	}
	return unix.EOPNOTSUPP
}
