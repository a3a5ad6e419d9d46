package kernel

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// Block is the one wait every blocking system call goes through: it returns
// nil when ready is closed or receives, unix.ETIMEDOUT when the deadline
// (zero: none) passes, and unix.EINTR when the task is interrupted.
func (t *Task) Block(ready <-chan struct{}, deadline time.Time) error {
	var expired <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			select {
			case <-ready:
				return nil
			default:
				return unix.ETIMEDOUT
			}
		}
		timer := time.NewTimer(d)
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case <-ready:
		return nil
	case <-t.interrupted():
		return unix.EINTR
	case <-expired:
		return unix.ETIMEDOUT
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
	for w.Readiness(mask) == 0 {
		if err := t.Block(changed, deadline); err != nil {
			return err
		}
	}
	return nil
}

// interrupted is closed when the task must stop waiting: its process is
// exiting.
func (t *Task) interrupted() <-chan struct{} { return t.Proc.exited }

// BrokenPipe is called when a write finds no reader: Linux sends SIGPIPE,
// whose default action ends the process.
func (t *Task) BrokenPipe() {}
