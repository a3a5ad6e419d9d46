package fs

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// Linux's pipe bounds: the default capacity (16 pages) and the most
// pipe-max-size may be set to here, its default, which bounds the kernel
// memory a pipe holds (Linux lets root raise it further).
const (
	PipeDefaultSize = 16 * 4096
	pipeMaxSizeCap  = 1 << 20
)

// PipeLimits are a kernel's pipe settings and the pages of capacity each
// user's pipes have: /proc/sys/fs/pipe-max-size, the largest capacity
// F_SETPIPE_SZ gives and a bound on a new pipe's made without privilege,
// and pipe-user-pages-soft (PipeUserPagesSoft). The Kernel holds one.
type PipeLimits struct {
	maxSize atomic.Int64
	mu      sync.Mutex
	pages   map[uint32]int // guarded by mu
}

// NewPipeLimits returns Linux's defaults, no pipe counted.
func NewPipeLimits() *PipeLimits {
	l := &PipeLimits{pages: map[uint32]int{}}
	l.maxSize.Store(pipeMaxSizeCap)
	return l
}

// MaxSize is pipe-max-size.
func (l *PipeLimits) MaxSize() int { return int(l.maxSize.Load()) }

// SetMaxSize sets pipe-max-size from what root wrote, rounded up to a
// power-of-two number of pages (0 is a page) as Linux's round_pipe_size;
// EINVAL for what does not parse or is past pipeMaxSizeCap.
func (l *PipeLimits) SetMaxSize(b []byte) error {
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil || v > pipeMaxSizeCap {
		return unix.EINVAL
	}
	l.maxSize.Store(int64(roundPipeSize(int(v))))
	return nil
}

// account adds delta pages to user's and returns the new total.
func (l *PipeLimits) account(user uint32, delta int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.pages[user] + delta
	if n == 0 {
		delete(l.pages, user)
	} else {
		l.pages[user] = n
	}
	return n
}

// roundPipeSize is n rounded up to a power-of-two number of pages.
func roundPipeSize(n int) int {
	size := pipePage
	for size < n {
		size <<= 1
	}
	return size
}

// pipe is the buffer between a pipe's ends, kept as Linux keeps it: a
// ring of page-sized slots, so that capacity and atomicity come out as on
// Linux (a write merges into the last page only when all of its tail fits).
// Each page in the ring is charged to the kernel-wide budget (mm.Charged)
// until it is read or the last end closes; a page read to its end goes
// back to pipePages for the next write.
type pipe struct {
	mu sync.Mutex
	// ring holds the pages written and not yet read: used of them, the
	// oldest at head, wrapping around. It is made at the first write, as
	// long as the capacity.
	ring       []pipeBuf
	head, used int
	slots      int // capacity in pages
	readers    int
	writers    int
	rOpens     uint64 // opens of a named pipe's read side, ever
	wOpens     uint64 // and of its write side
	// readWait are the watchers of the read end, told when data comes or
	// an end closes; writeWait those of the write end, told when a full
	// pipe is read or an end closes: Linux's rd_wait and wr_wait, so that
	// a read wakes no reader and edge-triggered epoll sees each end's own
	// changes.
	readWait, writeWait Notifier
	ino                 uint64
	// limits count the pipe's capacity in user's pages until its last
	// end closes; nil for a named pipe, which is not counted.
	limits *PipeLimits
	user   uint32
}

// wakeReaders, wakeWriters and wakeAll return the watchers to notify once
// p.mu is released; p.mu is held.
func (p *pipe) wakeReaders() []func() { return p.readWait.Changed() }
func (p *pipe) wakeWriters() []func() { return p.writeWait.Changed() }
func (p *pipe) wakeAll() []func()     { return append(p.readWait.Changed(), p.writeWait.Changed()...) }

// full reports whether every slot holds a page; p.mu is held.
func (p *pipe) full() bool { return p.used >= p.slots }

// pipeBuf is a slot of a pipe's ring: a page and where its unread bytes
// are, page[start:end].
type pipeBuf struct {
	page       *[pipePage]byte
	start, end int
}

// unread is the slot's bytes not yet read.
func (b *pipeBuf) unread() []byte { return b.page[b.start:b.end] }

// pipePages are pages no pipe holds, kept for the next one a write needs
// (a read and a write of a full pipe would otherwise allocate its pages
// anew each time). The collector empties it as any sync.Pool.
var pipePages = sync.Pool{New: func() any { return new([pipePage]byte) }}

// at is the i-th oldest slot in use; p.mu is held.
func (p *pipe) at(i int) *pipeBuf { return &p.ring[(p.head+i)%len(p.ring)] }

// push appends a slot holding page[:n]; a slot is free (p.used <
// p.slots) and p.mu is held.
func (p *pipe) push(page *[pipePage]byte, n int) {
	if len(p.ring) == 0 {
		p.ring = make([]pipeBuf, p.slots)
	}
	*p.at(p.used) = pipeBuf{page: page, end: n}
	p.used++
}

