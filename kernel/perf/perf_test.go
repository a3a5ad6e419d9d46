package perf

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// fakeTask is a task's running totals, which the test advances.
type fakeTask struct {
	time, faults, switches atomic.Uint64
	events                 TaskEvents
}

func (f *fakeTask) Time() uint64     { return f.time.Load() }
func (f *fakeTask) Faults() uint64   { return f.faults.Load() }
func (f *fakeTask) Switches() uint64 { return f.switches.Load() }

// bufIO is a user buffer of n bytes, of which only the first writable
// can be written.
type bufIO struct {
	b        []byte
	writable int
}

func (u *bufIO) Len() int64 { return int64(len(u.b)) }
func (u *bufIO) CopyOut(src []byte) (int, error) {
	n := copy(u.b[:min(len(u.b), u.writable)], src)
	if n < len(src) {
		return n, unix.EFAULT
	}
	return n, nil
}
func (u *bufIO) CopyIn([]byte) (int, error) { return 0, unix.EFAULT }
func (u *bufIO) Writable(n int) int         { return min(n, u.writable) }

func attr(config uint64) linux.PerfEventAttr {
	return linux.PerfEventAttr{Type: TypeSoftware, Size: linux.PerfAttrSize, Config: config,
		Flags: linux.PerfAttrDisabled | linux.PerfAttrExcludeKernel}
}

