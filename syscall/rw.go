package syscall

import (
	"errors"
	"math"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
	jnet "github.com/jiege-go/jiege/net"
)

// User I/O: reads and writes move between a file and a sequence of user
// buffers (userIO, the file's fs.UserIO) in chunks of at most fs.IOChunk
// bytes, letting other tasks run between chunks, so that a long copy
// neither holds the processor nor, for a file that stages, more kernel
// memory than a chunk. A call on a description without O_NONBLOCK waits,
// interruptibly, for the file's readiness.

// Linux's bounds: MAX_RW_COUNT for one read or write, UIO_MAXIOV iovecs.
const (
	maxIO     = 0x7ffff000
	maxIovecs = 1024
	ioChunk   = fs.IOChunk
)

// iovec is one user buffer (struct iovec).
type iovec struct{ base, len uint64 }

// fewIovecs is how many iovecs a call keeps on its stack (nginx's writev
// passes two); an array of more is allocated.
const fewIovecs = 8

// readIovecs reads an iovec array, into few when it fits: EINVAL past
// UIO_MAXIOV or when the lengths overflow ssize_t, as on Linux; the total
// is capped at MAX_RW_COUNT.
func readIovecs(t *kernel.Task, addr, count uint64, few *[fewIovecs]iovec) ([]iovec, error) {
	vs, err := copyInIovecs(t, addr, count, few)
	if err != nil {
		return nil, err
	}
	total := uint64(0)
	for _, v := range vs {
		if total+v.len > 1<<63-1 {
			return nil, unix.EINVAL
		}
		total += v.len
	}
	return capIovecs(vs), nil
}

// copyInIovecs reads an iovec array as Linux's iovec_from_user, into few
// when it fits: EINVAL past UIO_MAXIOV or for a length that is negative
// as an ssize_t.
func copyInIovecs(t *kernel.Task, addr, count uint64, few *[fewIovecs]iovec) ([]iovec, error) {
	if count > maxIovecs {
		return nil, unix.EINVAL
	}
	var vs []iovec
	if count <= fewIovecs {
		vs = few[:count]
	} else {
		vs = make([]iovec, count)
	}
	// iovec is laid out as struct iovec: the user's array is read as it is.
	if err := copyIn(t, addr, linux.SliceAsBytes(vs)); err != nil {
		return nil, err
	}
	for _, v := range vs {
		if v.len > 1<<63-1 {
			return nil, unix.EINVAL
		}
	}
	return vs, nil
}

// capIovecs trims the sequence to MAX_RW_COUNT bytes.
func capIovecs(vs []iovec) []iovec {
	left := uint64(maxIO)
	for i := range vs {
		if vs[i].len > left {
			vs[i].len = left
		}
		left -= vs[i].len
	}
	return vs
}

func oneIovec(addr, n uint64) []iovec { return capIovecs([]iovec{{addr, n}}) }

func iovecsLen(vs []iovec) uint64 {
	n := uint64(0)
	for _, v := range vs {
		n += v.len
	}
	return n
}

// userIO is the user buffers of one call as an fs.UserIO: a cursor in
// the sequence and how many bytes the file is given from it (a chunk).
// It copies page by page straight between the file's bytes and the
// user's pages, under the address space's lock as copyIn and copyOut
// take it. The buffers are in the caller's memory, or for
// process_vm_readv and process_vm_writev in another process's.
type userIO struct {
	t    *kernel.Task
	proc *kernel.Process // whose memory the buffers are in
	// vs is a copy of the call's iovecs, in few when they fit, so that
	// the caller's stay on its stack and the task keeps no more.
	vs   []iovec
	few  [fewIovecs]iovec
	i    int    // the buffer the cursor is in
	off  uint64 // where in it
	pos  uint64 // the cursor from the sequence's start
	left int64  // bytes the file may still move
}

// FileSizeLimit is the writer's RLIMIT_FSIZE (fs.FileSizeLimited).
func (u *userIO) FileSizeLimit() int64 { return fileSizeLimit(u.t) }