// pop drops the oldest slot and gives its page back; p.mu is held.
func (p *pipe) pop() {
	b := p.at(0)
	pipePages.Put(b.page)
	*b = pipeBuf{}
	p.head = (p.head + 1) % len(p.ring)
	p.used--
}

// resizeRing makes the ring slots long, the slots in use first; they
// fit, and p.mu is held.
func (p *pipe) resizeRing(slots int) {
	if len(p.ring) == 0 {
		return
	}
	ring := make([]pipeBuf, slots)
	for i := range p.used {
		ring[i] = *p.at(i)
	}
	p.ring, p.head = ring, 0
}

// drop gives back every page still held, when the last end closes; p.mu
// is held.
func (p *pipe) drop() {
	mm.Charged.Uncharge(p.used * pipePage)
	for p.used > 0 {
		p.pop()
	}
	p.ring, p.head = nil, 0
}

// watchAll calls notify on every change of either end until cancelled.
func (p *pipe) watchAll(notify func()) func() {
	cancelRead := p.readWait.Watch(&p.mu, notify)
	cancelWrite := p.writeWait.Watch(&p.mu, notify)
	return func() {
		cancelRead()
		cancelWrite()
	}
}

const pipePage = 4096

// PipeEnd is the read or the write end of a pipe.
type PipeEnd struct {
	p     *pipe
	write bool
}

// PipeUserPagesSoft is /proc/sys/fs/pipe-user-pages-soft: once a user's
// pipes have this many pages of capacity, an unprivileged user's new pipe
// gets pipeMinSlots (Linux's PIPE_MIN_DEF_BUFFERS), and F_SETPIPE_SZ may
// not grow one. There is no hard limit (pipe-user-pages-hard is 0).
const (
	PipeUserPagesSoft = 16384
	pipeMinSlots      = 2
)

// NewPipe returns the read and write ends of a pipe made by user: the
// default capacity, or without privilege (CAP_SYS_RESOURCE) no more than
// pipe-max-size, and two pages past the user's soft limit, as Linux's
// alloc_pipe_info.
func (l *PipeLimits) NewPipe(user uint32, privileged bool) (*PipeEnd, *PipeEnd) {
	slots := PipeDefaultSize / pipePage
	if !privileged {
		slots = min(slots, l.MaxSize()/pipePage)
	}
	if l.account(user, slots) > PipeUserPagesSoft && !privileged {
		l.account(user, pipeMinSlots-slots)
		slots = pipeMinSlots
	}
	p := &pipe{slots: slots, limits: l, user: user, readers: 1, writers: 1, ino: nextIno.Add(1)}
	return &PipeEnd{p: p}, &PipeEnd{p: p, write: true}
}

// unread is the number of bytes in the pipe; p.mu is held.
func (p *pipe) unread() int {
	n := 0
	for i := range p.used {
		n += len(p.at(i).unread())
	}
	return n
}

// ReadTo copies the pipe's bytes to dst straight from its pages. As
// Linux's pipe_read, a page whose copy faults is neither taken nor
// counted: the read returns the pages before it, or EFAULT. 0 when the
// pipe is empty and every writer has gone; EAGAIN while it is empty with a
// writer left.
func (e *PipeEnd) ReadTo(dst UserIO) (int64, error) {
	if e.write {
		return 0, unix.EBADF
	}
	p := e.p
	want := dst.Len()
	p.mu.Lock()
	if p.used == 0 {
		w := p.writers
		p.mu.Unlock()
		if w == 0 || want == 0 {
			return 0, nil
		}
		return 0, unix.EAGAIN
	}
	wasFull := p.full()
	n := int64(0)
	var err error
	for n < want && p.used > 0 {
		b := p.at(0).unread()
		var k int
		if k, err = dst.CopyOut(b[:min(int64(len(b)), want-n)]); err != nil {
			break
		}
		n += int64(k)
		p.consume(k)
	}
	if n == 0 && err != nil {
		p.mu.Unlock()
		return 0, err
	}
	var fns []func()
	if wasFull {
		fns = p.wakeWriters()
	}
	p.mu.Unlock()
	Notify(fns)
	return n, nil
}

// WriteFrom writes src's bytes as write does, staged: a chunk whose copy
// from user memory faults writes nothing.
func (e *PipeEnd) WriteFrom(src UserIO) (int64, error) {
	if !e.write {
		return 0, unix.EBADF
	}
	return WriteStaged(src, e.writeBytes)
}

