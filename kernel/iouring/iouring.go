// Package iouring owns io_uring instances (io_uring_setup(2)): the ring
// memory a program maps and shares with the kernel (the submission and
// completion rings and the submission entries), the kernel's side of the
// rings (taking submissions, posting completions, the overflow count),
// the buffers registered with a ring, and the file that stands for it.
// The system calls (syscall/sys_io_uring.go) perform each request when it
// is submitted and post its completion here.
package iouring

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// Sizes Linux allows (IORING_MAX_ENTRIES, IORING_MAX_CQ_ENTRIES) and the
// registered buffers' bounds (IORING_MAX_REG_BUFFERS, SZ_1G).
const (
	MaxEntries    = 32768
	MaxCQEntries  = 2 * MaxEntries
	MaxBuffers    = 1 << 14
	MaxBufferSize = 1 << 30
)

// Where the fields of the shared ring header lie, as Linux's struct
// io_rings: the submission and completion heads and tails, the masks and
// sizes, the dropped count, the flags and the overflow count; the
// completions start at the next cache line and the submission array
// follows them.
const (
	offSQHead        = 0
	offSQTail        = 4
	offCQHead        = 8
	offCQTail        = 12
	offSQRingMask    = 16
	offCQRingMask    = 20
	offSQRingEntries = 24
	offCQRingEntries = 28
	offSQDropped     = 32
	offSQFlags       = 36
	offCQFlags       = 40
	offCQOverflow    = 44
	offCQEs          = 64
)

const (
	sqeSize   = uintptr(unsafe.Sizeof(linux.IOUringSQE{}))
	cqeSize   = uintptr(unsafe.Sizeof(linux.IOUringCQE{}))
	cacheLine = 64
)

// Setup flags the rings honour; any other is EINVAL, as a Linux that
// lacks it answers. SQPOLL and IOPOLL ask for kernel threads polling and
// are not offered; the taskrun and issuer flags are hints that change
// nothing when every request completes in io_uring_enter.
const setupFlags = linux.IORingSetupCQSize | linux.IORingSetupClamp | linux.IORingSetupSubmitAll |
	linux.IORingSetupCoopTaskrun | linux.IORingSetupTaskrunFlag | linux.IORingSetupSingleIssuer |
	linux.IORingSetupDeferTaskrun | linux.IORingSetupNoSQArray

// Features are what the rings do of IORING_FEAT_*: both rings in one
// mapping, entries read once at submission, offset -1 meaning the file
// position, the submitter's credentials, io_uring_enter's extended
// argument, and completions skipped on success.
const Features = linux.IORingFeatSingleMmap | linux.IORingFeatSubmitStable | linux.IORingFeatRWCurPos |
	linux.IORingFeatCurPersonality | linux.IORingFeatExtArg | linux.IORingFeatCQESkip

// Ring is one io_uring instance: its shared memory and the kernel's view
// of it. Submissions are taken under the ring's submission lock, one
// submitter at a time (Linux's uring_lock).
type Ring struct {
	SQEntries, CQEntries uint32
	Flags                uint32  // the setup flags
	sqArray              uintptr // offset of the submission array; 0 with NO_SQARRAY
	rings, sqes          *mm.SharedMemory
	ino                  uint64

	// submitting is the submission lock (LockSubmit), held while
	// requests are taken and performed; submitDone is closed and replaced
	// when it is released. Both under mu.
	submitting bool
	submitDone chan struct{}
	// DrainDisabled is set, under the submission lock, once a submission asks
	// IOSQE_CQE_SKIP_SUCCESS: IOSQE_IO_DRAIN is refused from then on,
	// as Linux's drain_disabled.
	DrainDisabled bool

	mu           sync.Mutex
	buffers      []Buffer
	eventFD      *fs.EventFD
	eventFDAsync bool          // IORING_REGISTER_EVENTFD_ASYNC
	posted       bool          // completions posted since the last Flush
	wake         chan struct{} // closed and replaced when completions are flushed
	notifier     fs.Notifier
	closed       bool
}

// Buffer is a registered buffer (IORING_REGISTER_BUFFERS).
type Buffer struct{ Addr, Len uint64 }

// roundPow2 is the power of two at or above n (n <= 1<<31).
func roundPow2(n uint32) uint32 {
	p := uint32(1)
	for p < n {
		p <<= 1
	}
	return p
}

