package kernel

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
)

// Signals as Linux has them: dispositions per process, pending sets and
// masks per task plus a process-wide pending set, delivery at the return
// to user mode (handlers get a riscv64 rt_sigframe, sigframe.go), default
// actions that ignore, terminate, stop or continue the process.

// SigSet is a signal set: bit sig-1 stands for signal sig (sigset_t).
type SigSet uint64

// Bit is the set holding only sig.
func Bit(sig unix.Signal) SigSet { return 1 << (uint(sig) - 1) }

// NumSignals is _NSIG: signals are 1..64.
const NumSignals = 64

// sigRTMin is the first real-time signal: those queue every instance,
// up to maxQueued pending signals per task and per process (Linux's
// RLIMIT_SIGPENDING bounds the same memory).
const (
	sigRTMin  = 32
	maxQueued = 4096
)

// unblockable are the signals no mask holds.
const unblockable = SigSet(1)<<(unix.SIGKILL-1) | SigSet(1)<<(unix.SIGSTOP-1)

// sa_flags bits (include/uapi/asm-generic/signal-defs.h).
const (
	SANoCldStop = 0x1
	SANoCldWait = 0x2
	SASiginfo   = 0x4
	SAOnStack   = 0x08000000
	SARestart   = 0x10000000
	SANoDefer   = 0x40000000
	SAResetHand = 0x80000000
	// saKnown are the flags rt_sigaction keeps; riscv64 has no
	// SA_RESTORER, so Linux clears it with the other unknown bits.
	saKnown = SANoCldStop | SANoCldWait | SASiginfo | SAOnStack | SARestart | SANoDefer | SAResetHand
)

// Handler values with a meaning of their own.
const (
	SigDefault = 0 // SIG_DFL
	SigIgnore  = 1 // SIG_IGN
)

// SigAction is a signal's disposition (struct sigaction without a restorer).
type SigAction struct {
	Handler uint64
	Flags   uint64
	Mask    SigSet
}

// si_code values (include/uapi/asm-generic/siginfo.h).
const (
	SIUser       = 0
	SIKernel     = 0x80
	SITkill      = -6
	SIMesgq      = -3 // a message queue's notification
	CldExited    = 1
	CldKilled    = 2
	CldDumped    = 3
	CldStopped   = 5
	CldContinued = 6
	SegvMapErr   = 1
	SegvAccErr   = 2
	IllIllOpc    = 1
	BusAdrAln    = 1
	BusAdrErr    = 2
	BusMceerrAr  = 4 // a poisoned page (UFFDIO_POISON)
	TrapBrkpt    = 1
)

// SigInfo is the content of a siginfo_t the kernel fills in.
type SigInfo struct {
	Signo  unix.Signal
	Code   int32
	Pid    int32  // sender, or the child for SIGCHLD
	UID    uint32 // sender's real uid
	Status int32  // SIGCHLD: exit code or signal
	Addr   uint64 // faults: the faulting address
	Value  uint64 // sigqueue: si_value
	// Band and FD are an I/O signal's si_band and si_fd (F_SETSIG's
	// signal, dnotify's): a Band other than 0 marks that layout.
	Band int64
	FD   int32
	// Syscall and Errno are a seccomp SIGSYS's si_syscall and si_errno
	// (its si_call_addr is Addr).
	Syscall, Errno int32

	// timer is the POSIX timer whose signal this is (SI_TIMER: Pid is
	// si_timerid, UID si_overrun), told when it is taken.
	timer *posixTimer
	// charged: the entry counts, while queued, among the pending signals
	// of user chargedTo (RLIMIT_SIGPENDING).
	charged   bool
	chargedTo uint32
	// fromAncestor: the sender is in a PID namespace above the
	// receiver's, whose init then takes SIGKILL and SIGSTOP.
	fromAncestor bool
}

// processSignals is the signal state of a process (shared by its threads).
type processSignals struct {
	actions [NumSignals]SigAction
	pending SigSet
	queue   []SigInfo // one entry per pending signal

	pgid, sid int
	// execed: the process has run execve, after which its parent may no
	// longer move it to another group (setpgid's EACCES).
	execed bool

	stopped    bool
	continued  chan struct{} // closed when a stopped process continues
	stopReport unix.Signal   // for wait4(WUNTRACED): stopped, not yet reported
	contReport bool          // for wait4(WCONTINUED)
	termSig    unix.Signal   // the signal that killed the process
	coreDumped bool          // and it left a core file (CLD_DUMPED)

	itimer realTimer
	timers posixTimers // posixtimers.go
	trace  traceState  // ptrace.go

	// signalfds are the pollers of the process's signalfds, told of
	// every signal queued to it or its threads (signalfd.go).
	signalfds fs.Notifier
}