func open(t *testing.T, p *Perf, task *fakeTask, a linux.PerfEventAttr, group *Event) *Event {
	t.Helper()
	e, err := p.Open(Request{Attr: a, Task: &task.events, Counters: task, CPU: -1, CPUs: 1, Group: group,
		Owner: &task.events, MayTrace: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return e
}

// read returns the words a read of the event gives.
func read(t *testing.T, e *Event) []uint64 {
	t.Helper()
	u := &bufIO{b: make([]byte, 256), writable: 256}
	n, err := e.ReadTo(u)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var words []uint64
	for i := 0; i < int(n); i += 8 {
		words = append(words, binary.LittleEndian.Uint64(u.b[i:]))
	}
	return words
}

func TestCountsWhileEnabled(t *testing.T) {
	p, task := New(), &fakeTask{}
	clock := open(t, p, task, attr(SWTaskClock), nil)
	faults := open(t, p, task, attr(SWPageFaults), nil)
	task.time.Add(100)
	task.faults.Add(3)
	if got := read(t, clock)[0]; got != 0 {
		t.Errorf("disabled clock read %d, want 0", got)
	}
	clock.Enable(false)
	faults.Enable(false)
	task.time.Add(50)
	task.faults.Add(2)
	clock.Disable(false)
	faults.Disable(false)
	task.time.Add(1000)
	task.faults.Add(7)
	if got := read(t, clock)[0]; got != 50 {
		t.Errorf("clock counted %d, want the 50 ns it was enabled", got)
	}
	if got := read(t, faults)[0]; got != 2 {
		t.Errorf("faults counted %d, want 2", got)
	}
	clock.Reset(false)
	if got := read(t, clock)[0]; got != 0 {
		t.Errorf("reset clock read %d", got)
	}
	clock.Close()
	faults.Close()
}

func TestExcludedModes(t *testing.T) {
	p, task := New(), &fakeTask{}
	a := attr(SWContextSwitches)
	a.Flags &^= linux.PerfAttrDisabled
	userOnly := open(t, p, task, a, nil) // switches are made in the kernel
	a.Flags &^= linux.PerfAttrExcludeKernel
	all := open(t, p, task, a, nil)
	c := attr(SWTaskClock)
	c.Flags = linux.PerfAttrExcludeKernel | linux.PerfAttrExcludeUser // the clocks ignore it
	clock := open(t, p, task, c, nil)
	clock.Enable(false)
	task.switches.Add(4)
	task.time.Add(9)
	if got := read(t, userOnly)[0]; got != 0 {
		t.Errorf("switches with exclude_kernel: %d, want 0", got)
	}
	if got := read(t, all)[0]; got != 4 {
		t.Errorf("switches: %d, want 4", got)
	}
	if got := read(t, clock)[0]; got != 9 {
		t.Errorf("clock excluding both modes: %d, want 9", got)
	}
}

func TestReadFormats(t *testing.T) {
	p, task := New(), &fakeTask{}
	a := attr(SWTaskClock)
	a.Flags &^= linux.PerfAttrDisabled
	a.ReadFormat = FormatTotalTimeEnabled | FormatTotalTimeRunning | FormatID | FormatLost
	e := open(t, p, task, a, nil)
	task.time.Add(30)
	if got, want := read(t, e), []uint64{30, 30, 30, e.ID(), 0}; !equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	if _, err := e.ReadTo(&bufIO{b: make([]byte, 39), writable: 39}); err != unix.ENOSPC {
		t.Errorf("read into 39 bytes: %v, want ENOSPC", err)
	}
	if _, err := e.ReadTo(&bufIO{b: make([]byte, 40), writable: 8}); err != unix.EFAULT {
		t.Errorf("read into a bad buffer: %v, want EFAULT", err)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestGroup(t *testing.T) {
	p, task := New(), &fakeTask{}
	la := attr(SWTaskClock)
	la.ReadFormat = FormatGroup | FormatID
	leader := open(t, p, task, la, nil)
	sa := attr(SWPageFaults)
	sa.Flags &^= linux.PerfAttrDisabled
	sibling := open(t, p, task, sa, leader)
	task.time.Add(10)
	task.faults.Add(1)
	if got := read(t, sibling)[0]; got != 0 {
		t.Errorf("sibling counted %d while its leader was disabled", got)
	}
	leader.Enable(false)
	task.time.Add(20)
	task.faults.Add(2)
	want := []uint64{2, 20, leader.ID(), 2, sibling.ID()}
	if got := read(t, leader); !equal(got, want) {
		t.Errorf("group read %v, want %v", got, want)
	}
	sibling.Disable(true) // the whole group
	task.faults.Add(5)
	if got := read(t, sibling)[0]; got != 2 {
		t.Errorf("sibling after the group's disable: %d, want 2", got)
	}
	sibling.Enable(false)
	leader.Close() // the sibling now leads itself, and counts
	task.faults.Add(4)
	if got := read(t, sibling)[0]; got != 6 {
		t.Errorf("sibling after its leader closed: %d, want 6", got)
	}
	for _, bad := range []func(*linux.PerfEventAttr){
		func(a *linux.PerfEventAttr) { a.Flags |= linux.PerfAttrPinned },
		func(a *linux.PerfEventAttr) { a.Flags |= linux.PerfAttrInherit },
		func(a *linux.PerfEventAttr) { a.Flags |= linux.PerfAttrUseClockid; a.Clockid = unix.CLOCK_MONOTONIC },
	} {
		a := attr(SWDummy)
		bad(&a)
		if _, err := p.Open(Request{Attr: a, Task: &task.events, Counters: task, CPU: -1, CPUs: 1, Group: sibling, MayTrace: true}); err != unix.EINVAL {
			t.Errorf("joining with %#x: %v, want EINVAL", a.Flags, err)
		}
	}
	other := &fakeTask{}
	if _, err := p.Open(Request{Attr: attr(SWDummy), Task: &other.events, Counters: other, CPU: -1, CPUs: 1, Group: sibling, MayTrace: true}); err != unix.EINVAL {
		t.Errorf("joining from another task: %v, want EINVAL", err)
	}
}

func TestInherit(t *testing.T) {
	p, parent := New(), &fakeTask{}
	a := attr(SWTaskClock)
	a.Flags |= linux.PerfAttrInherit
	e := open(t, p, parent, a, nil)
	ta := a
	ta.Flags |= linux.PerfAttrInheritThread
	threadsOnly := open(t, p, parent, ta, nil)
	charged := mm.Charged.Total()
	in, err := p.Inherit(&parent.events, false)
	if err != nil {
		t.Fatal(err)
	}
	child := &fakeTask{}
	in.Attach(&child.events, child)
	if len(child.events.attached) != 1 {
		t.Fatalf("a forked child has %d events, want 1 (inherit_thread's stays)", len(child.events.attached))
	}
	e.Enable(false) // the copy follows its descriptor's event
	child.time.Add(40)
	parent.time.Add(2)
	if got := read(t, e)[0]; got != 42 {
		t.Errorf("read %d, want the parent's 2 and the child's 40", got)
	}
	p.Exit(&child.events)
	child.time.Add(1000)
	if got := read(t, e)[0]; got != 42 {
		t.Errorf("after the child's exit: %d, want 42", got)
	}
	if mm.Charged.Total() != charged {
		t.Errorf("charged %d after the copy went, want %d", mm.Charged.Total(), charged)
	}
	in, _ = p.Inherit(&parent.events, true)
	thread := &fakeTask{}
	in.Attach(&thread.events, thread)
	if len(thread.events.attached) != 2 {
		t.Errorf("a thread has %d events, want 2", len(thread.events.attached))
	}
	e.Close()
	threadsOnly.Close()
	if len(thread.events.attached) != 0 || mm.Charged.Total() != charged-2*eventCharge {
		t.Errorf("closing left %d copies, charged %d", len(thread.events.attached), mm.Charged.Total())
	}
	in, _ = p.Inherit(&parent.events, false)
	if in != nil {
		t.Errorf("closed events are inherited")
	}
}

func TestExecAndExit(t *testing.T) {
	p, task := New(), &fakeTask{}
	a := attr(SWTaskClock)
	a.Flags |= linux.PerfAttrEnableOnExec
	onExec := open(t, p, task, a, nil)
	r := attr(SWTaskClock)
	r.Flags = linux.PerfAttrRemoveOnExec
	removed := open(t, p, task, r, nil)
	task.time.Add(5)
	p.Exec(&task.events)
	task.time.Add(7)
	if got := read(t, onExec)[0]; got != 7 {
		t.Errorf("enable_on_exec counted %d, want the 7 after the exec", got)
	}
	if got := read(t, removed)[0]; got != 5 {
		t.Errorf("remove_on_exec counted %d, want the 5 before the exec", got)
	}
	onExec.Disable(false)
	p.Exec(&task.events)
	task.time.Add(3)
	if got := read(t, onExec)[0]; got != 7 {
		t.Errorf("a second exec enabled it again: %d", got)
	}
	p.Exit(&task.events)
	onExec.Enable(false)
	task.time.Add(100)
	if got := read(t, onExec)[0]; got != 7 {
		t.Errorf("an exited task's event counted on: %d", got)
	}
	if _, err := p.Open(Request{Attr: attr(SWDummy), Task: &task.events, Counters: task, CPU: -1, CPUs: 1, MayTrace: true}); err != unix.ESRCH {
		t.Errorf("open on an exited task: %v, want ESRCH", err)
	}
}

func TestOwned(t *testing.T) {
	p, task, other := New(), &fakeTask{}, &fakeTask{}
	mine := open(t, p, task, attr(SWTaskClock), nil)
	theirs, err := p.Open(Request{Attr: attr(SWTaskClock), Task: &task.events, Counters: task, CPU: -1, CPUs: 1,
		Owner: &other.events, MayTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	p.SetOwnedEnabled(&task.events, true)
	task.time.Add(8)
	if a, b := read(t, mine)[0], read(t, theirs)[0]; a != 8 || b != 0 {
		t.Errorf("prctl enabled %d and %d, want only the task's own", a, b)
	}
}

func TestChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*linux.PerfEventAttr)
		want error
	}{
		{"reserved_1", func(a *linux.PerfEventAttr) { a.Flags |= 1 << 40 }, unix.EINVAL},
		{"reserved_2", func(a *linux.PerfEventAttr) { a.Reserved2 = 1 }, unix.EINVAL},
		{"reserved_3", func(a *linux.PerfEventAttr) { a.AuxAction = 8 }, unix.EINVAL},
		{"read format", func(a *linux.PerfEventAttr) { a.ReadFormat = formatMax }, unix.EINVAL},
		{"sample type", func(a *linux.PerfEventAttr) { a.SampleType = sampleMax }, unix.EINVAL},
		{"inherit_thread", func(a *linux.PerfEventAttr) { a.Flags |= linux.PerfAttrInheritThread }, unix.EINVAL},
		{"sigtrap", func(a *linux.PerfEventAttr) { a.Flags |= linux.PerfAttrSigtrap }, unix.EINVAL},
		{"fine", func(*linux.PerfEventAttr) {}, nil},
	} {
		a := attr(SWTaskClock)
		c.mod(&a)
		if err := CheckAttr(&a); err != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	p := New()
	user, kernelMode := attr(SWTaskClock), attr(SWTaskClock)
	kernelMode.Flags &^= linux.PerfAttrExcludeKernel
	for _, c := range []struct {
		paranoid           string
		user, kernel, cpus error
	}{
		{"3", unix.EACCES, unix.EACCES, unix.EACCES},
		{"2", nil, unix.EACCES, unix.EACCES},
		{"1", nil, nil, unix.EACCES},
		{"0", nil, nil, nil},
	} {
		if err := p.SetParanoid([]byte(c.paranoid + "\n")); err != nil {
			t.Fatal(err)
		}
		task := &fakeTask{}
		cpuWide := func() error {
			_, err := p.Open(Request{Attr: user, Counters: task, CPU: 0, CPUs: 1})
			return err
		}
		if u, k := p.CheckAccess(&user, false), p.CheckAccess(&kernelMode, false); u != c.user || k != c.kernel ||
			(u == nil && cpuWide() != c.cpus) {
			t.Errorf("paranoid %s: user %v, kernel %v, want %v, %v and CPU-wide %v", c.paranoid, u, k, c.user, c.kernel, c.cpus)
		}
		if p.CheckAccess(&kernelMode, true) != nil {
			t.Errorf("paranoid %s refuses CAP_PERFMON", c.paranoid)
		}
	}
	if p.SetParanoid([]byte("x")) != unix.EINVAL || p.SetMaxSampleRate([]byte("0")) != unix.EINVAL {
		t.Errorf("bad settings taken")
	}
	task := &fakeTask{}
	for _, c := range []struct {
		name string
		mod  func(*linux.PerfEventAttr)
		want error
	}{
		{"hardware", func(a *linux.PerfEventAttr) { a.Type = 0 }, unix.ENOENT},
		{"migrations", func(a *linux.PerfEventAttr) { a.Config = SWCPUMigrations }, unix.ENOENT},
		{"unknown", func(a *linux.PerfEventAttr) { a.Config = swMax }, unix.ENOENT},
		{"sampling", func(a *linux.PerfEventAttr) { a.Sample = 1000 }, unix.EOPNOTSUPP},
		{"clock", func(a *linux.PerfEventAttr) { a.Flags |= linux.PerfAttrUseClockid; a.Clockid = 2 }, unix.EINVAL},
	} {
		a := attr(SWTaskClock)
		c.mod(&a)
		if _, err := p.Open(Request{Attr: a, Task: &task.events, Counters: task, CPU: -1, CPUs: 1, MayTrace: true}); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := p.Open(Request{Attr: attr(SWDummy), Task: &task.events, Counters: task, CPU: 0, CPUs: 2, MayTrace: true}); err != unix.EOPNOTSUPP {
		t.Errorf("a task's event on one of two harts: %v, want EOPNOTSUPP", err)
	}
}

// TestConcurrent reads, enables, forks and exits at once (go test -race).
func TestConcurrent(t *testing.T) {
	p, task := New(), &fakeTask{}
	a := attr(SWTaskClock)
	a.Flags |= linux.PerfAttrInherit
	a.ReadFormat = FormatGroup
	leader := open(t, p, task, a, nil)
	sibling := open(t, p, task, a, leader)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				task.time.Add(1)
				leader.Enable(true)
				read(t, sibling)
				sibling.Disable(false)
				if in, err := p.Inherit(&task.events, j%2 == 0); err == nil {
					child := &fakeTask{}
					in.Attach(&child.events, child)
					child.time.Add(1)
					p.Exit(&child.events)
				}
			}
		}()
	}
	wg.Wait()
	sibling.Close()
	leader.Close()
}
