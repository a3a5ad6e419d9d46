package kernel

import (
	"math"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// POSIX per-process timers (timer_create(2) and its calls), kept as Linux
// keeps them: each timer owns one signal (its sigqueue), queued at most
// once, and dropped when taken if the timer was set again or deleted
// since (Linux 6.13 on). A periodic timer whose signal is pending is not rearmed; its
// delivery rearms it past now and counts the periods missed as the
// overrun that si_overrun and timer_getoverrun report (Linux's
// posixtimer_rearm), so a blocked signal or a 1 ns interval costs nothing
// while the signal waits. A timer on the wall or monotonic clocks is a Go
// timer; one on a CPU clock is checked by the process's CPU-time sampler
// (cputimers.go). Timers live under sigMu with the signals they send.

// SITimer is si_code SI_TIMER.
const SITimer = -2

// posixTimerCharge is what a timer costs the kernel-wide budget: the
// timer and its Go timer, about as much as Linux's k_itimer and sigqueue.
const posixTimerCharge = 384

// posixTimers is a process's table of timers (sigMu).
type posixTimers struct {
	byID map[int32]*posixTimer
	next int32 // the next id to try, as Linux's next_posix_timer_id
	// held counts the timers charged: those in byID, and deleted ones
	// whose signal is still queued (Linux frees a timer at that point).
	held int
}

// posixTimer is one timer.
type posixTimer struct {
	p      *Process
	id     int32
	clock  int32
	thread *Task // CLOCK_THREAD_CPUTIME_ID's thread
	cpu    bool  // on a CPU clock: the sampler checks it

	notify int32       // linux.Sigev*: the kernel sends SIGEV_THREAD's signal as SIGEV_SIGNAL's
	signo  unix.Signal // its signal
	value  uint64      // si_value
	target *Task       // SIGEV_THREAD_ID's thread; nil: the process

	at       time.Duration // the expiry, on its clock (k.Uptime for the wall and monotonic clocks)
	interval time.Duration
	active   bool // waiting for its expiry (Linux's it_active)
	requeue  bool // a periodic timer whose signal is pending: delivery rearms it
	timer    *time.Timer
	gen      uint64 // bumped by every setting: a stale expiry or delivery does nothing

	queued        bool   // its signal is pending
	queuedGen     uint64 // the setting it was sent for: stale once gen moves on
	queuedOverrun int64  // expiries while its signal was pending (Linux's si_overrun)
	overrun       int64  // periods missed since the last rearm (it_overrun)
	overrunLast   int64  // what timer_getoverrun reports (it_overrun_last)

	deleted, freed bool // out of the table; its charge given back
}

// TimerEvent is how a new timer notifies: a sigevent's notify, signal,
// value and thread.
type TimerEvent struct {
	Notify int32
	Signo  unix.Signal
	Value  uint64
	TID    int
}

// timerClockKnown reports whether clock is one a timer may use: EINVAL
// for an unknown clock, EOPNOTSUPP for the clocks Linux has no timers on,
// EPERM for the alarm clocks without CAP_WAKE_ALARM.
func (t *Task) timerClockKnown(clock int32) error {
	switch clock {
	case unix.CLOCK_REALTIME, unix.CLOCK_MONOTONIC, unix.CLOCK_BOOTTIME, unix.CLOCK_TAI,
		unix.CLOCK_PROCESS_CPUTIME_ID, unix.CLOCK_THREAD_CPUTIME_ID:
		return nil
	case unix.CLOCK_REALTIME_ALARM, unix.CLOCK_BOOTTIME_ALARM:
		if t.Proc.Caps.Effective&(1<<CapWakeAlarm) == 0 {
			return unix.EPERM
		}
		return nil
	case unix.CLOCK_MONOTONIC_RAW, unix.CLOCK_REALTIME_COARSE, unix.CLOCK_MONOTONIC_COARSE:
		return unix.EOPNOTSUPP
	}
	return unix.EINVAL
}

// CreateTimer makes a timer on clock that notifies as ev says (nil: SIGALRM
// to the process with the timer's id as si_value), disarmed, and returns
// its id. Each costs the kernel-wide budget and counts against
// RLIMIT_SIGPENDING as Linux's preallocated signal does: EAGAIN past either.
func (t *Task) CreateTimer(clock int32, ev *TimerEvent) (int32, error) {
	if err := t.timerClockKnown(clock); err != nil {
		return 0, err
	}
	p := t.Proc
	pt := &posixTimer{p: p, clock: clock, notify: linux.SigevSignal, signo: unix.SIGALRM,
		cpu: clock == unix.CLOCK_PROCESS_CPUTIME_ID || clock == unix.CLOCK_THREAD_CPUTIME_ID, overrun: -1}
	if clock == unix.CLOCK_THREAD_CPUTIME_ID {
		pt.thread = t
	}
	if ev != nil {
		switch ev.Notify {
		case linux.SigevSignal | linux.SigevThreadID:
			target := t.FindTask(ev.TID)
			if target == nil || target.Proc != p {
				return 0, unix.EINVAL
			}
			pt.target = target
			fallthrough
		case linux.SigevSignal, linux.SigevThread:
			if ev.Signo <= 0 || ev.Signo > NumSignals {
				return 0, unix.EINVAL
			}
		case linux.SigevNone:
		default:
			return 0, unix.EINVAL
		}
		pt.notify, pt.signo, pt.value = ev.Notify, ev.Signo, ev.Value
	}
	limit := p.Limit(unix.RLIMIT_SIGPENDING).Cur
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	ts := &p.sig.timers
	if uint64(ts.held) >= limit || mm.Charged.Charge(posixTimerCharge) != nil {
		return 0, unix.EAGAIN
	}
	ts.held++
	if ts.byID == nil {
		ts.byID = map[int32]*posixTimer{}
	}
	for ts.byID[ts.next] != nil {
		ts.next = (ts.next + 1) & math.MaxInt32
	}
	pt.id = ts.next
	ts.next = (ts.next + 1) & math.MaxInt32
	if ev == nil {
		pt.value = uint64(pt.id)
	}
	ts.byID[pt.id] = pt
	return pt.id, nil
}

// timerLocked returns the process's timer id (sigMu held): EINVAL when
// there is none.
func (p *Process) timerLocked(id int32) (*posixTimer, error) {
	if pt := p.sig.timers.byID[id]; pt != nil {
		return pt, nil
	}
	return nil, unix.EINVAL
}

// DeleteTimer deletes a timer; a signal it queued is dropped when taken,
// as Linux's since 6.13.
func (p *Process) DeleteTimer(id int32) error {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	pt, err := p.timerLocked(id)
	if err != nil {
		return err
	}
	pt.delete()
	return nil
}

// delete disarms pt and takes it out of its process's table (sigMu held).
func (pt *posixTimer) delete() {
	pt.disarm()
	delete(pt.p.sig.timers.byID, pt.id)
	pt.deleted = true
	pt.release()
}

// release gives back a deleted timer's charge once its signal is no
// longer queued (sigMu held).
func (pt *posixTimer) release() {
	if pt.deleted && !pt.queued && !pt.freed {
		pt.freed = true
		pt.p.sig.timers.held--
		mm.Charged.Uncharge(posixTimerCharge)
	}
}

// deleteTimers deletes every timer of the process: at exec, where their
// queued signals stay (dropped when taken), and at exit, where the
// signals queued on it and its threads are flushed: nothing takes them
// any more.
func (p *Process) deleteTimers(exiting bool) {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	for _, pt := range p.sig.timers.byID {
		pt.delete()
	}
	if exiting {
		p.k.flushQueue(p.sig.queue)
		p.sig.queue, p.sig.pending = nil, 0
		for _, t := range tasksOf(p) {
			p.k.flushQueue(t.sig.queue)
			t.sig.queue, t.sig.pending = nil, 0
		}
	}
}

// now reads the timer's clock: the thread's or the process's CPU time,
// or the monotonic time its expiry is kept on.
func (pt *posixTimer) now() time.Duration {
	switch {
	case pt.thread != nil:
		u := pt.thread.Usage()
		return u.User + u.System
	case pt.cpu:
		u := pt.p.Usage()
		return u.User + u.System
	}
	return pt.p.k.Uptime()
}

// disarm stops the timer (sigMu held).
func (pt *posixTimer) disarm() {
	pt.setActive(false)
	if pt.timer != nil {
		pt.timer.Stop()
		pt.timer = nil
	}
	pt.gen++
	pt.requeue = false
}

// setActive marks the timer as waiting for its expiry or not, counting the
// CPU-clock ones the sampler must watch (sigMu held).
func (pt *posixTimer) setActive(active bool) {
	if pt.active == active {
		return
	}
	pt.active = active
	if pt.cpu && pt.notify != linux.SigevNone {
		delta := -1
		if active {
			delta = 1
		}
		pt.p.countCPUTimer(delta)
	}
}

// arm starts waiting for pt.at (sigMu held). A SIGEV_NONE timer waits for
// nothing: timer_gettime computes its state.
func (pt *posixTimer) arm() {
	pt.setActive(true)
	if pt.cpu || pt.notify == linux.SigevNone {
		return
	}
	gen := pt.gen
	pt.timer = time.AfterFunc(pt.at-pt.p.k.Uptime(), func() { pt.p.posixTimerExpired(pt, gen) })
}

// SetTimer arms a timer as timer_settime(2) does: value from now, or with
// abs the time value on the timer's clock (0 disarms), then every interval;
// it returns the old setting as GetTimer does.
func (t *Task) SetTimer(id int32, abs bool, value, interval time.Duration) (oldValue, oldInterval time.Duration, err error) {
	p := t.Proc
	var fatal unix.Signal
	defer func() {
		if fatal != 0 {
			p.terminate(fatal) // after sigMu is released
		}
	}()
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	pt, err := p.timerLocked(id)
	if err != nil {
		return 0, 0, err
	}
	oldValue, oldInterval = pt.get()
	pt.disarm()
	pt.interval, pt.overrunLast, pt.overrun = 0, 0, -1
	if value == 0 {
		return oldValue, oldInterval, nil
	}
	pt.interval = interval
	now := pt.now()
	pt.at = now + value
	if abs {
		pt.at = value
		if !pt.cpu {
			onClock, _ := t.ClockTime(pt.clock)
			pt.at = now + value - onClock
		}
	}
	if pt.cpu && pt.at <= now && pt.notify != linux.SigevNone {
		if pt.expire(now) { // due already: the sampler's next tick is late
			fatal = pt.signo
		}
		return oldValue, oldInterval, nil
	}
	pt.arm()
	return oldValue, oldInterval, nil
}

// GetTimer returns the time to a timer's next expiry (0: disarmed) and its
// interval, as timer_gettime(2).
func (p *Process) GetTimer(id int32) (value, interval time.Duration, err error) {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	pt, err := p.timerLocked(id)
	if err != nil {
		return 0, 0, err
	}
	value, interval = pt.get()
	return value, interval, nil
}

// get is common_timer_get (sigMu held): a periodic timer whose signal is
// pending, or a SIGEV_NONE one, is moved on past now first; an expired
// timer still waiting reads 1 ns, an expired SIGEV_NONE one 0.
func (pt *posixTimer) get() (value, interval time.Duration) {
	none := pt.notify == linux.SigevNone
	if pt.interval == 0 && !pt.active {
		return 0, 0
	}
	now := pt.now()
	if pt.interval > 0 && (pt.requeue || none) {
		pt.overrun += pt.forward(now)
	}
	if left := pt.at - now; left > 0 {
		return left, pt.interval
	}
	if none {
		return 0, pt.interval
	}
	return time.Nanosecond, pt.interval
}

// forward moves a periodic timer's expiry past now and returns by how
// many periods (hrtimer_forward).
func (pt *posixTimer) forward(now time.Duration) int64 {
	if now < pt.at {
		return 0
	}
	n := int64((now-pt.at)/pt.interval) + 1
	pt.at += time.Duration(n) * pt.interval
	return n
}

// TimerOverrun is timer_getoverrun(2): the overrun of the timer's last
// delivered signal, at most DELAYTIMER_MAX.
func (p *Process) TimerOverrun(id int32) (int, error) {
	p.k.sigMu.Lock()
	defer p.k.sigMu.unlockUnchanged()
	pt, err := p.timerLocked(id)
	if err != nil {
		return 0, err
	}
	return overrunToInt(pt.overrunLast, 0), nil
}

// overrunToInt is Linux's timer_overrun_to_int: the sum capped at INT_MAX.
func overrunToInt(overrun, base int64) int {
	return int(min(overrun+base, math.MaxInt32))
}

// posixTimerExpired is a wall or monotonic timer's Go timer.
func (p *Process) posixTimerExpired(pt *posixTimer, gen uint64) {
	if p.expireTimer(pt, gen) {
		p.terminate(pt.signo)
	}
}

func (p *Process) expireTimer(pt *posixTimer, gen uint64) bool {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	if pt.gen != gen || !pt.active {
		return false
	}
	pt.timer = nil
	return pt.expire(p.k.Uptime())
}

// expireCPUTimers expires the CPU-clock timers that are due (the sampler,
// every tick) and returns the signals that are fatal now.
func (p *Process) expireCPUTimers() []unix.Signal {
	p.k.sigMu.Lock()
	defer p.k.sigMu.Unlock()
	var fatal []unix.Signal
	for _, pt := range p.sig.timers.byID {
		if !pt.cpu || !pt.active || pt.notify == linux.SigevNone {
			continue
		}
		if now := pt.now(); now >= pt.at && pt.expire(now) {
			fatal = append(fatal, pt.signo)
		}
	}
	return fatal
}

// expire sends the timer's signal at its expiry (posix_timer_fn, sigMu
// held) and reports whether it is fatal now. A periodic timer waits for
// the signal's delivery to rearm; one whose signal is ignored is rearmed
// now, at least a tick on (as Linux, so that it does not spin).
func (pt *posixTimer) expire(now time.Duration) bool {
	pt.setActive(false)
	if pt.queued {
		// A stale signal still queued is sent again, for this setting.
		if pt.queuedGen == pt.gen {
			pt.queuedOverrun++
		} else {
			pt.queuedGen, pt.queuedOverrun = pt.gen, 0
		}
		pt.requeue = pt.interval > 0
		return false
	}
	var to *Task
	if pt.target != nil {
		if to = pt.p.k.TaskByID(pt.target.TID); to != pt.target {
			return false // the thread has exited: nothing is sent
		}
	}
	pt.queuedOverrun = 0
	fatal, _ := pt.p.queueSignal(to, pt.signo, &SigInfo{Code: SITimer, Pid: pt.id, Value: pt.value, timer: pt})
	if pt.queued {
		pt.queuedGen = pt.gen
		pt.requeue = pt.interval > 0
	} else if pt.interval > 0 {
		pt.overrun += pt.forward(now + pt.ignoredPad())
		pt.arm()
	}
	return fatal
}

// delivered is told that the timer's signal is being taken (sigMu held):
// it reports false for a stale one, which is dropped, else fills in the
// overrun and rearms a periodic timer past now (posixtimer_rearm).
func (pt *posixTimer) delivered(info *SigInfo) bool {
	pt.queued = false
	pt.release()
	base := pt.queuedOverrun
	pt.queuedOverrun = 0
	if pt.queuedGen != pt.gen {
		return false
	}
	if pt.requeue {
		pt.requeue = false
		pt.overrun += pt.forward(pt.now())
		pt.overrunLast, pt.overrun = pt.overrun, -1
		pt.arm()
	}
	info.UID = uint32(overrunToInt(pt.overrunLast, base))
	return true
}

// dropped rearms a periodic timer whose pending signal was discarded
// unseen (a signal made ignored, sigMu held), as if it had been ignored.
func (pt *posixTimer) dropped() {
	pt.queued = false
	pt.release()
	pt.queuedOverrun = 0
	if pt.requeue && pt.queuedGen == pt.gen {
		pt.requeue = false
		pt.overrun += pt.forward(pt.now() + pt.ignoredPad())
		pt.arm()
	}
}

// ignoredPad is how far past now a timer whose signal went unseen rearms:
// at least a tick, as Linux's, so that a short period does not spin.
func (pt *posixTimer) ignoredPad() time.Duration {
	if pt.interval < cpuTimerTick {
		return cpuTimerTick
	}
	return 0
}

// markQueued records that a timer's signal is now pending (sigMu held).
func (i *SigInfo) markQueued() {
	if i.timer != nil {
		i.timer.queued = true
	}
}
