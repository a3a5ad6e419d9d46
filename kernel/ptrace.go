package kernel

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/mm"
)

// Tracing (ptrace(2)), as Linux's kernel/ptrace.c: a tracer links a
// process to itself; the tracee then stops on every signal but SIGKILL
// before acting on it (a signal-delivery-stop), its tracer's wait reports
// the stop, and a resume request lets it go on with the signal, another
// or none. A process is traced as a whole: the thread that takes a signal
// stops, and while it is stopped its other threads wait too, where Linux
// would let them run.

// CldTrapped is the si_code of a traced child's stop (CLD_TRAPPED).
const CldTrapped = 4

// traceState is a process's side of tracing (guarded by sigMu).
type traceState struct {
	tracer *Process // nil: not traced
	seized bool     // PTRACE_SEIZE: no SIGSTOP at attach, no SIGTRAP at exec
	// tracees are the processes this one traces.
	tracees map[*Process]struct{}

	stopTask *Task         // the thread in a signal-delivery-stop, nil when none
	resume   chan struct{} // closed when that stop ends
	info     SigInfo       // the signal the stop reports (PTRACE_GETSIGINFO)
	report   unix.Signal   // for the tracer's wait: stopped, not yet reported
}

// traced reports whether p has a tracer (sigMu held).
func (p *Process) traced() bool { return p.sig.trace.tracer != nil }

// link makes tracer trace p (sigMu held).
func (p *Process) link(tracer *Process, seized bool) {
	p.sig.trace.tracer, p.sig.trace.seized = tracer, seized
	if tracer.sig.trace.tracees == nil {
		tracer.sig.trace.tracees = map[*Process]struct{}{}
	}
	tracer.sig.trace.tracees[p] = struct{}{}
}

// unlink ends p's tracing, resuming a stop with sig (sigMu held).
func (p *Process) unlink(sig unix.Signal) {
	tr := &p.sig.trace
	if tr.tracer != nil {
		delete(tr.tracer.sig.trace.tracees, p)
	}
	p.resumeTraced(sig)
	*tr = traceState{tracees: tr.tracees}
}

// traceStop puts t into a signal-delivery-stop for info and tells the
// tracer (sigMu held). It returns the channel closed when the stop ends.
func (t *Task) traceStop(info SigInfo) chan struct{} {
	p := t.Proc
	tr := &p.sig.trace
	tr.stopTask, tr.resume, tr.info, tr.report = t, make(chan struct{}), info, info.Signo
	tracer := tr.tracer
	if tracer.sig.actions[unix.SIGCHLD-1].Flags&SANoCldStop == 0 {
		tracer.queueSignal(nil, unix.SIGCHLD, &SigInfo{Code: CldTrapped, Pid: int32(tracer.NumberOf(p.PID)), UID: p.UID, Status: int32(info.Signo)})
	}
	tracer.wakeWaiters()
	return tr.resume
}

// resumeTraced ends p's signal-delivery-stop, if it is in one: its thread
// goes on with sig (0: none), as Linux's ptrace_signal takes the exit code
// the tracer left (sigMu held).
func (p *Process) resumeTraced(sig unix.Signal) {
	tr := &p.sig.trace
	t := tr.stopTask
	if t == nil {
		return
	}
	if sig != 0 {
		info := tr.info
		if sig != info.Signo {
			// A signal other than the one stopped on is sent by the
			// tracer (ptrace_signal's SI_USER).
			info = SigInfo{Signo: sig, Code: SIUser, Pid: int32(tr.tracer.PID), UID: tr.tracer.UID}
		}
		t.sig.injected = &info
	}
	tr.stopTask, tr.report = nil, 0
	close(tr.resume)
}

// takeInjected returns the signal the tracer resumed t with, if any
// (sigMu held). A blocked one is queued again instead, as Linux's
// ptrace_signal does.
func (t *Task) takeInjected() (SigInfo, bool) {
	inj := t.sig.injected
	if inj == nil {
		return SigInfo{}, false
	}
	t.sig.injected = nil
	if t.sig.mask&Bit(inj.Signo) != 0 {
		t.Proc.enqueue(&t.sig.pending, &t.sig.queue, *inj)
		return SigInfo{}, false
	}
	return *inj, true
}

// untraceAll detaches p's tracees as p exits (Linux's exit_ptrace): a
// stopped one goes on without the signal it stopped on, as on Linux.
func (p *Process) untraceAll() {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	for c := range p.sig.trace.tracees {
		c.unlink(0)
	}
	p.sig.trace.tracees = nil
}

// notifyTracerOfExit tells a tracer that is not p's parent that p died,
// as Linux's exit_notify does before the parent hears of it.
func (p *Process) notifyTracerOfExit() {
	tracer := p.tracerIfNotParent()
	if tracer != nil {
		tracer.wakeWaiters()
	}
}

// tracerIfNotParent sends SIGCHLD for p's exit to a tracer that is not
// its parent and returns it, or nil.
func (p *Process) tracerIfNotParent() *Process {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	tracer := p.sig.trace.tracer
	if tracer == nil || tracer == p.parent {
		return nil
	}
	code, status := p.exitInfo()
	tracer.queueSignal(nil, unix.SIGCHLD, &SigInfo{Code: code, Pid: int32(tracer.NumberOf(p.PID)), UID: p.UID, Status: status})
	return tracer
}

// untraceDead ends the tracing of a dead tracee its tracer waited for,
// reporting whether p traced it (the tracer reaps nothing: the parent
// does).
func (p *Process) untraceDead(c *Process) bool {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if c.sig.trace.tracer != p {
		return false
	}
	c.unlink(0)
	return true
}

