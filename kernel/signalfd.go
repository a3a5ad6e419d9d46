package kernel

import (
	"encoding/binary"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// SignalFD is a signalfd (signalfd4(2)): a file from which pending
// signals of its mask are read as signalfd_siginfo records, taken from
// the queues of the thread that reads, as Linux's signalfd_read does, so
// they are not delivered. Poll and epoll answer for the process that made
// it: its queue and its threads' (Linux's signalfd_poll asks the poller's,
// which is the same process unless the file went to another one).
type SignalFD struct {
	fs.NoopSeek
	proc *Process
	mask atomic.Uint64 // a SigSet, SIGKILL and SIGSTOP left out
	ino  uint64
}

// SignalfdSiginfoSize is sizeof(struct signalfd_siginfo).
const SignalfdSiginfoSize = 128

// NewSignalFD makes a signalfd of p for the signals in mask.
func NewSignalFD(p *Process, mask SigSet) *SignalFD {
	f := &SignalFD{proc: p, ino: fs.NewAnonIno()}
	f.mask.Store(uint64(mask &^ unblockable))
	return f
}

// SetMask replaces the signals f reads (signalfd4 on an existing one);
// a poller waiting for the old ones looks again.
func (f *SignalFD) SetMask(mask SigSet) {
	f.mask.Store(uint64(mask &^ unblockable))
	fs.Notify(f.watchers())
}

// watchers returns the pollers of f's process's signalfds.
func (f *SignalFD) watchers() []func() {
	f.proc.k.sigMu.Lock()
	defer f.proc.k.sigMu.unlockUnchanged()
	return f.proc.sig.signalfds.Changed()
}

// Mask returns the signals f reads (/proc/PID/fdinfo's sigmask).
func (f *SignalFD) Mask() SigSet { return SigSet(f.mask.Load()) }

// Read fills dst with a record for each pending signal of f's mask that t
// can take, at least one: without one, it waits unless nonblock (EAGAIN).
// EINVAL when dst cannot hold a record.
func (f *SignalFD) Read(t *Task, dst fs.UserIO, nonblock bool) (int64, error) {
	if dst.Len() < SignalfdSiginfoSize {
		return 0, unix.EINVAL
	}
	mask := SigSet(f.mask.Load())
	var done int64
	for dst.Len() >= SignalfdSiginfoSize {
		if dst.Writable(SignalfdSiginfoSize) < SignalfdSiginfoSize {
			// Asked before a signal is taken, so none is lost (Linux's
			// signalfd_read loses the one it took).
			if done > 0 {
				return done, nil
			}
			return 0, unix.EFAULT
		}
		info, ok := t.takePending(mask)
		if !ok && done == 0 && !nonblock {
			var err error
			if info, err = t.TakeSignal(mask, time.Time{}); err != nil {
				return 0, err
			}
			ok = true
		}
		if !ok {
			break
		}
		rec := signalfdSiginfo(info)
		if _, err := dst.CopyOut(rec[:]); err != nil { // unmapped meanwhile
			if done > 0 {
				return done, nil
			}
			return 0, err
		}
		done += SignalfdSiginfoSize
	}
	if done == 0 {
		return 0, unix.EAGAIN
	}
	return done, nil
}

// takePending takes a pending signal of set without waiting.
func (t *Task) takePending(set SigSet) (SigInfo, bool) {
	t.Proc.k.sigMu.Lock()
	defer t.Proc.k.sigMu.Unlock()
	return t.dequeue(set &^ unblockable)
}

// signalfdSiginfo is Linux's signalfd_copyinfo: the fields of info's
// siginfo layout at their places in a struct signalfd_siginfo.
func signalfdSiginfo(info SigInfo) (b [SignalfdSiginfoSize]byte) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(info.Signo))
	le.PutUint32(b[8:], uint32(info.Code))
	switch {
	case info.Code > SIUser && info.Code < SIKernel && isFaultSignal(info.Signo):
		le.PutUint64(b[72:], info.Addr) // ssi_addr
	case info.Code > SIUser && info.Code < SIKernel && info.Signo == unix.SIGCHLD:
		le.PutUint32(b[12:], uint32(info.Pid))
		le.PutUint32(b[16:], info.UID)
		le.PutUint32(b[40:], uint32(info.Status)) // ssi_status
	case info.Band != 0:
		le.PutUint32(b[20:], uint32(info.FD))   // ssi_fd
		le.PutUint32(b[28:], uint32(info.Band)) // ssi_band
	case info.Code == SITimer:
		le.PutUint32(b[24:], uint32(info.Pid)) // ssi_tid: the timer's id
		le.PutUint32(b[32:], info.UID)         // ssi_overrun
		le.PutUint64(b[48:], info.Value)       // ssi_ptr
		le.PutUint32(b[44:], uint32(info.Value))
	case info.Code < 0: // sigqueue, tkill, message queues
		le.PutUint32(b[12:], uint32(info.Pid))
		le.PutUint32(b[16:], info.UID)
		le.PutUint64(b[48:], info.Value)
		le.PutUint32(b[44:], uint32(info.Value)) // ssi_int
	default: // kill, the kernel
		le.PutUint32(b[12:], uint32(info.Pid))
		le.PutUint32(b[16:], info.UID)
	}
	return b
}

// WriteFrom: a signalfd is not written.
func (f *SignalFD) WriteFrom(fs.UserIO) (int64, error) { return 0, unix.EINVAL }

// ReadTo serves the reads that name no thread (splice, native AIO), which
// Linux's signalfd does not offer either.
func (f *SignalFD) ReadTo(fs.UserIO) (int64, error) { return 0, unix.EINVAL }

func (f *SignalFD) Stat() fs.Stat { return fs.AnonStat(f.ino) }
func (f *SignalFD) Close() error  { return nil }

// Readiness: readable while a signal of the mask is pending on the
// process or one of its threads.
func (f *SignalFD) Readiness(mask uint32) uint32 {
	p := f.proc
	p.k.sigMu.Lock()
	defer p.k.sigMu.unlockUnchanged()
	pending := p.sig.pending
	for _, t := range tasksOf(p) {
		pending |= t.sig.pending
	}
	if pending&SigSet(f.mask.Load()) != 0 {
		return (unix.EPOLLIN | unix.EPOLLRDNORM) & mask
	}
	return 0
}

// Watch calls notify whenever a signal is queued to the process or one of
// its threads.
func (f *SignalFD) Watch(notify func()) func() {
	return f.proc.sig.signalfds.Watch(readLocker{&f.proc.k.sigMu}, notify)
}

// readLocker is sigMu for a section that changes no signal state.
type readLocker struct{ l *signalLock }

func (r readLocker) Lock()   { r.l.Lock() }
func (r readLocker) Unlock() { r.l.unlockUnchanged() }