// Sizes are what io_uring_setup makes of entries and its params, as
// Linux's io_uring_create: EINVAL for no entries, for too many without
// IORING_SETUP_CLAMP, for a completion ring smaller than the submission
// ring.
func Sizes(entries uint32, p *linux.IOUringParams) (sq, cq uint32, err error) {
	if entries == 0 {
		return 0, 0, unix.EINVAL
	}
	if entries > MaxEntries {
		if p.Flags&linux.IORingSetupClamp == 0 {
			return 0, 0, unix.EINVAL
		}
		entries = MaxEntries
	}
	sq = roundPow2(entries)
	if p.Flags&linux.IORingSetupCQSize == 0 {
		return sq, 2 * sq, nil
	}
	if p.CQEntries == 0 {
		return 0, 0, unix.EINVAL
	}
	cq = p.CQEntries
	if cq > MaxCQEntries {
		if p.Flags&linux.IORingSetupClamp == 0 {
			return 0, 0, unix.EINVAL
		}
		cq = MaxCQEntries
	}
	cq = roundPow2(cq)
	if cq < sq {
		return 0, 0, unix.EINVAL
	}
	return sq, cq, nil
}

// New makes a ring for io_uring_setup, with memory from mem, and fills in
// p's answer: the sizes, the features and where each field lies. EINVAL
// for flags not offered, ENOMEM when there is no frame for the header.
func New(mem mm.Memory, entries uint32, p *linux.IOUringParams) (*Ring, error) {
	if p.Flags&^setupFlags != 0 || p.Resv != [3]uint32{} {
		return nil, unix.EINVAL
	}
	if p.Flags&linux.IORingSetupDeferTaskrun != 0 && p.Flags&linux.IORingSetupSingleIssuer == 0 {
		return nil, unix.EINVAL // Linux asks DEFER_TASKRUN for one issuer only
	}
	sq, cq, err := Sizes(entries, p)
	if err != nil {
		return nil, err
	}
	r := &Ring{SQEntries: sq, CQEntries: cq, Flags: p.Flags, ino: fs.NewAnonIno(), wake: make(chan struct{}), submitDone: make(chan struct{})}
	cqEnd := offCQEs + uintptr(cq)*cqeSize
	if p.Flags&linux.IORingSetupNoSQArray == 0 {
		r.sqArray = (cqEnd + cacheLine - 1) &^ (cacheLine - 1)
	}
	r.rings = mm.NewSegmentMemory(mem, nil)
	r.sqes = mm.NewSegmentMemory(mem, nil)
	if r.rings.Frame(0) == 0 {
		r.release()
		return nil, unix.ENOMEM
	}
	r.store(offSQRingMask, sq-1)
	r.store(offCQRingMask, cq-1)
	r.store(offSQRingEntries, sq)
	r.store(offCQRingEntries, cq)
	p.SQEntries, p.CQEntries, p.Features = sq, cq, Features
	p.SQOff = linux.IOSQRingOffsets{Head: offSQHead, Tail: offSQTail, RingMask: offSQRingMask, RingEntries: offSQRingEntries,
		Flags: offSQFlags, Dropped: offSQDropped, Array: uint32(r.sqArray)}
	p.CQOff = linux.IOCQRingOffsets{Head: offCQHead, Tail: offCQTail, RingMask: offCQRingMask, RingEntries: offCQRingEntries,
		Overflow: offCQOverflow, CQEs: offCQEs, Flags: offCQFlags}
	return r, nil
}

// word is the 32-bit word at off in the ring header, or nil when memory
// is exhausted (the header's page always has its frame).
func (r *Ring) word(off uintptr) *uint32 {
	pa := r.rings.Frame(off / mm.PageSize)
	if pa == 0 {
		return nil
	}
	return (*uint32)(unsafe.Add(mm.Ptr(pa), off%mm.PageSize))
}

func (r *Ring) load(off uintptr) uint32 { return atomic.LoadUint32(r.word(off)) }

func (r *Ring) store(off uintptr, v uint32) { atomic.StoreUint32(r.word(off), v) }