// taskSignals is the signal state of one thread.
type taskSignals struct {
	mask    SigSet
	pending SigSet
	queue   []SigInfo
	wake    chan struct{} // a token when a signal the task must handle arrives

	altSP, altSize uint64
	altDisabled    bool

	// waiting is the set rt_sigtimedwait waits for: unblocked for the
	// wait, still blocked for generation (Linux's real_blocked).
	waiting SigSet
	// left: the task has ended and its queue is flushed; nothing is
	// queued on it any more.
	left bool

	// savedMask is restored when a handler returns after rt_sigsuspend.
	savedMask    SigSet
	hasSavedMask bool

	restart   Restart // how an interrupted system call resumes
	seenGen   uint64  // sigMu's count when HandleSignals last ran to the end
	restartA0 uint64
	// restartBlock continues an interrupted sleep with the time left,
	// through restart_syscall (Linux's restart_block).
	restartBlock func(*Task) (uint64, error)
	// injected is the signal a tracer resumed the task with from a
	// signal-delivery-stop, delivered next (ptrace.go).
	injected *SigInfo
}

// signalLock is a mutex that counts its critical sections: every change
// to signal state happens under it, so a task that saw the count it saw
// when it last handled its signals has nothing new to handle, and the
// return to user mode skips the lock (Linux's TIF_SIGPENDING test).
type signalLock struct {
	mu  sync.Mutex
	gen atomic.Uint64
}

func (l *signalLock) Lock() { l.mu.Lock() }

func (l *signalLock) Unlock() {
	l.gen.Add(1)
	l.mu.Unlock()
}

// unlockUnchanged ends a critical section that only read: the count
// stays, and no task's next return to user mode takes the lock for it.
func (l *signalLock) unlockUnchanged() { l.mu.Unlock() }

// defaultAction is what SIG_DFL does with a signal.
type defaultAction int

const (
	actTerminate defaultAction = iota
	actIgnore
	actStop
	actContinue
)

func defaultOf(sig unix.Signal) defaultAction {
	switch sig {
	case unix.SIGCHLD, unix.SIGURG, unix.SIGWINCH:
		return actIgnore
	case unix.SIGCONT:
		return actContinue
	case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		return actStop
	}
	return actTerminate
}

// ignored reports whether sig sent to p would be discarded (sigMu held).
func (p *Process) ignored(sig unix.Signal) bool {
	a := p.sig.actions[sig-1]
	switch a.Handler {
	case SigIgnore:
		return true
	case SigDefault:
		return defaultOf(sig) == actIgnore || defaultOf(sig) == actContinue
	}
	return false
}

// dropped reports whether sig sent to p is discarded unheard: ignored,
// and p not traced, since a tracer hears even of ignored signals
// (Linux's sig_ignored) (sigMu held).
func (p *Process) dropped(sig unix.Signal) bool { return !p.traced() && p.ignored(sig) }

// fatal reports whether sig ends p when delivered (sigMu held).
func (p *Process) fatal(sig unix.Signal) bool {
	return sig == unix.SIGKILL || p.sig.actions[sig-1].Handler == SigDefault && defaultOf(sig) == actTerminate
}

// wakeChan returns the task's wake channel, made on first use (sigMu held).
func (t *Task) wakeChan() chan struct{} {
	if t.sig.wake == nil {
		t.sig.wake = make(chan struct{}, 1)
	}
	return t.sig.wake
}

// wakeUp ends the task's Block wait for a signal or exec: from now on
// it runs (ps shows R), as Linux's signal_wake_up makes it runnable
// before kill returns; a Block that finds nothing to handle sleeps again.
func (t *Task) wakeUp() {
	t.sleeping.Store(false)
	select {
	case t.wakeChan() <- struct{}{}:
	default:
	}
}

// mustHandle reports whether the task has a pending signal that it does
// not block and its process does not ignore, or that rt_sigtimedwait
// waits for: one that ends a blocking call (sigMu held).
func (t *Task) mustHandle() bool {
	set := (t.sig.pending | t.Proc.sig.pending) &^ t.sig.mask
	for sig := unix.Signal(1); set != 0; sig++ {
		if set&Bit(sig) != 0 && (t.sig.waiting&Bit(sig) != 0 || !t.Proc.dropped(sig)) {
			return true
		}
		set &^= Bit(sig)
	}
	return false
}

// tasksOf returns the running tasks of p.
func tasksOf(p *Process) []*Task {
	p.k.tablesMu.RLock()
	defer p.k.tablesMu.RUnlock()
	var ts []*Task
	for _, t := range p.k.tasks {
		if t.Proc == p {
			ts = append(ts, t)
		}
	}
	return ts
}

// SendSignal sends sig with info (nil: from the kernel, SI_KERNEL) to the
// task's whole process, as kill(2) does. (SIGPIPE needs no call: Dispatch
// raises it on the thread whose write fails with EPIPE.)
func (t *Task) SendSignal(sig unix.Signal, info *SigInfo) {
	t.Proc.Signal(sig, info)
}