// traceesOf returns the processes p traces that are not its children.
func (p *Process) traceesOf() []*Process {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	var out []*Process
	for c := range p.sig.trace.tracees {
		if c.parent != p {
			out = append(out, c)
		}
	}
	return out
}

// PtraceTraceme implements PTRACE_TRACEME: the parent traces the caller.
// EPERM when it is traced already.
func (t *Task) PtraceTraceme() error {
	p := t.Proc
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if p.traced() {
		return unix.EPERM
	}
	if pp := p.parent; pp != nil && !pp.Gone() {
		p.link(pp, false)
	}
	return nil
}

// PtraceAttach implements PTRACE_ATTACH and PTRACE_SEIZE with Linux's
// checks (ptrace_attach): ESRCH when no thread has the id; EPERM for the
// caller's own process, one that is exiting or traced already, or one
// that ptrace_may_access refuses (MayPtrace: other ids, or not dumpable,
// without CAP_SYS_PTRACE). ATTACH sends the tracee SIGSTOP.
func (t *Task) PtraceAttach(tid int, seize bool) error {
	target := t.FindTask(tid)
	if target == nil {
		return unix.ESRCH
	}
	q := target.Proc
	if q == t.Proc || !t.MayPtrace(q) {
		return unix.EPERM
	}
	p := t.Proc
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if q.Gone() || q.traced() || p.Gone() {
		return unix.EPERM
	}
	q.link(p, seize)
	if !seize {
		q.queueSignal(nil, unix.SIGSTOP, nil)
	}
	return nil
}

// Tracee returns the process with thread tid that t's process traces,
// as Linux's ptrace_check_attach: ESRCH unless it is traced by the caller
// and, when stopped is true, in a signal-delivery-stop.
func (t *Task) Tracee(tid int, stopped bool) (*Process, error) {
	target := t.FindTask(tid)
	if target == nil {
		return nil, unix.ESRCH
	}
	q := target.Proc
	p := t.Proc
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if q.sig.trace.tracer != p || q.Gone() || stopped && q.sig.trace.stopTask == nil {
		return nil, unix.ESRCH
	}
	return q, nil
}

// validSignal is Linux's valid_signal for a resume's signal: EIO past 64.
func validSignal(sig uint64) error {
	if sig > NumSignals {
		return unix.EIO
	}
	return nil
}

// PtraceCont implements PTRACE_CONT: the stopped tracee q goes on with
// signal sig, or none.
func (p *Process) PtraceCont(q *Process, sig uint64) error {
	if err := validSignal(sig); err != nil {
		return err
	}
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if q.sig.trace.tracer != p || q.sig.trace.stopTask == nil {
		return unix.ESRCH
	}
	q.resumeTraced(unix.Signal(sig))
	return nil
}

// PtraceDetach implements PTRACE_DETACH: q is no longer traced and goes
// on with signal sig, or none.
func (p *Process) PtraceDetach(q *Process, sig uint64) error {
	if err := validSignal(sig); err != nil {
		return err
	}
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if q.sig.trace.tracer != p {
		return unix.ESRCH
	}
	q.unlink(unix.Signal(sig))
	return nil
}

// PtraceKill implements PTRACE_KILL: SIGKILL, stopped or not.
func (p *Process) PtraceKill() { p.Signal(unix.SIGKILL, nil) }

// TraceSigInfo is the signal p's stop reports (PTRACE_GETSIGINFO).
func (p *Process) TraceSigInfo() SigInfo {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	return p.sig.trace.info
}

// SetTraceSigInfo replaces it (PTRACE_SETSIGINFO): the signal a resume
// with the same number delivers.
func (p *Process) SetTraceSigInfo(i SigInfo) {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	p.sig.trace.info = i
}

// TraceRegs is the user register frame of p's stopped thread; the
// tracee does not run while the caller holds it (it is stopped until
// the caller, its tracer, resumes it).
func (p *Process) TraceRegs() *arch.Frame {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if t := p.sig.trace.stopTask; t != nil {
		return t.Regs
	}
	return nil
}

// PeekWord reads the word at addr in p's memory (PTRACE_PEEKDATA): EIO
// when any of its bytes cannot be read.
func (p *Process) PeekWord(addr uint64) (uint64, error) {
	var b [8]byte
	if err := p.forceCopy(addr, b[:], false); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// PokeWord writes the word at addr in p's memory whatever its protection
// (PTRACE_POKEDATA: a breakpoint goes into read-only text, copied on
// write): EIO when any of its bytes cannot be written.
func (p *Process) PokeWord(addr, word uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], word)
	return p.forceCopy(addr, b[:], true)
}

func (p *Process) forceCopy(addr uint64, b []byte, write bool) error {
	if addr > uint64(mm.MaxUserVA)-uint64(len(b)) {
		return unix.EIO
	}
	p.Lock()
	defer p.Unlock()
	if p.AS.ForceCopy(uintptr(addr), b, write) != nil {
		return unix.EIO
	}
	return nil
}

// trapAfterExec sends a traced process SIGTRAP once execve has replaced
// its program, so that it stops for its tracer at the new program's
// start (Linux's PTRACE_EVENT_EXEC without PTRACE_O_TRACEEXEC; not for
// a seized tracee).
func (p *Process) trapAfterExec() {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if p.traced() && !p.sig.trace.seized {
		p.queueSignal(nil, unix.SIGTRAP, &SigInfo{Code: SIUser, Pid: int32(p.PID), UID: p.UID})
	}
}
