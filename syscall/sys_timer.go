package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

// POSIX per-process timers; kernel/posixtimers.go keeps them.
func init() {
	register(sysno.TimerCreate, sysTimerCreate)
	register(sysno.TimerSettime, sysTimerSettime)
	register(sysno.TimerGettime, sysTimerGettime)
	register(sysno.TimerGetoverrun, sysTimerGetoverrun)
	register(sysno.TimerDelete, sysTimerDelete)
}

// sysTimerCreate implements timer_create(2): the sigevent is read first
// (EFAULT), the id written last; a timer whose id cannot be written is
// deleted.
func sysTimerCreate(t *kernel.Task, a Args) (uint64, error) {
	var ev *kernel.TimerEvent
	if a[1] != 0 {
		var se linux.Sigevent
		if err := copyInStruct(t, a[1], &se); err != nil {
			return 0, err
		}
		ev = &kernel.TimerEvent{Notify: se.Notify, Signo: unix.Signal(se.Signo), Value: se.Value, TID: int(se.TID)}
	}
	id, err := t.CreateTimer(int32(a[0]), ev)
	if err != nil {
		return 0, err
	}
	if err := copyOutStruct(t, a[2], id); err != nil {
		t.Proc.DeleteTimer(id)
		return 0, err
	}
	return 0, nil
}

// sysTimerSettime implements timer_settime(2).
func sysTimerSettime(t *kernel.Task, a Args) (uint64, error) {
	const timerAbstime = 1
	if a[2] == 0 {
		return 0, unix.EINVAL
	}
	value, interval, err := readItimerspec(t, a[2])
	if err != nil {
		return 0, err
	}
	oldValue, oldInterval, err := t.SetTimer(int32(a[0]), a[1]&timerAbstime != 0, value, interval)
	if err != nil {
		return 0, err
	}
	if a[3] != 0 {
		return 0, copyOutStruct(t, a[3], itimerspec(oldValue, oldInterval))
	}
	return 0, nil
}

// sysTimerGettime implements timer_gettime(2).
func sysTimerGettime(t *kernel.Task, a Args) (uint64, error) {
	value, interval, err := t.Proc.GetTimer(int32(a[0]))
	if err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[1], itimerspec(value, interval))
}

// sysTimerGetoverrun implements timer_getoverrun(2).
func sysTimerGetoverrun(t *kernel.Task, a Args) (uint64, error) {
	n, err := t.Proc.TimerOverrun(int32(a[0]))
	return uint64(n), err
}

// sysTimerDelete implements timer_delete(2).
func sysTimerDelete(t *kernel.Task, a Args) (uint64, error) {
	return 0, t.Proc.DeleteTimer(int32(a[0]))
}