// Actor is the task that reads or writes (fs.Acting).
func (u *userIO) Actor() fs.Actor { return u.t }

// FileSizeExceeded sends the writer SIGXFSZ.
func (u *userIO) FileSizeExceeded() { fileSizeExceeded(u.t) }

// fileSizeLimit is t's RLIMIT_FSIZE, math.MaxInt64 when it is unlimited.
func fileSizeLimit(t *kernel.Task) int64 {
	return int64(min(t.Proc.Limit(unix.RLIMIT_FSIZE).Cur, math.MaxInt64))
}

// fileSizeExceeded sends t SIGXFSZ, as Linux does when a write or a
// truncate passes RLIMIT_FSIZE (before failing it with EFBIG).
func fileSizeExceeded(t *kernel.Task) {
	t.SignalThread(unix.SIGXFSZ, &kernel.SigInfo{Code: kernel.SIKernel})
}

// callState is what a task's calls reuse from one call to the next, so
// that a read, a write or a sendfile allocates nothing: a file takes the
// call's userIO (and a socket sendfile's span) as an interface, which
// would put each on the heap. A task makes one call at a time; a use of
// the userIO while it is taken (process_vm_readv's second sequence) gets
// one of its own.
type callState struct {
	io     userIO
	ioUsed bool
	span   fileSpan
}

// callStateOf is t's callState, made at its first call.
func callStateOf(t *kernel.Task) *callState {
	if s, ok := t.CallState.(*callState); ok {
		return s
	}
	s := new(callState)
	t.CallState = s
	return s
}

// newUserIO returns the sequence vs of t's memory, all of it given;
// release returns it.
func newUserIO(t *kernel.Task, vs []iovec) *userIO {
	return newUserIOOf(t, t.Proc, vs)
}

// newUserIOOf returns the sequence vs of q's memory, for t's call.
func newUserIOOf(t *kernel.Task, q *kernel.Process, vs []iovec) *userIO {
	var u *userIO
	if s := callStateOf(t); !s.ioUsed {
		s.ioUsed, u = true, &s.io
	} else {
		u = new(userIO)
	}
	u.t, u.proc, u.i, u.off, u.pos = t, q, 0, 0, 0
	u.vs = append(u.few[:0], vs...)
	u.left = int64(iovecsLen(vs))
	return u
}

// release gives the task's userIO back for its next call.
func (u *userIO) release() {
	if s := callStateOf(u.t); u == &s.io {
		u.t, u.proc, u.vs = nil, nil, nil
		s.ioUsed = false
	}
}

// chunk moves the cursor to pos (from the start) and gives the file n
// bytes from there.
func (u *userIO) chunk(pos, n uint64) *userIO {
	if pos < u.pos {
		u.i, u.off, u.pos = 0, 0, 0
	}
	u.advance(pos - u.pos)
	u.left = int64(n)
	return u
}

// advance moves the cursor n bytes on.
func (u *userIO) advance(n uint64) {
	u.pos += n
	for n > 0 && u.i < len(u.vs) {
		k := min(n, u.vs[u.i].len-u.off)
		n -= k
		if u.off += k; u.off == u.vs[u.i].len {
			u.i, u.off = u.i+1, 0
		}
	}
	for u.i < len(u.vs) && u.vs[u.i].len == 0 {
		u.i++
	}
}

// Len is how many bytes the file may still move.
func (u *userIO) Len() int64 { return max(u.left, 0) }

// CopyOut copies src to the next bytes, page by page.
func (u *userIO) CopyOut(src []byte) (int, error) {
	return u.copy(src, (*mm.AddressSpace).CopyOut, true)
}

// CopyIn fills dst from the next bytes, page by page.
func (u *userIO) CopyIn(dst []byte) (int, error) {
	return u.copy(dst, (*mm.AddressSpace).CopyIn, false)
}