// SignalThread sends sig to this thread only, as tgkill(2) does: EAGAIN
// when the receiving user has RLIMIT_SIGPENDING signals pending (Process.enqueue).
func (t *Task) SignalThread(sig unix.Signal, info *SigInfo) error {
	fatal, err := t.Proc.queue(t, sig, info)
	if fatal {
		t.Proc.terminate(sig)
	}
	return err
}

// takesAsInit reports whether p, a namespace's init, takes sig with no
// handler for it: a namespace's below the root takes SIGKILL and SIGSTOP
// from the kernel or from a process of an ancestor namespace, as Linux's
// sig_task_ignored with force.
func (p *Process) takesAsInit(sig unix.Signal, info *SigInfo) bool {
	return p.PID != 1 && (sig == unix.SIGKILL || sig == unix.SIGSTOP) && (info == nil || info.Code == SIKernel || info.fromAncestor)
}

// SIQueue is the si_code of sigqueue(3).
const SIQueue = -1

// Signal sends sig to the process, as kill(2) does; EAGAIN as
// SignalThread.
func (p *Process) Signal(sig unix.Signal, info *SigInfo) error {
	fatal, err := p.queue(nil, sig, info)
	if fatal {
		p.terminate(sig)
	}
	return err
}

// queue is queueSignal under sigMu. (Every critical section of sigMu is a
// function that releases it by defer: Task.Run recovers a handler's
// panic, and a panic that left sigMu held would wedge every later signal.)
func (p *Process) queue(to *Task, sig unix.Signal, info *SigInfo) (bool, error) {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	return p.queueSignal(to, sig, info)
}

// queueSignal makes sig pending on p, or on its task to when not nil, and
// wakes the tasks that must handle it. It applies what Linux applies when
// a signal is generated: SIGCONT continues a stopped process and discards
// pending stops, a stop discards pending SIGCONT. It reports whether the
// signal is fatal now (sigMu held).
func (p *Process) queueSignal(to *Task, sig unix.Signal, info *SigInfo) (bool, error) {
	if sig == 0 {
		return false, nil
	}
	select {
	case <-p.exited:
		return false, nil
	default:
	}
	ts := tasksOf(p)
	if p.isInit() && !p.takesAsInit(sig, info) && (!p.traced() || sig == unix.SIGKILL) &&
		p.sig.actions[sig-1].Handler == SigDefault && !blockedBy(sig, to, ts) {
		// init is unkillable (SIGNAL_UNKILLABLE): signals it has no
		// handler for are dropped, SIGKILL included; faults still kill.
		// A blocked one stays pending for sigwait; a tracer hears of
		// the others.
		return false, nil
	}
	if info == nil {
		info = &SigInfo{Code: SIKernel}
	}
	i := *info
	i.Signo = sig
	switch {
	case sig == unix.SIGKILL:
		return true, nil
	case defaultOf(sig) == actStop:
		p.discard(Bit(unix.SIGCONT), ts)
	case sig == unix.SIGCONT:
		p.discard(Bit(unix.SIGSTOP)|Bit(unix.SIGTSTP)|Bit(unix.SIGTTIN)|Bit(unix.SIGTTOU), ts)
		if p.sig.stopped {
			p.sig.stopped = false
			close(p.sig.continued)
			p.sig.stopReport = 0
			p.sig.contReport = true
			p.notifyParent(CldContinued, int32(unix.SIGCONT))
		}
	}
	if p.dropped(sig) && !blockedBy(sig, to, ts) {
		// A blocked signal is kept: its handler may change before it
		// is unblocked, and sigwait takes it (Linux's sig_ignored).
		return false, nil
	}
	if p.fatal(sig) && !p.isInit() && coreSignals&Bit(sig) == 0 && !p.traced() {
		// Linux ends the group at once when some thread lets the signal
		// through; a blocked one (or one sigwait waits for) stays pending.
		// A traced process first stops on it for its tracer.
		// A thread takes a signal that dumps core, and dumps it.
		for _, t := range ts {
			if (to == nil || to == t) && (t.sig.mask|t.sig.waiting)&Bit(sig) == 0 {
				return true, nil
			}
		}
	}
	if to != nil {
		if to.sig.left {
			return false, nil
		}
		if err := p.enqueue(&to.sig.pending, &to.sig.queue, i); err != nil {
			return false, err
		}
		if to.sig.mask&Bit(sig) == 0 {
			to.wakeUp()
		}
		fs.Notify(p.sig.signalfds.Changed())
		return false, nil
	}
	if err := p.enqueue(&p.sig.pending, &p.sig.queue, i); err != nil {
		return false, err
	}
	for _, t := range ts {
		if t.sig.mask&Bit(sig) == 0 {
			t.wakeUp()
		}
	}
	fs.Notify(p.sig.signalfds.Changed())
	return false, nil
}