// writeBytes puts what fits of b in the pipe: first the tail beyond whole
// pages into the last page when it all fits there, then a new page per
// slot. EPIPE when no reader is left; EAGAIN when nothing fits; ENOMEM
// when nothing was written because the kernel-wide budget is spent (as
// Linux's pipe_write when it cannot allocate a page).
func (e *PipeEnd) writeBytes(b []byte) (int, error) {
	p := e.p
	p.mu.Lock()
	if p.readers == 0 {
		p.mu.Unlock()
		return 0, unix.EPIPE
	}
	n := 0
	if tail := len(b) % pipePage; tail > 0 && p.used > 0 {
		if last := p.at(p.used - 1); last.end+tail <= pipePage {
			last.end += copy(last.page[last.end:], b[:tail])
			n = tail
		}
	}
	spent := false
	for n < len(b) && !p.full() {
		if mm.Charged.ChargeBuffer(pipePage) != nil {
			spent = true
			break
		}
		page := pipePages.Get().(*[pipePage]byte)
		k := copy(page[:], b[n:])
		p.push(page, k)
		n += k
	}
	if n == 0 {
		p.mu.Unlock()
		switch {
		case len(b) == 0:
			return 0, nil
		case spent:
			return 0, unix.ENOMEM
		}
		return 0, unix.EAGAIN
	}
	fns := p.wakeReaders()
	p.mu.Unlock()
	Notify(fns)
	return n, nil
}

// Readiness: the read end is readable with data, hung up with no writer;
// the write end writable with a free slot, in error with no reader.
func (e *PipeEnd) Readiness(mask uint32) uint32 {
	p := e.p
	p.mu.Lock()
	defer p.mu.Unlock()
	var r uint32
	if e.write {
		if p.readers == 0 {
			r |= unix.EPOLLERR | unix.EPOLLOUT
		} else if !p.full() {
			r |= unix.EPOLLOUT | unix.EPOLLWRNORM
		}
	} else {
		if p.used > 0 {
			r |= unix.EPOLLIN | unix.EPOLLRDNORM
		}
		if p.writers == 0 {
			r |= unix.EPOLLHUP
		}
	}
	return r & (mask | unix.EPOLLERR | unix.EPOLLHUP)
}

// Watch calls notify on every change of this end's readiness (and some
// that leave it as it was) until cancelled.
func (e *PipeEnd) Watch(notify func()) func() {
	if e.write {
		return e.p.writeWait.Watch(&e.p.mu, notify)
	}
	return e.p.readWait.Watch(&e.p.mu, notify)
}

// Close drops this end: readers then see end of file, writers EPIPE. The
// last end to close frees the pages nobody will read.
func (e *PipeEnd) Close() error {
	p := e.p
	p.mu.Lock()
	if e.write {
		p.writers--
	} else {
		p.readers--
	}
	if p.readers == 0 && p.writers == 0 {
		p.drop()
		if p.limits != nil {
			p.limits.account(p.user, -p.slots)
			p.limits = nil
		}
	}
	fns := p.wakeAll()
	p.mu.Unlock()
	Notify(fns)
	return nil
}

// Stat describes the pipe (a FIFO on Linux's pipefs).
func (e *PipeEnd) Stat() Stat {
	mode := uint32(0o600)
	return Stat{Dev: devPipes, Ino: e.p.ino, Mode: unix.S_IFIFO | mode, Nlink: 1, Blksize: 4096}
}

// Size returns the pipe's capacity (F_GETPIPE_SZ).
func (e *PipeEnd) Size() int {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	return e.p.slots * pipePage
}

// SetSize sets the capacity (F_SETPIPE_SZ), rounded up to a power-of-two
// number of pages as Linux does; EBUSY when the data would not fit. Above
// pipe-max-size it is EPERM without privilege, as on Linux, and above
// pipeMaxSizeCap for root too (Linux lets root go further): kernel memory
// stays bounded.
func (e *PipeEnd) SetSize(n int, privileged bool) (int, error) {
	if n < 0 {
		return 0, unix.EINVAL
	}
	size := roundPipeSize(n)
	p := e.p
	p.mu.Lock()
	maxSize := pipeMaxSizeCap
	if p.limits != nil {
		maxSize = p.limits.MaxSize()
	}
	if n > pipeMaxSizeCap || n > maxSize && !privileged {
		p.mu.Unlock()
		return 0, unix.EPERM
	}
	if p.used > size/pipePage {
		p.mu.Unlock()
		return 0, unix.EBUSY
	}
	if p.limits != nil {
		grow := size/pipePage - p.slots
		if p.limits.account(p.user, grow) > PipeUserPagesSoft && grow > 0 && !privileged {
			p.limits.account(p.user, -grow)
			p.mu.Unlock()
			return 0, unix.EPERM
		}
	}
	p.slots = size / pipePage
	p.resizeRing(p.slots)
	fns := p.wakeWriters() // as Linux's pipe_resize_ring
	p.mu.Unlock()
	Notify(fns)
	return size, nil
}

// Pending returns the bytes waiting in the pipe (FIONREAD).
func (e *PipeEnd) Pending() (int, error) {
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	return e.p.unread(), nil
}