func (u *userIO) copy(b []byte, page func(*mm.AddressSpace, uintptr, []byte) error, write bool) (int, error) {
	b = b[:min(int64(len(b)), u.Len())]
	done := 0
	for done < len(b) && u.i < len(u.vs) {
		n, err := u.copyLocked(b[done:], page)
		done += n
		if errors.Is(err, mm.ErrNoMemory) {
			// The next page found no frame: copy it alone, as the
			// process's copies do, making room as a fault does.
			addr := u.vs[u.i].base + u.off
			k := u.pageChunk(addr, len(b)-done)
			if write {
				err = u.proc.CopyOut(uintptr(addr), b[done:done+k])
			} else {
				err = u.proc.CopyIn(uintptr(addr), b[done:done+k])
			}
			if err == nil {
				done += k
				u.consume(k)
			}
		}
		if err != nil {
			return done, unix.EFAULT
		}
	}
	return done, nil
}

// copyLocked copies b page by page under one hold of the lock, up to the
// end of b or of the sequence or the first page that fails.
func (u *userIO) copyLocked(b []byte, page func(*mm.AddressSpace, uintptr, []byte) error) (int, error) {
	p := u.proc
	p.Lock()
	defer p.Unlock()
	done := 0
	for done < len(b) && u.i < len(u.vs) {
		addr := u.vs[u.i].base + u.off
		k := u.pageChunk(addr, len(b)-done)
		if err := page(p.AS, uintptr(addr), b[done:done+k]); err != nil {
			return done, err
		}
		done += k
		u.consume(k)
	}
	return done, nil
}

// pageChunk is how many of n bytes from addr, the cursor's address, lie
// in its iovec and its page.
func (u *userIO) pageChunk(addr uint64, n int) int {
	return int(min(uint64(n), u.vs[u.i].len-u.off, mm.PageSize-addr%mm.PageSize))
}

// consume moves the cursor over k bytes the file took or gave.
func (u *userIO) consume(k int) {
	u.advance(uint64(k))
	u.left -= int64(k)
}

// Writable returns how many of the next n bytes user code may write,
// probing a byte of each page (read, then written back as it was),
// without moving the cursor.
func (u *userIO) Writable(n int) int {
	n = int(min(int64(n), u.Len()))
	i, off, done := u.i, u.off, 0
	var b [1]byte
	for done < n && i < len(u.vs) {
		v := u.vs[i]
		addr := v.base + off
		k := int(min(uint64(n-done), v.len-off, mm.PageSize-addr%mm.PageSize))
		if k > 0 && !u.writableByte(addr, b[:]) {
			return done
		}
		done += k
		if off += uint64(k); off == v.len {
			i, off = i+1, 0
		}
	}
	return done
}

// writableByte reads the byte at addr into b and writes it back.
func (u *userIO) writableByte(addr uint64, b []byte) bool {
	return u.proc.CopyIn(uintptr(addr), b) == nil && u.proc.CopyOut(uintptr(addr), b) == nil
}

// copyInSeq fills b from the user buffers vs; EFAULT when one faults.
func copyInSeq(t *kernel.Task, vs []iovec, b []byte) error {
	u := newUserIO(t, vs)
	defer u.release()
	_, err := u.CopyIn(b)
	return err
}

// copyOutSeq copies b to the user buffers vs; EFAULT when one faults.
func copyOutSeq(t *kernel.Task, vs []iovec, b []byte) error {
	u := newUserIO(t, vs)
	defer u.release()
	_, err := u.CopyOut(b)
	return err
}

// ioMode is how one read or write behaves: O_NONBLOCK (or MSG_DONTWAIT),
// MSG_WAITALL (a read waits until the buffers are full or the stream
// ends).
type ioMode struct{ nonblock, waitAll bool }

// modeOf is the mode of a plain read or write on d.
func modeOf(d *fs.Description) ioMode { return ioMode{nonblock: d.Nonblock()} }

