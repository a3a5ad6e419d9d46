package kernel

import (
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// userfaultfd's ABI (linux/userfaultfd.h).
const (
	UffdAPI = 0xaa

	UffdFeatureSigbus       = 1 << 7
	UffdFeatureThreadID     = 1 << 8
	UffdFeatureExactAddress = 1 << 11
	UffdFeaturePoison       = 1 << 14
	UffdFeatureMove         = 1 << 16
	// UffdFeatures are the features served: missing faults of private
	// anonymous memory, and the ioctls that resolve them.
	UffdFeatures = UffdFeatureSigbus | UffdFeatureThreadID | UffdFeatureExactAddress | UffdFeaturePoison | UffdFeatureMove

	// uffdInitialized marks a context whose UFFDIO_API was done.
	uffdInitialized = 1 << 31

	uffdEventPagefault     = 0x12
	uffdPagefaultFlagWrite = 1

	// UffdMsgSize is sizeof(struct uffd_msg).
	UffdMsgSize = 32

	// uffdCharge is what a context costs the kernel-wide budget.
	uffdCharge = 256
)

// Userfaultfd is a userfaultfd (userfaultfd(2)): the context that the
// memory ranges registered with it hold. A thread faulting on an absent
// page of such a range queues itself here and waits (awaitUserfault);
// the handler reads the fault as a struct uffd_msg and resolves it with
// an ioctl, which wakes the faulting threads of the range to fault again.
// Each waiter is a blocked thread's own: the queue is bounded by threads.
type Userfaultfd struct {
	fs.NoopSeek
	proc *Process
	// as is the memory it serves, its maker's when made (exec replaces it).
	as       *mm.AddressSpace
	ino      uint64
	features atomic.Uint64 // the requested ones, with uffdInitialized

	mu       sync.Mutex
	pending  []*uffdWaiter // faults not read yet, oldest first
	read     []*uffdWaiter // faults read and not resolved
	released bool          // closed: no more faults wait
	notifier fs.Notifier
}

// uffdWaiter is one thread waiting on an absent page.
type uffdWaiter struct {
	addr  uintptr // the faulting address, within the page
	write bool
	tid   int
	woken chan struct{}
}

// NewUserfaultfd makes a userfaultfd for p's memory; ENOMEM when the
// kernel's budget is spent.
func NewUserfaultfd(p *Process) (*Userfaultfd, error) {
	if mm.Charged.Charge(uffdCharge) != nil {
		return nil, unix.ENOMEM
	}
	p.Lock()
	defer p.Unlock()
	return &Userfaultfd{proc: p, as: p.AS, ino: fs.NewAnonIno()}, nil
}

// UnprivilegedUserfaultfd is /proc/sys/vm/unprivileged_userfaultfd: 0
// (Debian's default) asks CAP_SYS_PTRACE of a userfaultfd(2) without
// UFFD_USER_MODE_ONLY, 1 asks nothing.
func (k *Kernel) UnprivilegedUserfaultfd() string {
	if k.uffdUnprivileged.Load() {
		return "1"
	}
	return "0"
}

// SetUnprivilegedUserfaultfd sets it from what root wrote: 0 or 1.
func (k *Kernel) SetUnprivilegedUserfaultfd(b []byte) error {
	switch strings.TrimSpace(string(b)) {
	case "0":
		k.uffdUnprivileged.Store(false)
	case "1":
		k.uffdUnprivileged.Store(true)
	default:
		return unix.EINVAL
	}
	return nil
}

// UserfaultfdAllowed reports whether t may make a userfaultfd with
// userfaultfd(2) (Linux's userfaultfd_syscall_allowed).
func (t *Task) UserfaultfdAllowed(userModeOnly bool) bool {
	return userModeOnly || t.Proc.k.uffdUnprivileged.Load() || t.Proc.Caps.Effective&(1<<unix.CAP_SYS_PTRACE) != 0
}

// SigBus: faults raise SIGBUS instead of waiting (UFFD_FEATURE_SIGBUS).
func (f *Userfaultfd) SigBus() bool { return f.features.Load()&UffdFeatureSigbus != 0 }

// Initialized reports whether UFFDIO_API was done: every other ioctl and
// read is EINVAL until then.
func (f *Userfaultfd) Initialized() bool { return f.features.Load()&uffdInitialized != 0 }

// API does UFFDIO_API's handshake with the features asked for: EINVAL
// for a second one or a feature not served.
func (f *Userfaultfd) API(features uint64) error {
	if features&^UffdFeatures != 0 {
		return unix.EINVAL
	}
	if !f.features.CompareAndSwap(0, features|uffdInitialized) {
		return unix.EINVAL
	}
	fs.Notify(f.changed())
	return nil
}

func (f *Userfaultfd) changed() []func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.notifier.Changed()
}

