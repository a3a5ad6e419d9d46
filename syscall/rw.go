package syscall

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

// User I/O: reads and writes move between a file and a sequence of user
// buffers in chunks of at most ioChunk bytes, so kernel memory per call is
// bounded whatever length the caller gives. A call on a description
// without O_NONBLOCK waits, interruptibly, for the file's readiness.

// Linux's bounds: MAX_RW_COUNT for one read or write, UIO_MAXIOV iovecs.
const (
	maxIO     = 0x7ffff000
	maxIovecs = 1024
	ioChunk   = 64 << 10
)

var chunks = sync.Pool{New: func() any { return new([ioChunk]byte) }}

// iovec is one user buffer (struct iovec).
type iovec struct{ base, len uint64 }

// readIovecs reads an iovec array: EINVAL past UIO_MAXIOV or when the
// lengths overflow ssize_t, as on Linux; the total is capped at MAX_RW_COUNT.
func readIovecs(t *kernel.Task, addr, count uint64) ([]iovec, error) {
	if count > maxIovecs {
		return nil, unix.EINVAL
	}
	raw := make([]linux.Iovec, count)
	if err := copyIn(t, addr, linux.SliceAsBytes(raw)); err != nil {
		return nil, err
	}
	vs := make([]iovec, count)
	total := uint64(0)
	for i := range vs {
		vs[i] = iovec{raw[i].Base, raw[i].Len}
		if vs[i].len > 1<<63-1 || total+vs[i].len > 1<<63-1 {
			return nil, unix.EINVAL
		}
		total += vs[i].len
	}
	return capIovecs(vs), nil
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

// userSeq walks a sequence of user buffers.
type userSeq struct {
	t   *kernel.Task
	vs  []iovec
	i   int
	off uint64
}

// copyOut copies b to the next bytes of the sequence.
func (s *userSeq) copyOut(b []byte) error {
	return s.walk(len(b), func(addr uint64, lo, hi int) error { return copyOut(s.t, addr, b[lo:hi]) })
}

// copyIn fills b from the next bytes of the sequence.
func (s *userSeq) copyIn(b []byte) error {
	return s.walk(len(b), func(addr uint64, lo, hi int) error { return copyIn(s.t, addr, b[lo:hi]) })
}

func (s *userSeq) walk(n int, fn func(addr uint64, lo, hi int) error) error {
	done := 0
	for done < n && s.i < len(s.vs) {
		v := s.vs[s.i]
		k := int(min(uint64(n-done), v.len-s.off))
		if k > 0 {
			if err := fn(v.base+s.off, done, done+k); err != nil {
				return err
			}
		}
		done += k
		s.off += uint64(k)
		if s.off == v.len {
			s.i, s.off = s.i+1, 0
		}
	}
	return nil
}

// writable returns how many of the next n bytes of the sequence user code
// may write, probing a byte of each page (read, then written back as it
// was), without moving the sequence: a read takes no more from a stream
// than it can deliver, as Linux's copy faults nothing it has not consumed.
func (s *userSeq) writable(n int) int {
	i, off, done := s.i, s.off, 0
	var b [1]byte
	for done < n && i < len(s.vs) {
		v := s.vs[i]
		addr := v.base + off
		k := int(min(uint64(n-done), v.len-off, 4096-addr%4096))
		if k > 0 && (copyIn(s.t, addr, b[:]) != nil || copyOut(s.t, addr, b[:]) != nil) {
			return done
		}
		done += k
		if off += uint64(k); off == v.len {
			i, off = i+1, 0
		}
	}
	return done
}

// ioMode is how one read or write behaves: O_NONBLOCK (or MSG_DONTWAIT),
// MSG_WAITALL (a read waits until the buffers are full or the stream
// ends).
type ioMode struct {
	nonblock, waitAll bool
	// stream, for a plain read of a pipe or a Unix socket, lets the read
	// look before it takes: a copy that faults takes nothing, as on Linux.
	stream peeker
}

// peeker is a file whose data a read may look at, then take.
type peeker interface {
	Peek([]byte) (int, error)
	Discard(int)
}

// modeOf is the mode of a plain read or write on d.
func modeOf(d *fs.Description) ioMode {
	m := ioMode{nonblock: d.Nonblock()}
	m.stream, _ = d.File.(peeker)
	return m
}

// waitReady waits until d's file is ready for mask; a file that cannot be
// waited for gives EAGAIN back.
func waitReady(t *kernel.Task, d *fs.Description, mask uint32) error {
	w, ok := d.File.(fs.Waitable)
	if !ok {
		return unix.EAGAIN
	}
	return t.BlockOn(w, mask|unix.EPOLLERR|unix.EPOLLHUP, time.Time{})
}

// readTo reads into the user buffers vs with read (the file's Read, or a
// positioned read), chunk by chunk until a short read. Unless mode says
// non-blocking it waits for the first bytes. Nothing is taken that cannot
// be delivered: a pipe's or Unix socket's data is looked at, copied, then
// taken (EFAULT leaves it there, as on Linux); other files read no more
// than the buffer can hold from where it becomes unwritable.
func readTo(t *kernel.Task, d *fs.Description, vs []iovec, read func([]byte) (int, error), mode ioMode) (uint64, error) {
	if !d.Readable() {
		return 0, unix.EBADF
	}
	buf := chunks.Get().(*[ioChunk]byte)
	defer chunks.Put(buf)
	seq := &userSeq{t: t, vs: vs}
	left := iovecsLen(vs)
	done := uint64(0)
	for {
		if done > 0 && !t.Preempt() {
			return done, nil
		}
		k := min(left-done, ioChunk)
		if mode.stream != nil {
			read = mode.stream.Peek
		} else if w := uint64(seq.writable(int(k))); w < k {
			if w == 0 {
				if done > 0 {
					return done, nil
				}
				return 0, unix.EFAULT
			}
			k = w
		}
		n, err := read(buf[:k])
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
		if cerr := seq.copyOut(buf[:n]); cerr != nil {
			if done > 0 {
				return done, nil
			}
			return 0, cerr
		}
		if mode.stream != nil {
			mode.stream.Discard(n)
		}
		done += uint64(n)
		if n == 0 || (uint64(n) < k && !mode.waitAll) || done == left {
			return done, nil
		}
	}
}

// writeFrom writes the user buffers vs with write, chunk by chunk, as
// writeAll does.
func writeFrom(t *kernel.Task, d *fs.Description, vs []iovec, write func([]byte) (int, error), mode ioMode) (uint64, error) {
	if !d.Writable() {
		return 0, unix.EBADF
	}
	buf := chunks.Get().(*[ioChunk]byte)
	defer chunks.Put(buf)
	seq := &userSeq{t: t, vs: vs}
	left := iovecsLen(vs)
	done := uint64(0)
	for {
		if done > 0 && !t.Preempt() {
			return done, nil
		}
		k := min(left-done, ioChunk)
		err := seq.copyIn(buf[:k])
		if err == nil {
			var n int
			n, err = writeAll(t, d, buf[:k], write, mode)
			done += uint64(n)
		}
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

// writeAll writes b with write. Unless mode says non-blocking it waits for
// room until everything is written; it returns what was written and the
// error that stopped it. A broken pipe or connection is EPIPE (Dispatch
// raises SIGPIPE).
func writeAll(t *kernel.Task, d *fs.Description, b []byte, write func([]byte) (int, error), mode ioMode) (int, error) {
	off := 0
	for {
		n, err := write(b[off:])
		off += n
		if err == nil && off == len(b) {
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