// enqueue makes i's signal pending in pending and queue (a task's or the
// process's), with an entry carrying i unless it is a standard signal
// pending already (sigMu held). Each entry counts among the pending
// signals of the receiving user, as Linux's sigqueue_alloc: past the
// process's RLIMIT_SIGPENDING a real-time signal sent with information of
// its own (not kill's) fails with EAGAIN, and any other is made pending
// without an entry, its information lost. A timer's signal is queued
// whatever else is (its one entry is preallocated on Linux, and bounded
// by the timers' limit here); so is a real-time signal up to maxQueued
// entries in one queue.
func (p *Process) enqueue(pending *SigSet, queue *[]SigInfo, i SigInfo) error {
	sig := i.Signo
	if i.timer != nil {
		*pending |= Bit(sig)
		*queue = append(*queue, i)
		i.markQueued()
		return nil
	}
	if *pending&Bit(sig) != 0 && (sig < sigRTMin || len(*queue) >= maxQueued) {
		return nil
	}
	uid := p.RealCred().UID
	override := sig < sigRTMin && i.Code >= 0
	if !override && uint64(p.k.sigPending[uid]) >= p.Limit(unix.RLIMIT_SIGPENDING).Cur {
		if sig >= sigRTMin && i.Code != SIUser {
			return unix.EAGAIN
		}
		*pending |= Bit(sig)
		return nil
	}
	if p.k.sigPending == nil {
		p.k.sigPending = map[uint32]int{}
	}
	p.k.sigPending[uid]++
	i.charged, i.chargedTo = true, uid
	*pending |= Bit(sig)
	*queue = append(*queue, i)
	return nil
}

// uncharge gives back what i's entry counted among its user's pending
// signals (sigMu held).
func (k *Kernel) uncharge(i SigInfo) {
	if !i.charged {
		return
	}
	if k.sigPending[i.chargedTo]--; k.sigPending[i.chargedTo] <= 0 {
		delete(k.sigPending, i.chargedTo)
	}
}

// flushQueue drops every entry of queue, as a thread or process that ends
// does: nothing will take them (sigMu held).
func (k *Kernel) flushQueue(queue []SigInfo) {
	for _, i := range queue {
		if i.timer != nil {
			i.timer.queued = false
			i.timer.release()
		}
		k.uncharge(i)
	}
}

// blockedBy reports whether sig is blocked by the task it is sent to, or
// for a process-directed signal by one of the process's tasks.
func blockedBy(sig unix.Signal, to *Task, ts []*Task) bool {
	if to != nil {
		return (to.sig.mask|to.sig.waiting)&Bit(sig) != 0
	}
	for _, t := range ts {
		if (t.sig.mask|t.sig.waiting)&Bit(sig) != 0 {
			return true
		}
	}
	return false
}

// discard drops pending signals in set from p and its tasks (sigMu held).
func (p *Process) discard(set SigSet, ts []*Task) {
	p.sig.pending, p.sig.queue = p.k.dropQueued(p.sig.pending, p.sig.queue, set)
	for _, t := range ts {
		t.sig.pending, t.sig.queue = p.k.dropQueued(t.sig.pending, t.sig.queue, set)
	}
}

func (k *Kernel) dropQueued(pending SigSet, queue []SigInfo, set SigSet) (SigSet, []SigInfo) {
	kept := queue[:0]
	for _, i := range queue {
		switch {
		case Bit(i.Signo)&set == 0:
			kept = append(kept, i)
		case i.timer != nil:
			i.timer.dropped()
		default:
			k.uncharge(i)
		}
	}
	return pending &^ set, kept
}

// take removes the first queued instance of sig, clearing its pending bit
// when it was the last.
func take(pending *SigSet, queue *[]SigInfo, sig unix.Signal) SigInfo {
	var info SigInfo
	found, more := false, false
	kept := (*queue)[:0]
	for _, i := range *queue {
		if i.Signo == sig && !found {
			info, found = i, true
			continue
		}
		if i.Signo == sig {
			more = true
		}
		kept = append(kept, i)
	}
	*queue = kept
	if !more {
		*pending &^= Bit(sig)
	}
	info.Signo = sig
	return info
}

// dequeue takes the lowest pending signal in allowed, the thread's own
// first (synchronous faults are queued there), then the process's. The
// signal of a timer set again or deleted since it was queued is dropped
// here, as Linux drops it at dequeue.
func (t *Task) dequeue(allowed SigSet) (SigInfo, bool) {
	for {
		var info SigInfo
		p := t.Proc
		if set := t.sig.pending & allowed; set != 0 {
			info = take(&t.sig.pending, &t.sig.queue, lowest(set))
		} else if set := p.sig.pending & allowed; set != 0 {
			info = take(&p.sig.pending, &p.sig.queue, lowest(set))
		} else {
			return SigInfo{}, false
		}
		p.k.uncharge(info)
		if info.timer == nil || info.timer.delivered(&info) {
			return info, true
		}
	}
}

