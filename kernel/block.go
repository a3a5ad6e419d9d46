package kernel

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// Block is the one wait every blocking system call goes through: it returns
// nil when ready is closed or receives, unix.ETIMEDOUT when the deadline
// (zero: none) passes, and unix.EINTR when the task is interrupted: a
// signal it must handle is pending (not blocked, not ignored), or its
// process is exiting. The system call layer decides from the call whether
// an EINTR is re-executed (Task.Interrupted).
func (t *Task) Block(ready <-chan struct{}, deadline time.Time) error {
	select {
	case <-ready:
		return nil
	default:
	}
	var expired <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return unix.ETIMEDOUT
		}
		timer := time.NewTimer(d)
		defer timer.Stop()
		expired = timer.C
	}
	t.cpu.stop(time.Now())
	t.countSwitch()
	defer func() {
		t.sleeping.Store(false)
		t.cpu.start(time.Now())
	}()
	for {
		wake, interrupted := t.drainWake()
		if interrupted {
			return unix.EINTR
		}
		select {
		case <-ready:
			return nil
		case <-wake:
		case <-t.Proc.exited:
			return unix.EINTR
		case <-expired:
			return unix.ETIMEDOUT
		}
	}
}

// BlockOn waits until w is ready for one of the poll events in mask, under
// the same rules as Block.
func (t *Task) BlockOn(w fs.Waitable, mask uint32, deadline time.Time) error {
	changed := make(chan struct{}, 1)
	cancel := w.Watch(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancel()
	// Only mask's events end the wait: one outside it (a file that
	// reports more than it is asked) would end every wait at once, and a
	// caller that waits again on EAGAIN would spin where no signal can
	// reach it.
	for w.Readiness(mask)&mask == 0 {
		if err := t.Block(changed, deadline); err != nil {
			return err
		}
	}
	return nil
}

// drainWake empties the task's wake channel and returns it, and reports
// whether the task must stop waiting now: a signal to handle, or another
// thread's execve.
func (t *Task) drainWake() (chan struct{}, bool) {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.unlockUnchanged() // it only reads signal state
	wake := t.wakeChan()
	select {
	case <-wake:
	default:
	}
	interrupted := t.mustHandle() || t.endedByExec()
	// Asleep from here: a signal sent once sigMu is released wakes it
	// (wakeUp) and marks it running.
	t.sleeping.Store(!interrupted)
	return wake, interrupted
}

// NotifyIDs are the task's process and thread ids, as fanotify reports
// the thread that caused an event (fs.Actor).
func (t *Task) NotifyIDs() (pid, tid int32) { return int32(t.Proc.PID), int32(t.TID) }

// WaitAnswer waits for a fanotify listener's answer to a permission
// event the task caused, under Block's rules (fs.Actor).
func (t *Task) WaitAnswer(answered <-chan struct{}) error { return t.Block(answered, time.Time{}) }

// FDs is the task's descriptor table, where a fanotify read opens the
// events' files (fs.Actor).
func (t *Task) FDs() *fs.FDTable { return t.Proc.Files }