// copyFrom copies len(b) bytes at off of s into b; false when memory is
// exhausted. A submission entry or a completion never crosses a page.
func copyFrom(s *mm.SharedMemory, off uintptr, b []byte) bool {
	pa := s.Frame(off / mm.PageSize)
	if pa == 0 {
		return false
	}
	copy(b, unsafe.Slice((*byte)(unsafe.Add(mm.Ptr(pa), off%mm.PageSize)), len(b)))
	return true
}

func copyTo(s *mm.SharedMemory, off uintptr, b []byte) bool {
	pa := s.Frame(off / mm.PageSize)
	if pa == 0 {
		return false
	}
	copy(unsafe.Slice((*byte)(unsafe.Add(mm.Ptr(pa), off%mm.PageSize)), len(b)), b)
	return true
}

// offMask is IORING_OFF_MMAP_MASK: the bits of mmap's offset that choose
// the part; Linux ignores the others.
const offMask = 0xf8000000

// MappedMemory returns what mmap at offset maps: both rings at
// IORING_OFF_SQ_RING and IORING_OFF_CQ_RING (one memory, as
// IORING_FEAT_SINGLE_MMAP says), the entries at IORING_OFF_SQES; EINVAL
// for another offset. As Linux's, a mapping longer than the part is
// allowed; here its pages past the part are zeroed memory of the ring's,
// where Linux leaves them unmapped.
func (r *Ring) MappedMemory(offset, length uint64) (*mm.SharedMemory, error) {
	switch offset & offMask {
	case linux.IORingOffSQRing, linux.IORingOffCQRing:
		return r.rings, nil
	case linux.IORingOffSQEs:
		return r.sqes, nil
	}
	return nil, unix.EINVAL
}

// LockSubmit takes the submission lock (Linux's uring_lock). A request
// performed under it may block, so another submitter waits with wait,
// which a signal interrupts; its error is returned without the lock.
func (r *Ring) LockSubmit(wait func(<-chan struct{}) error) error {
	for {
		done, ok := r.trySubmit()
		if ok {
			return nil
		}
		if err := wait(done); err != nil {
			return err
		}
	}
}

// trySubmit takes the submission lock if it is free; otherwise it returns
// the channel closed when it is released.
func (r *Ring) trySubmit() (<-chan struct{}, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.submitting {
		return r.submitDone, false
	}
	r.submitting = true
	return nil, true
}

// UnlockSubmit releases the submission lock.
func (r *Ring) UnlockSubmit() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.submitting = false
	close(r.submitDone)
	r.submitDone = make(chan struct{})
}

// Pending counts the submissions the program has queued and the kernel
// not yet taken.
func (r *Ring) Pending() uint32 {
	return r.load(offSQTail) - r.load(offSQHead)
}

// NextSQE takes the next queued submission into sqe; ok is false when
// none is queued. An index past the ring is dropped (counted in the
// dropped word, as Linux) and the next taken. The submission lock is held.
func (r *Ring) NextSQE(sqe *linux.IOUringSQE) (ok bool) {
	for {
		head := r.load(offSQHead)
		if head == r.load(offSQTail) {
			return false
		}
		index := head & (r.SQEntries - 1)
		if r.sqArray != 0 {
			index = r.load(r.sqArray + uintptr(index)*4)
		}
		r.store(offSQHead, head+1)
		if index < r.SQEntries && copyFrom(r.sqes, uintptr(index)*sqeSize, linux.AsBytes(sqe)) {
			return true
		}
		r.store(offSQDropped, r.load(offSQDropped)+1)
	}
}

// Post writes a completion into the completion ring, or counts it in the
// overflow word when the ring is full (the rings do not keep overflowed
// completions: IORING_FEAT_NODROP is not offered). Waiters learn of it at
// the next Flush.
func (r *Ring) Post(cqe linux.IOUringCQE) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tail := r.load(offCQTail)
	if tail-r.load(offCQHead) >= r.CQEntries ||
		!copyTo(r.rings, offCQEs+uintptr(tail&(r.CQEntries-1))*cqeSize, linux.AsBytes(&cqe)) {
		r.store(offCQOverflow, r.load(offCQOverflow)+1)
		return
	}
	r.store(offCQTail, tail+1)
	r.posted = true
}