func lowest(set SigSet) unix.Signal {
	sig := unix.Signal(1)
	for set&1 == 0 {
		set >>= 1
		sig++
	}
	return sig
}

// terminate ends the process by a signal. Like Linux, the kernel reports
// only deaths by a fault (Task.kill), not a signal someone sent.
func (p *Process) terminate(sig unix.Signal) {
	select {
	case <-p.exited:
		return
	default:
	}
	p.exitBySignal(sig)
}

// exitBySignal ends the process with sig as the cause.
func (p *Process) exitBySignal(sig unix.Signal) {
	p.setTermSig(sig)
	p.Exit(128 + int(sig))
}

// setTermSig records sig as the cause of death unless one is recorded.
func (p *Process) setTermSig(sig unix.Signal) {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if p.sig.termSig == 0 {
		p.sig.termSig = sig
	}
}

// notifyParent tells p's parent that p changed state: SIGCHLD (unless the
// parent asked not to hear of stops) and a wake-up of its wait4 (sigMu held).
func (p *Process) notifyParent(code int32, status int32) {
	pp := p.parent
	if pp == nil {
		return
	}
	a := pp.sig.actions[unix.SIGCHLD-1]
	if (code == CldStopped || code == CldContinued) && a.Flags&SANoCldStop != 0 {
		pp.wakeWaiters()
		return
	}
	pp.queueSignal(nil, unix.SIGCHLD, &SigInfo{Code: code, Pid: int32(pp.NumberOf(p.PID)), UID: p.UID, Status: status})
	pp.wakeWaiters()
}

// wakeWaiters wakes the process's wait4 callers.
func (p *Process) wakeWaiters() {
	p.mu.Lock()
	close(p.childEvent)
	p.childEvent = make(chan struct{})
	p.mu.Unlock()
}

// Restart says how a system call interrupted by a signal resumes (Linux's
// ERESTART* codes).
type Restart int

const (
	// RestartNever: the call fails with EINTR (nothing recorded).
	RestartNever Restart = iota
	// RestartSys: re-executed when no handler runs or the handler has
	// SA_RESTART (ERESTARTSYS).
	RestartSys
	// RestartNoHandler: re-executed only when no handler runs
	// (ERESTARTNOHAND: nanosleep, poll, select, rt_sigsuspend).
	RestartNoHandler
)

// Interrupted records that the system call now returning EINTR may be
// re-executed as kind says, with a0 as it was at the call.
func (t *Task) Interrupted(kind Restart, a0 uint64) {
	t.sig.restart, t.sig.restartA0 = kind, a0
	t.sig.seenGen = 0 // HandleSignals must look
}

// sysRestartSyscall is restart_syscall's number on riscv64.
const sysRestartSyscall = 128

// restartSyscall makes the task re-execute its ECALL, as restart_syscall
// when the call left a continuation.
func (t *Task) restartSyscall() {
	t.Regs.PC -= 4
	t.Regs.X[arch.RegA0] = t.sig.restartA0
	if t.sig.restartBlock != nil {
		t.Regs.X[arch.RegA7] = sysRestartSyscall
	}
	t.sig.restart = RestartNever
}

// SetRestartBlock leaves a continuation for a call about to fail with
// EINTR: when no handler runs, restart_syscall calls it instead of
// re-executing the call from its start.
func (t *Task) SetRestartBlock(fn func(*Task) (uint64, error)) { t.sig.restartBlock = fn }

// TakeRestartBlock returns and clears the continuation (restart_syscall).
func (t *Task) TakeRestartBlock() func(*Task) (uint64, error) {
	fn := t.sig.restartBlock
	t.sig.restartBlock = nil
	return fn
}

// HandleSignals runs on each return to user mode: it waits while the
// process is stopped, applies default actions and sets up handler frames
// for the deliverable pending signals, and decides whether an interrupted
// system call is re-executed.
func (t *Task) HandleSignals() {
	// Inlined at every return to user mode: nothing new since the last
	// time (a restart or saved mask pending zeroes seenGen: Interrupted,
	// and BeginMaskedWait's critical section).
	if t.sig.seenGen != 0 && t.Proc.k.sigMu.gen.Load() == t.sig.seenGen {
		return
	}
	t.handleSignals()
}