// memory runs fn on the memory f serves under its process's lock; ESRCH
// once exec replaced it.
func (f *Userfaultfd) memory(fn func(as *mm.AddressSpace) error) error {
	p := f.proc
	p.Lock()
	defer p.Unlock()
	if p.AS != f.as || p.gone.Load() {
		return unix.ESRCH
	}
	return fn(p.AS)
}

// Register registers a range for mode (UFFDIO_REGISTER).
func (f *Userfaultfd) Register(start, length uintptr, mode uint8) error {
	return f.memory(func(as *mm.AddressSpace) error { return as.UffdRegister(f, start, length, mode) })
}

// Unregister ends the range's registration (UFFDIO_UNREGISTER) and wakes
// its waiters, which fault again as if it was never registered.
func (f *Userfaultfd) Unregister(start, length uintptr) error {
	err := f.memory(func(as *mm.AddressSpace) error { return as.UffdUnregister(f, start, length) })
	if err == nil {
		f.Wake(start, length)
	}
	return err
}

// Resolve fills the pages of [dst, dst+length) with fill, page by page
// (for UffdCopy with what src gives for each), and unless dontWake wakes
// the waiters of what it filled. It returns the bytes filled: an error
// only when nothing was.
func (f *Userfaultfd) Resolve(dst, length uintptr, fill mm.UffdFill, src func(off uintptr, page *[mm.PageSize]byte) error, dontWake bool) (uintptr, error) {
	var page *[mm.PageSize]byte
	if fill == mm.UffdCopy {
		page = new([mm.PageSize]byte)
	}
	var done uintptr
	var err error
	for ; done < length; done += mm.PageSize {
		if fill == mm.UffdCopy {
			if err = src(done, page); err != nil {
				break
			}
		}
		if err = f.memory(func(as *mm.AddressSpace) error { return as.UffdResolve(f, dst+done, fill, page) }); err != nil {
			break
		}
	}
	if done > 0 && !dontWake {
		f.Wake(dst, done)
	}
	if done > 0 {
		return done, nil
	}
	return 0, err
}

// Move moves the pages of [src, src+length) to [dst, dst+length)
// (UFFDIO_MOVE), with Resolve's result.
func (f *Userfaultfd) Move(dst, src, length uintptr, allowHoles, dontWake bool) (uintptr, error) {
	var done uintptr
	var err error
	for ; done < length; done += mm.PageSize {
		if err = f.memory(func(as *mm.AddressSpace) error { return as.UffdMove(f, dst+done, src+done, allowHoles) }); err != nil {
			break
		}
	}
	if done > 0 && !dontWake {
		f.Wake(dst, done)
	}
	if done > 0 {
		return done, nil
	}
	return 0, err
}

// Wake wakes the threads waiting on a page of [start, start+length),
// read or not (UFFDIO_WAKE); length 0 wakes all.
func (f *Userfaultfd) Wake(start, length uintptr) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in := func(w *uffdWaiter) bool {
		if page := w.addr &^ (mm.PageSize - 1); length == 0 || page >= start && page-start < length {
			close(w.woken)
			return true
		}
		return false
	}
	f.pending = deleteFunc(f.pending, in)
	f.read = deleteFunc(f.read, in)
}

// deleteFunc is slices.DeleteFunc without keeping the removed pointers
// alive in the backing array.
func deleteFunc(ws []*uffdWaiter, del func(*uffdWaiter) bool) []*uffdWaiter {
	kept := ws[:0]
	for _, w := range ws {
		if !del(w) {
			kept = append(kept, w)
		}
	}
	clear(ws[len(kept):])
	return kept
}