// Flush tells of the completions posted since the last flush, as Linux's
// io_commit_cqring_flush: waiters wake, poll and epoll learn of them, and
// a registered eventfd counts one (not one per completion; an eventfd
// registered for asynchronous completions only counts none, for every
// request here completes in io_uring_enter).
func (r *Ring) Flush() {
	notify, fns := r.flushed()
	if notify != nil {
		notify.Signal(1)
	}
	fs.Notify(fns)
}

// flushed wakes the waiters of the completions posted since the last
// flush and returns whom to tell outside the lock: the eventfd to count
// one (nil for none) and the watchers.
func (r *Ring) flushed() (*fs.EventFD, []func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.posted {
		return nil, nil
	}
	r.posted = false
	close(r.wake)
	r.wake = make(chan struct{})
	notify := r.eventFD
	if r.eventFDAsync {
		notify = nil
	}
	return notify, r.notifier.Changed()
}

// Ready counts the completions posted and not yet consumed by the
// program, with a channel closed when another is posted.
func (r *Ring) Ready() (uint32, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.load(offCQTail) - r.load(offCQHead), r.wake
}

// RegisterBuffers registers bs (IORING_REGISTER_BUFFERS): EBUSY when
// some are registered already.
func (r *Ring) RegisterBuffers(bs []Buffer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buffers != nil {
		return unix.EBUSY
	}
	if err := mm.Charged.Charge(bufferCharge(len(bs))); err != nil {
		return unix.ENOMEM
	}
	r.buffers = bs
	return nil
}

// UnregisterBuffers forgets the registered buffers: ENXIO when there are none.
func (r *Ring) UnregisterBuffers() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buffers == nil {
		return unix.ENXIO
	}
	mm.Charged.Uncharge(bufferCharge(len(r.buffers)))
	r.buffers = nil
	return nil
}

// bufferCharge is the kernel heap that n registered buffers hold.
func bufferCharge(n int) int { return n * int(unsafe.Sizeof(Buffer{})) }

// Buffer returns registered buffer i; false when there is no such buffer.
func (r *Ring) Buffer(i uint16) (Buffer, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if int(i) >= len(r.buffers) {
		return Buffer{}, false
	}
	return r.buffers[i], true
}

// RegisterEventFD makes e count the completions flushed, or only those
// completed asynchronously (async): EBUSY when one is registered already.
func (r *Ring) RegisterEventFD(e *fs.EventFD, async bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.eventFD != nil {
		return unix.EBUSY
	}
	r.eventFD, r.eventFDAsync = e, async
	return nil
}

// UnregisterEventFD forgets the registered eventfd: ENXIO when there is none.
func (r *Ring) UnregisterEventFD() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.eventFD == nil {
		return unix.ENXIO
	}
	r.eventFD = nil
	return nil
}

// The ring as a file: anon_inode:[io_uring], which neither reads nor
// writes; poll says readable while completions wait and writable while
// the submission ring has room.

func (r *Ring) ReadTo(fs.UserIO) (int64, error)    { return 0, unix.EINVAL }
func (r *Ring) WriteFrom(fs.UserIO) (int64, error) { return 0, unix.EINVAL }
func (r *Ring) Stat() fs.Stat                      { return fs.AnonStat(r.ino) }
func (r *Ring) Path() string                       { return "anon_inode:[io_uring]" }

// Readiness: EPOLLIN while completions wait, EPOLLOUT while the
// submission ring has room.
func (r *Ring) Readiness(mask uint32) uint32 {
	var ev uint32
	if n, _ := r.Ready(); n > 0 {
		ev |= unix.EPOLLIN | unix.EPOLLRDNORM
	}
	if r.Pending() < r.SQEntries {
		ev |= unix.EPOLLOUT | unix.EPOLLWRNORM
	}
	return ev & mask
}

// Watch calls notify on every completion posted.
func (r *Ring) Watch(notify func()) func() { return r.notifier.Watch(&r.mu, notify) }

// Close releases the ring's hold of its memory (mappings keep their own)
// and of its registrations.
func (r *Ring) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if r.buffers != nil {
		mm.Charged.Uncharge(bufferCharge(len(r.buffers)))
		r.buffers = nil
	}
	r.eventFD = nil
	r.release()
	return nil
}

func (r *Ring) release() {
	r.rings.Release()
	r.sqes.Release()
}