func (t *Task) handleSignals() {
	for {
		next, sig, cont := t.deliverSignals()
		switch next {
		case deliveredAll:
			return
		case waitWhileStopped:
			select {
			case <-cont:
			case <-t.Proc.exited:
			}
		case dieBySignal:
			t.dumpCoreFor(sig)
			t.Proc.terminate(sig)
			return
		case dieBySegv:
			t.dumpCoreFor(unix.SIGSEGV)
			t.Proc.exitBySignal(unix.SIGSEGV)
			return
		}
	}
}

// What handleSignals does once deliverSignals has released sigMu.
type afterDelivery int

const (
	deliveredAll     afterDelivery = iota
	waitWhileStopped               // until the channel returned is closed, then deliver again
	dieBySignal                    // the default action of the signal returned: terminate
	dieBySegv                      // the frame for SIGSEGV could not be written
)

// deliverSignals applies default actions and sets up handler frames for
// the deliverable pending signals, under sigMu, until none is left or
// what comes next must happen without the lock.
func (t *Task) deliverSignals() (afterDelivery, unix.Signal, chan struct{}) {
	p := t.Proc
	p.k.sigMu.Lock()
	// Only a pass that changed signal state counts: one that found nothing
	// to do left other tasks nothing new, and counting it would send each
	// task that runs next through this lock in turn, for good.
	changed := false
	defer func() {
		if changed {
			t.sig.seenGen = p.k.sigMu.gen.Load() + 1 // the count after this Unlock
			p.k.sigMu.Unlock()
		} else {
			t.sig.seenGen = p.k.sigMu.gen.Load()
			p.k.sigMu.unlockUnchanged()
		}
	}()
	for {
		select {
		case <-p.exited:
			return deliveredAll, 0, nil
		default:
		}
		if p.sig.stopped {
			changed = true
			return waitWhileStopped, 0, p.sig.continued
		}
		if p.sig.trace.stopTask != nil {
			// This thread or another is in a signal-delivery-stop.
			return waitWhileStopped, 0, p.sig.trace.resume
		}
		info, ok := t.takeInjected()
		if !ok {
			if info, ok = t.dequeue(^t.sig.mask); !ok {
				break
			}
			if p.traced() && info.Signo != unix.SIGKILL {
				changed = true
				return waitWhileStopped, 0, t.traceStop(info)
			}
		}
		changed = true
		sig := info.Signo
		act := p.sig.actions[sig-1]
		if act.Handler == SigIgnore {
			continue
		}
		if act.Handler == SigDefault || sig == unix.SIGKILL {
			if p.isInit() && !p.takesAsInit(sig, &info) {
				continue // unkillable init
			}
			switch defaultOf(sig) {
			case actIgnore, actContinue:
				continue
			case actStop:
				p.stop(sig)
				continue
			}
			return dieBySignal, sig, nil
		}
		if t.sig.restart != RestartNever {
			if t.sig.restart == RestartSys && act.Flags&SARestart != 0 {
				t.restartSyscall()
			}
			t.sig.restart, t.sig.restartBlock = RestartNever, nil
		}
		if !t.setupFrame(info, act) {
			// No room for the frame: SIGSEGV, fatal when it was the
			// signal being delivered (force_sigsegv).
			fmt.Printf("kernel: pid %d (%s) cannot take %s: bad signal stack at %#x\n",
				p.PID, p.Exe, unix.SignalName(sig), t.Regs.X[arch.RegSP])
			if sig == unix.SIGSEGV {
				return dieBySegv, sig, nil
			}
			t.forceSegv()
			continue
		}
		if act.Flags&SAResetHand != 0 {
			// Only the handler resets; the flags and mask stay, as
			// Linux's signal_setup_done (sigaction01).
			p.sig.actions[sig-1].Handler = SigDefault
		}
	}
	if t.sig.restart != RestartNever {
		changed = true
		t.restartSyscall()
	}
	if t.sig.hasSavedMask {
		changed = true
		t.sig.mask, t.sig.hasSavedMask = t.sig.savedMask, false
	}
	return deliveredAll, 0, nil
}

// stop stops p by sig: its tasks wait in HandleSignals until SIGCONT or
// SIGKILL (sigMu held).
func (p *Process) stop(sig unix.Signal) {
	p.sig.stopped = true
	p.sig.continued = make(chan struct{})
	p.sig.stopReport = sig
	p.sig.contReport = false
	p.notifyParent(CldStopped, int32(sig))
}

// forceSegv queues SIGSEGV from the kernel for the task, unblocked, its
// handler kept only if it is a handler (force_sig) (sigMu held).
func (t *Task) forceSegv() {
	p := t.Proc
	a := &p.sig.actions[unix.SIGSEGV-1]
	if a.Handler == SigIgnore || t.sig.mask&Bit(unix.SIGSEGV) != 0 {
		*a = SigAction{}
	}
	t.sig.mask &^= Bit(unix.SIGSEGV)
	t.sig.pending |= Bit(unix.SIGSEGV)
	t.sig.queue = append(t.sig.queue, SigInfo{Signo: unix.SIGSEGV, Code: SIKernel})
}

