package kernel

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The timers on a process's CPU time: ITIMER_VIRTUAL (user time, SIGVTALRM),
// ITIMER_PROF (user and system time, SIGPROF) and RLIMIT_CPU (user and
// system time: SIGXCPU at the soft limit and every second after, SIGKILL
// at the hard one). Linux checks them at each tick on the CPU that runs
// the process; here a goroutine samples the process's time every
// cpuTimerTick while one is armed (Linux's tick at HZ=250 is 4 ms), so
// a timer fires within a tick of CPU time after its expiry.
const cpuTimerTick = 4 * time.Millisecond

// cpuTimers are a process's CPU-time timers. mu comes after sigMu (a
// POSIX timer is counted under it) and before the process's mu (the
// sampler reads RLIMIT_CPU under it), never the other way.
type cpuTimers struct {
	mu       sync.Mutex
	virtual  cpuTimer
	prof     cpuTimer
	posix    int  // POSIX timers armed on a CPU clock (posixtimers.go)
	watching bool // the sampling goroutine runs
}

// cpuTimer is one interval timer on a CPU clock.
type cpuTimer struct {
	expiry   time.Duration // on the clock; 0: disarmed
	interval time.Duration
}

// cpuClocks returns the process's user time, and its user and system
// time, the clocks of ITIMER_VIRTUAL and ITIMER_PROF.
func (p *Process) cpuClocks() (virtual, prof time.Duration) {
	u := p.Usage()
	return u.User, u.User + u.System
}

// CPUTimer returns the time left on ITIMER_VIRTUAL or ITIMER_PROF (0:
// disarmed) and its interval.
func (p *Process) CPUTimer(which int) (left, interval time.Duration) {
	virtual, prof := p.cpuClocks()
	ct := &p.cpuTimers
	ct.mu.Lock()
	defer ct.mu.Unlock()
	it, now := &ct.virtual, virtual
	if which == unix.ITIMER_PROF {
		it, now = &ct.prof, prof
	}
	if it.expiry == 0 {
		return 0, it.interval
	}
	// One that expired and is about to fire is a tick away, as on Linux.
	return max(it.expiry-now, cpuTimerTick), it.interval
}

// SetCPUTimer arms ITIMER_VIRTUAL or ITIMER_PROF to expire after value of
// its clock (0 disarms) and then every interval; it returns the old
// setting, as setitimer(2) does.
func (p *Process) SetCPUTimer(which int, value, interval time.Duration) (oldLeft, oldInterval time.Duration) {
	oldLeft, oldInterval = p.CPUTimer(which)
	virtual, prof := p.cpuClocks()
	ct := &p.cpuTimers
	ct.mu.Lock()
	it, now := &ct.virtual, virtual
	if which == unix.ITIMER_PROF {
		it, now = &ct.prof, prof
	}
	*it = cpuTimer{}
	if value > 0 {
		// A tick more, as Linux adds one: the timer runs at least value.
		*it = cpuTimer{expiry: now + value + cpuTimerTick, interval: interval}
	}
	ct.mu.Unlock()
	if value > 0 {
		p.watchCPU()
	}
	return oldLeft, oldInterval
}

// watchCPU starts the sampling goroutine unless it runs.
func (p *Process) watchCPU() { p.countCPUTimer(0) }

// countCPUTimer counts a POSIX timer armed on a CPU clock (delta 1) or no
// longer (-1), and starts the sampling goroutine for one armed unless it
// runs (sigMu may be held: it comes before mu).
func (p *Process) countCPUTimer(delta int) {
	ct := &p.cpuTimers
	ct.mu.Lock()
	ct.posix += delta
	start := delta >= 0 && !ct.watching
	ct.watching = ct.watching || delta >= 0
	ct.mu.Unlock()
	if start {
		go p.sampleCPU()
	}
}

// watchCPULimit starts sampling when RLIMIT_CPU is finite (a new limit, or
// one a child inherits).
func (p *Process) watchCPULimit() {
	if p.Limit(unix.RLIMIT_CPU).Cur != RlimInfinity {
		p.watchCPU()
	}
}

// sampleCPU checks the timers every tick until none is armed or the
// process exits.
func (p *Process) sampleCPU() {
	tick := time.NewTicker(cpuTimerTick)
	defer tick.Stop()
	for {
		select {
		case <-p.exited:
			return
		case <-tick.C:
		}
		if !p.checkCPUTimers() {
			return
		}
	}
}

// checkCPUTimers sends the signals of the timers and limits the process's
// CPU time has reached, and reports whether any is still armed (when not,
// sampling stops, decided under the lock that arming takes).
func (p *Process) checkCPUTimers() bool {
	virtual, prof := p.cpuClocks()
	var sigs []unix.Signal
	if sig := p.checkCPULimit(prof); sig != 0 {
		sigs = append(sigs, sig)
	}
	fatal := p.expireCPUTimers()
	ct := &p.cpuTimers
	ct.mu.Lock()
	if ct.virtual.fire(virtual) {
		sigs = append(sigs, unix.SIGVTALRM)
	}
	if ct.prof.fire(prof) {
		sigs = append(sigs, unix.SIGPROF)
	}
	armed := ct.virtual.expiry != 0 || ct.prof.expiry != 0 || ct.posix > 0 || p.Limit(unix.RLIMIT_CPU).Cur != RlimInfinity
	if !armed {
		ct.watching = false
	}
	ct.mu.Unlock()
	for _, sig := range sigs {
		p.Signal(sig, &SigInfo{Code: SIKernel})
	}
	for _, sig := range fatal {
		p.terminate(sig)
	}
	return armed
}

// fire reports whether the timer expired at now on its clock, and rearms
// it for its interval after the expiry or disarms it.
func (it *cpuTimer) fire(now time.Duration) bool {
	if it.expiry == 0 || now < it.expiry {
		return false
	}
	if it.interval > 0 {
		it.expiry += it.interval
		it.expiry = max(it.expiry, now+1) // one signal per tick, as Linux
	} else {
		it.expiry = 0
	}
	return true
}

// checkCPULimit returns the signal RLIMIT_CPU sends at prof, the process's
// user and system time (0: none): SIGKILL at the hard limit; SIGXCPU at
// the soft one, which then moves a second on, as Linux raises rlim_cur so
// that the signal comes every second.
func (p *Process) checkCPULimit(prof time.Duration) unix.Signal {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := &p.limits[unix.RLIMIT_CPU]
	seconds := uint64(prof / time.Second)
	switch {
	case l.Max != RlimInfinity && seconds >= l.Max:
		return unix.SIGKILL
	case l.Cur != RlimInfinity && seconds >= l.Cur:
		l.Cur++
		return unix.SIGXCPU
	}
	return 0
}