// waitReady waits until d's file is ready for mask; a file that cannot be
// waited for gives EAGAIN back, and so does a socket whose SO_RCVTIMEO
// (for EPOLLIN) or SO_SNDTIMEO (for EPOLLOUT) passes first.
func waitReady(t *kernel.Task, d *fs.Description, mask uint32) error {
	w, ok := d.Waitable()
	if !ok {
		return unix.EAGAIN
	}
	var deadline time.Time
	if so, ok := d.File.(jnet.TimeoutSocket); ok {
		if timeout := so.Timeout(mask&unix.EPOLLOUT != 0); timeout > 0 {
			deadline = time.Now().Add(timeout)
		}
	}
	err := t.BlockOn(w, mask|unix.EPOLLERR|unix.EPOLLHUP, deadline)
	if err == unix.ETIMEDOUT {
		return errSocketTimeout
	}
	return err
}

// errSocketTimeout ends a wait that SO_RCVTIMEO or SO_SNDTIMEO bounds: the
// call fails with EAGAIN, and its loops, which wait again on EAGAIN, stop.
var errSocketTimeout = socketTimeout{}

type socketTimeout struct{}

func (socketTimeout) Error() string { return "socket timeout" }

// readTo reads into the user buffers vs with read (the file's ReadTo, or
// a positioned read), a chunk at a time until a short read. Unless mode
// says non-blocking it waits for the first bytes (with MSG_WAITALL, for
// all). What the file took it delivered: a copy that faults ends the read
// with what came before it, EFAULT when nothing did.
func readTo(t *kernel.Task, d *fs.Description, vs []iovec, read func(fs.UserIO) (int64, error), mode ioMode) (uint64, error) {
	if !d.Readable() {
		return 0, unix.EBADF
	}
	seq := newUserIO(t, vs)
	defer seq.release()
	left := iovecsLen(vs)
	done := uint64(0)
	for {
		if done > 0 && !t.Preempt() {
			return done, nil
		}
		k := min(left-done, ioChunk)
		n, err := read(seq.chunk(done, k))
		if err == unix.EAGAIN && (done == 0 || mode.waitAll) && k > 0 && !mode.nonblock {
			if err = waitReady(t, d, unix.EPOLLIN); err == nil {
				continue
			}
		}
		if err != nil {
			if done > 0 {
				return done, nil
			}
			return 0, err
		}
		done += uint64(n)
		if n == 0 || (uint64(n) < k && !mode.waitAll) || done == left {
			return done, nil
		}
	}
}

// writeFrom writes the user buffers vs with write (the file's WriteFrom,
// or a positioned write), a chunk at a time, each as writeAll does.
func writeFrom(t *kernel.Task, d *fs.Description, vs []iovec, write func(fs.UserIO) (int64, error), mode ioMode) (uint64, error) {
	if !d.Writable() {
		return 0, unix.EBADF
	}
	seq := newUserIO(t, vs)
	defer seq.release()
	left := iovecsLen(vs)
	done := uint64(0)
	for {
		if done > 0 && !t.Preempt() {
			return done, nil
		}
		from, k := done, min(left-done, ioChunk)
		n, err := writeAll(t, d, k, func(off uint64) fs.UserIO { return seq.chunk(from+off, k-off) }, write, mode)
		done += n
		if err != nil {
			if done > 0 {
				return done, nil
			}
			return 0, err
		}
		if done == left {
			return done, nil
		}
	}
}

// writeAll writes n bytes with write, from at(off) for the bytes from
// off on. Unless mode says non-blocking it waits for room until
// everything is written; it returns what was written and the error that
// stopped it. A broken pipe or connection is EPIPE (Dispatch raises
// SIGPIPE).
func writeAll(t *kernel.Task, d *fs.Description, n uint64, at func(off uint64) fs.UserIO, write func(fs.UserIO) (int64, error), mode ioMode) (uint64, error) {
	off := uint64(0)
	for {
		k, err := write(at(off))
		off += uint64(k)
		if err == nil && off == n {
			return off, nil
		}
		if err == nil {
			err = unix.EAGAIN // part written: wait for room for the rest
		}
		if err == unix.EAGAIN && !mode.nonblock {
			if err = waitReady(t, d, unix.EPOLLOUT); err == nil {
				continue
			}
		}
		return off, err
	}
}