// raiseSegv is forceSegv under sigMu.
func (t *Task) raiseSegv() {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	t.forceSegv()
}

// Fault delivers a synchronous signal for a fault at addr: to the handler
// when one is installed and the signal is not blocked, else the process
// dies with it, reported on the console with the trap's cause.
func (t *Task) Fault(sig unix.Signal, code int32, addr uint64, cause uint64) {
	p := t.Proc
	if !t.queueFault(sig, code, addr) {
		fmt.Printf("kernel: pid %d (%s) killed by %s: cause %d at pc %#x, address %#x\n",
			p.PID, p.Exe, unix.SignalName(sig), cause, t.Regs.PC, t.Regs.Tval)
		t.Exiting = true
		t.dumpCoreFor(sig)
		p.exitBySignal(sig)
	}
}

// queueFault queues a fault's signal on the task when a handler takes it
// and the task does not block it, or when the process is traced (its
// tracer hears of the fault first: a breakpoint's SIGTRAP), and reports
// whether it did. For a tracee a blocked or ignored fault signal gets
// its default action back and is unblocked, as Linux's force_sig_fault.
func (t *Task) queueFault(sig unix.Signal, code int32, addr uint64) bool {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	a := &t.Proc.sig.actions[sig-1]
	switch {
	case t.Proc.traced():
		if a.Handler == SigIgnore || t.sig.mask&Bit(sig) != 0 {
			*a = SigAction{}
			t.sig.mask &^= Bit(sig)
		}
	case a.Handler == SigDefault || a.Handler == SigIgnore || t.sig.mask&Bit(sig) != 0:
		return false
	}
	t.sig.pending |= Bit(sig)
	t.sig.queue = append(t.sig.queue, SigInfo{Signo: sig, Code: code, Addr: addr})
	return true
}

// Action returns the disposition of sig.
func (p *Process) Action(sig unix.Signal) SigAction {
	p.k.sigMu.Lock()
	defer p.k.sigMu.unlockUnchanged()
	return p.sig.actions[sig-1]
}

// SetAction sets the disposition of sig (not SIGKILL or SIGSTOP) and
// returns the old one. Setting SIG_IGN, or SIG_DFL for a signal ignored
// by default, discards its pending instances, as POSIX requires.
func (p *Process) SetAction(sig unix.Signal, a SigAction) SigAction {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	old := p.sig.actions[sig-1]
	a.Flags &= saKnown
	a.Mask &^= unblockable
	p.sig.actions[sig-1] = a
	if p.ignored(sig) {
		p.discard(Bit(sig), tasksOf(p))
	}
	return old
}

// Mask returns the task's blocked set.
func (t *Task) Mask() SigSet {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.unlockUnchanged()
	return t.sig.mask
}

// SetMask sets the task's blocked set (SIGKILL and SIGSTOP stay unblocked).
func (t *Task) SetMask(m SigSet) {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	t.setMaskLocked(m)
}

func (t *Task) setMaskLocked(m SigSet) {
	t.sig.mask = m &^ unblockable
	if t.mustHandle() {
		t.wakeUp()
	}
}

// Pending returns the signals pending for the task: its own and its
// process's.
func (t *Task) Pending() SigSet {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.unlockUnchanged()
	return t.sig.pending | t.Proc.sig.pending
}

// BeginMaskedWait sets the mask for the length of a wait that takes one
// (rt_sigsuspend, ppoll, pselect6, epoll_pwait): the old mask is kept and
// comes back when a handler for the interrupting signal returns, or at
// EndMaskedWait when the call ends without EINTR.
func (t *Task) BeginMaskedWait(mask SigSet) {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	t.sig.savedMask, t.sig.hasSavedMask = t.sig.mask, true
	t.sig.mask = mask &^ unblockable
}

// EndMaskedWait ends a BeginMaskedWait with the call's error: on EINTR the
// old mask stays saved for the signal frame, else it is restored now.
func (t *Task) EndMaskedWait(err error) {
	if err == unix.EINTR {
		return
	}
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	if t.sig.hasSavedMask {
		t.sig.mask, t.sig.hasSavedMask = t.sig.savedMask, false
	}
}

// Suspend implements rt_sigsuspend: the task waits with mask until a
// signal it must handle arrives; the old mask comes back after the
// handler. It always returns EINTR.
func (t *Task) Suspend(mask SigSet) error {
	t.BeginMaskedWait(mask)
	t.Block(nil, time.Time{})
	return unix.EINTR
}

