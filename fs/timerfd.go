package fs

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// TimerFD is a timerfd(2): a timer whose expirations a read collects.
type TimerFD struct {
	NoopSeek
	mu       sync.Mutex
	timer    *time.Timer
	next     time.Time     // the next expiration (zero: disarmed)
	interval time.Duration // 0: one-shot
	count    uint64        // expirations not yet read
	gen      uint64        // bumped by Set, so a stale timer callback does nothing
	notifier Notifier
	ino      uint64
}

// timerFDCharge is what a timer costs the kernel-wide budget: the timer,
// its description, its descriptor and the runtime's timer when armed,
// about 320 bytes of kernel heap measured on the host (Linux's
// timerfd_ctx and struct file are about as much).
const timerFDCharge = 384

// NewTimerFD returns a disarmed timer, charged to the kernel-wide budget:
// ENOMEM when it is spent, as Linux's timerfd_create when it cannot
// allocate the context. Close gives the charge back.
func NewTimerFD() (*TimerFD, error) {
	if mm.Charged.Charge(timerFDCharge) != nil {
		return nil, unix.ENOMEM
	}
	return &TimerFD{ino: nextIno.Add(1)}, nil
}

// Set arms the timer to expire at next (zero: disarm) and then every
// interval; it returns the previous setting, as Get does.
func (f *TimerFD) Set(next time.Time, interval time.Duration) (time.Duration, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	left, oldInterval := f.getLocked()
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	f.gen++
	f.next, f.interval, f.count = next, interval, 0
	if !next.IsZero() {
		f.arm(f.gen)
	}
	return left, oldInterval
}

// arm starts the Go timer for f.next; f.mu is held.
func (f *TimerFD) arm(gen uint64) {
	f.timer = time.AfterFunc(max(time.Until(f.next), 0), func() { f.fire(gen) })
}

func (f *TimerFD) fire(gen uint64) {
	f.mu.Lock()
	if gen != f.gen || f.next.IsZero() {
		f.mu.Unlock()
		return
	}
	now := time.Now()
	f.count++
	if f.interval > 0 {
		// Count the periods that passed while the timer was late.
		late := now.Sub(f.next)
		missed := late / f.interval
		f.count += uint64(missed)
		f.next = f.next.Add((missed + 1) * f.interval)
		f.arm(gen)
	} else {
		f.next = time.Time{}
	}
	fns := f.notifier.Changed()
	f.mu.Unlock()
	Notify(fns)
}

// SetTicks sets the count of expirations not yet read, as Linux's
// TFD_IOC_SET_TICKS (checkpoint/restore), waking readers.
func (f *TimerFD) SetTicks(n uint64) {
	f.mu.Lock()
	f.count = n
	fns := f.notifier.Changed()
	f.mu.Unlock()
	Notify(fns)
}

// Get returns the time to the next expiration (0: disarmed) and the interval.
func (f *TimerFD) Get() (time.Duration, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.getLocked()
}

func (f *TimerFD) getLocked() (time.Duration, time.Duration) {
	if f.next.IsZero() {
		return 0, f.interval
	}
	return max(time.Until(f.next), time.Nanosecond), f.interval
}

// ReadTo takes the expiration count as 8 bytes.
func (f *TimerFD) ReadTo(dst UserIO) (int64, error) { return ReadStaged(dst, f.read) }

// read takes the expiration count as 8 bytes; EAGAIN while it is 0.
func (f *TimerFD) read(p []byte) (int, error) {
	if len(p) < 8 {
		return 0, unix.EINVAL
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count == 0 {
		return 0, unix.EAGAIN
	}
	linux.PutUint64(p, f.count)
	f.count = 0
	return 8, nil
}

func (f *TimerFD) WriteFrom(src UserIO) (int64, error) {
	return WriteStaged(src, func([]byte) (int, error) { return 0, unix.EINVAL })
}

// Readiness: readable once it has expired.
func (f *TimerFD) Readiness(mask uint32) uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count > 0 {
		return unix.EPOLLIN & mask
	}
	return 0
}

// Watch calls notify at every expiration until cancelled.
func (f *TimerFD) Watch(notify func()) func() {
	return f.notifier.Watch(&f.mu, notify)
}

// Close stops the timer and gives back its charge.
func (f *TimerFD) Close() error {
	f.Set(time.Time{}, 0)
	mm.Charged.Uncharge(timerFDCharge)
	return nil
}

func (f *TimerFD) Stat() Stat {
	return Stat{Dev: devAnon, Ino: f.ino, Mode: 0o600, Nlink: 1, Blksize: 4096}
}
