package kernel

import (
	"time"

	"golang.org/x/sys/unix"
)

// realTimer is a process's ITIMER_REAL: SIGALRM when it expires, then
// every interval if that is not zero.
type realTimer struct {
	timer    *time.Timer
	deadline time.Time
	interval time.Duration
	gen      int // bumped on every change, so a stale expiry does nothing
}

// RealTimer returns the time left on ITIMER_REAL (0: disarmed) and its
// interval.
func (p *Process) RealTimer() (left, interval time.Duration) {
	p.k.sigMu.Lock()
	defer p.k.sigMu.unlockUnchanged()
	return p.realTimerLocked()
}

func (p *Process) realTimerLocked() (left, interval time.Duration) {
	it := &p.sig.itimer
	if it.timer == nil {
		return 0, it.interval
	}
	// An expired timer whose signal is being sent still counts as armed.
	return max(time.Until(it.deadline), time.Microsecond), it.interval
}

// SetRealTimer arms ITIMER_REAL to expire after value (0 disarms) and then
// every interval; it returns the old setting, as setitimer(2) does.
func (p *Process) SetRealTimer(value, interval time.Duration) (oldLeft, oldInterval time.Duration) {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	oldLeft, oldInterval = p.realTimerLocked()
	it := &p.sig.itimer
	if it.timer != nil {
		it.timer.Stop()
		it.timer = nil
	}
	it.gen++
	it.interval = interval
	if value > 0 {
		p.armRealTimer(value)
	} else {
		it.interval = 0
	}
	return oldLeft, oldInterval
}

// armRealTimer starts the timer for d (sigMu held).
func (p *Process) armRealTimer(d time.Duration) {
	it := &p.sig.itimer
	gen := it.gen
	it.deadline = time.Now().Add(d)
	it.timer = time.AfterFunc(d, func() { p.realTimerExpired(gen) })
}

func (p *Process) realTimerExpired(gen int) {
	if p.realTimerFired(gen) {
		p.terminate(unix.SIGALRM)
	}
}

// realTimerFired rearms an interval timer and sends SIGALRM, unless the
// timer was set again since it was armed as gen; it reports whether the
// signal is fatal now.
func (p *Process) realTimerFired(gen int) bool {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	it := &p.sig.itimer
	if it.gen != gen {
		return false
	}
	it.timer = nil
	if it.interval > 0 {
		p.armRealTimer(it.interval)
	}
	fatal, _ := p.queueSignal(nil, unix.SIGALRM, &SigInfo{Code: SIKernel})
	return fatal
}

// stopRealTimer disarms the timer of an exiting process.
func (p *Process) stopRealTimer() {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if it := &p.sig.itimer; it.timer != nil {
		it.timer.Stop()
		it.timer = nil
		it.gen++
	}
}