// awaitUserfault waits until the handler of uf's context resolves the
// page, the context is closed or the task must handle a signal; the
// caller then faults again.
func (t *Task) awaitUserfault(uf *mm.Userfault) {
	f := uf.Ctx.(*Userfaultfd)
	w := &uffdWaiter{addr: uf.Addr, write: uf.Write, tid: t.TID, woken: make(chan struct{})}
	f.mu.Lock()
	if f.released {
		f.mu.Unlock()
		return
	}
	f.pending = append(f.pending, w)
	fns := f.notifier.Changed()
	f.mu.Unlock()
	fs.Notify(fns)
	// The page may have been filled between the fault and the queueing,
	// and its wake then found no waiter: look again now that one would.
	missing := f.memory(func(as *mm.AddressSpace) error {
		if !as.UffdAbsent(f, w.addr) {
			return unix.EAGAIN
		}
		return nil
	}) == nil
	if !missing || t.Block(w.woken, time.Time{}) != nil {
		f.leave(w)
	}
}

// leave takes w off the queues if a wake has not already.
func (f *Userfaultfd) leave(w *uffdWaiter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := func(o *uffdWaiter) bool { return o == w }
	f.pending = deleteFunc(f.pending, is)
	f.read = deleteFunc(f.read, is)
}

// ReadTo reads pending faults as struct uffd_msg records, as many as fit:
// EINVAL before UFFDIO_API or for a buffer shorter than one, EAGAIN when
// none is pending (the read then waits unless non-blocking).
func (f *Userfaultfd) ReadTo(dst fs.UserIO) (int64, error) {
	if !f.Initialized() || dst.Len() < UffdMsgSize {
		return 0, unix.EINVAL
	}
	return fs.ReadStaged(dst, f.read1)
}

func (f *Userfaultfd) read1(p []byte) (int, error) {
	features := f.features.Load()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pending) == 0 {
		return 0, unix.EAGAIN
	}
	n := 0
	for len(f.pending) > 0 && len(p)-n >= UffdMsgSize {
		w := f.pending[0]
		f.pending[0] = nil
		f.pending = f.pending[1:]
		f.read = append(f.read, w)
		msg := p[n : n+UffdMsgSize]
		clear(msg)
		msg[0] = uffdEventPagefault
		if w.write {
			binary.LittleEndian.PutUint64(msg[8:], uffdPagefaultFlagWrite)
		}
		addr := w.addr
		if features&UffdFeatureExactAddress == 0 {
			addr &^= mm.PageSize - 1
		}
		binary.LittleEndian.PutUint64(msg[16:], uint64(addr))
		if features&UffdFeatureThreadID != 0 {
			binary.LittleEndian.PutUint32(msg[24:], uint32(w.tid))
		}
		n += UffdMsgSize
	}
	return n, nil
}

// WriteFrom: a userfaultfd is not written.
func (f *Userfaultfd) WriteFrom(fs.UserIO) (int64, error) { return 0, unix.EINVAL }

// Readiness: EPOLLERR before UFFDIO_API, readable while a fault is pending.
func (f *Userfaultfd) Readiness(mask uint32) uint32 {
	if !f.Initialized() {
		return unix.EPOLLERR
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pending) > 0 {
		return unix.EPOLLIN & mask
	}
	return 0
}

// Watch calls notify when a fault is queued.
func (f *Userfaultfd) Watch(notify func()) func() { return f.notifier.Watch(&f.mu, notify) }

func (f *Userfaultfd) Stat() fs.Stat { return fs.AnonStat(f.ino) }

// Close ends the context's registrations and wakes its waiters, which
// fault again on memory no longer registered, as Linux's
// userfaultfd_release.
func (f *Userfaultfd) Close() error {
	f.mu.Lock()
	f.released = true
	f.mu.Unlock()
	f.memory(func(as *mm.AddressSpace) error {
		as.UffdRelease(f)
		return nil
	})
	f.Wake(0, 0)
	mm.Charged.Uncharge(uffdCharge)
	return nil
}