// TakeSignal implements rt_sigtimedwait: it waits until one of set is
// pending, takes it and returns its information; ETIMEDOUT becomes EAGAIN,
// a signal outside set EINTR.
func (t *Task) TakeSignal(set SigSet, deadline time.Time) (SigInfo, error) {
	set &^= unblockable
	for {
		info, ok, old := t.takeOrWaitFor(set)
		if ok {
			return info, nil
		}
		err := t.Block(nil, deadline)
		if info, ok := t.endWaitFor(set, old); ok {
			return info, nil
		}
		if err == unix.ETIMEDOUT {
			return SigInfo{}, unix.EAGAIN
		}
		if err != nil {
			return SigInfo{}, unix.EINTR
		}
	}
}

// takeOrWaitFor takes a pending signal of set; when there is none, it
// unblocks set for the wait (waiting for them counts as not blocking
// them) and returns the mask to restore.
func (t *Task) takeOrWaitFor(set SigSet) (info SigInfo, ok bool, old SigSet) {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	if info, ok := t.dequeue(set); ok {
		return info, true, 0
	}
	old = t.sig.mask
	t.sig.mask &^= set
	t.sig.waiting = set
	return SigInfo{}, false, old
}

// endWaitFor ends takeOrWaitFor's wait: the mask comes back, and a
// signal of set that came is taken.
func (t *Task) endWaitFor(set, old SigSet) (SigInfo, bool) {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	t.sig.mask, t.sig.waiting = old, 0
	return t.dequeue(set)
}

// AltStack returns the alternate signal stack (sigaltstack's stack_t).
func (t *Task) AltStack() (sp, size uint64, flags int32) {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.unlockUnchanged()
	return t.altStack()
}

// SS_* flags of stack_t.
const (
	SSOnStack = 1
	SSDisable = 2
)

func (t *Task) altStack() (sp, size uint64, flags int32) {
	if t.sig.altSize == 0 {
		return 0, 0, SSDisable
	}
	if t.onAltStack(t.Regs.X[arch.RegSP]) {
		flags = SSOnStack
	}
	return t.sig.altSP, t.sig.altSize, flags
}

func (t *Task) onAltStack(sp uint64) bool {
	return t.sig.altSize != 0 && sp > t.sig.altSP && sp-t.sig.altSP <= t.sig.altSize
}

// MinSigStackSize is MINSIGSTKSZ on riscv64.
const MinSigStackSize = 2048

// SetAltStack implements sigaltstack's new stack: EPERM while running on
// the current one, ENOMEM below MINSIGSTKSZ.
func (t *Task) SetAltStack(sp, size uint64, flags int32) error {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	if t.onAltStack(t.Regs.X[arch.RegSP]) {
		return unix.EPERM
	}
	switch flags {
	case SSDisable:
		t.sig.altSP, t.sig.altSize = 0, 0
		return nil
	case 0:
	default:
		return unix.EINVAL
	}
	if size < MinSigStackSize {
		return unix.ENOMEM
	}
	t.sig.altSP, t.sig.altSize = sp, size
	return nil
}

// inheritSignals gives a forked child (or a new thread, thread true) its
// signal state: a copy of the mask; a new process also copies the
// dispositions, its process group and session; a thread gets no
// alternate stack, as on Linux.
func inheritSignals(parent, child *Task, thread, clearHandlers bool) {
	parent.Proc.k.sigMu.Lock()
	defer parent.Proc.k.sigMu.Unlock()
	child.sig.mask = parent.sig.mask
	if thread {
		return
	}
	child.sig.altSP, child.sig.altSize = parent.sig.altSP, parent.sig.altSize
	c, p := child.Proc, parent.Proc
	c.sig.actions = p.sig.actions
	c.sig.pgid, c.sig.sid = p.sig.pgid, p.sig.sid
	if clearHandlers {
		resetHandlers(c)
	}
}

// ResetSignalsForExec applies what execve does to signals: handlers go
// back to SIG_DFL (ignored signals stay ignored), the alternate stack
// goes; the mask and the pending signals stay.
func (t *Task) ResetSignalsForExec() {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	resetHandlers(t.Proc)
	t.Proc.sig.execed = true
	t.sig.altSP, t.sig.altSize = 0, 0
}

// resetHandlers puts p's handlers back to SIG_DFL, leaving ignored signals
// ignored (execve; clone3 with CLONE_CLEAR_SIGHAND, which glibc's
// posix_spawn and so system() and popen() use). sigMu is held.
func resetHandlers(p *Process) {
	for i, a := range p.sig.actions {
		if a.Handler != SigIgnore {
			p.sig.actions[i] = SigAction{}
		}
	}
}

// flushSignals drops what is queued on a task that ends, giving back what
// the entries counted; nothing is queued on it after (sigMu taken).
func (t *Task) flushSignals() {
	k := t.Proc.k
	k.sigMu.Lock()
	defer k.sigMu.Unlock()
	k.flushQueue(t.sig.queue)
	t.sig.queue, t.sig.pending, t.sig.left = nil, 0, true
}
