package fs

import (
	"sync"

	"golang.org/x/sys/unix"
)

// UserIO is the user memory one read or write moves bytes to or from: the
// caller's buffers (one, or an iovec array) from where the call has got to,
// at most Len bytes of them. A file's ReadTo and WriteFrom copy straight
// between their own bytes and it, so a file whose data sits in memory
// (a regular file, a pipe) copies each byte once.
//
// It is an interface defined here, and implemented by the system call
// layer over the caller's address space, so that fs needs neither kernel
// nor syscall (both import fs): the chunking (a call moves at most
// IOChunk bytes before it lets other tasks run), the blocking and the
// fault rules around a file's call stay in the system call layer, in one
// place. Bytes implements it over a []byte, for the kernel's own I/O and
// for host tests.
type UserIO interface {
	// Len is how many bytes are left.
	Len() int64
	// CopyOut copies src to the next bytes, page by page, and moves past
	// them; it stops at the first page it may not write: the bytes copied
	// and unix.EFAULT.
	CopyOut(src []byte) (int, error)
	// CopyIn fills dst from the next bytes and moves past them; like
	// CopyOut at a page it may not read.
	CopyIn(dst []byte) (int, error)
	// Writable is how many of the next n bytes CopyOut could write
	// without faulting; it moves nothing. A file that cannot give back
	// what it has taken (a datagram, a counter) asks before it takes.
	Writable(n int) int
}

// FileSizeLimited is a UserIO that knows its writer's file size limit
// (RLIMIT_FSIZE). A regular file's write stops short of it; one that
// would start at or past it calls FileSizeExceeded (the writer gets
// SIGXFSZ) and fails with EFBIG, as Linux's generic_write_check_limits.
type FileSizeLimited interface {
	FileSizeLimit() int64 // math.MaxInt64: none
	FileSizeExceeded()
}

// limitWrite cuts p, to be written at off by src's writer, at the
// writer's file size limit.
func limitWrite(src UserIO, p []byte, off int64) ([]byte, error) {
	l, ok := src.(FileSizeLimited)
	if !ok || len(p) == 0 {
		return p, nil
	}
	limit := l.FileSizeLimit()
	if off >= limit {
		l.FileSizeExceeded()
		return nil, unix.EFBIG
	}
	return p[:min(int64(len(p)), limit-off)], nil
}

// IOChunk is the most one call of a file's ReadTo or WriteFrom is given:
// the system call layer lets other tasks run between chunks, and a file
// that stages bytes stages no more than this.
const IOChunk = 64 << 10

// Bytes is a UserIO over b.
type Bytes struct{ b []byte }

// NewBytes returns a UserIO over b.
func NewBytes(b []byte) *Bytes { return &Bytes{b: b} }

// Len is how many bytes are left.
func (u *Bytes) Len() int64 { return int64(len(u.b)) }

// CopyOut copies src to the next bytes.
func (u *Bytes) CopyOut(src []byte) (int, error) {
	n := copy(u.b, src)
	u.b = u.b[n:]
	return n, nil
}

// CopyIn fills dst from the next bytes.
func (u *Bytes) CopyIn(dst []byte) (int, error) {
	n := copy(dst, u.b)
	u.b = u.b[n:]
	return n, nil
}

// Writable is min(n, Len).
func (u *Bytes) Writable(n int) int { return min(n, len(u.b)) }

// Staging: a file that takes or gives its bytes as a []byte (a socket's
// stack, a device, a counter) goes through a pooled buffer of IOChunk
// bytes, as every file did before UserIO.

var stagingBufs = sync.Pool{New: func() any { return new([IOChunk]byte) }}

// ReadStaged reads into dst with read, through a buffer: no more than dst
// can take from where it becomes unwritable (read takes what it returns),
// and EFAULT, with nothing read, when its first byte is unwritable.
func ReadStaged(dst UserIO, read func([]byte) (int, error)) (int64, error) {
	want := int(min(dst.Len(), IOChunk))
	k := dst.Writable(want)
	if k == 0 && want > 0 {
		return 0, unix.EFAULT
	}
	buf := stagingBufs.Get().(*[IOChunk]byte)
	defer stagingBufs.Put(buf)
	n, err := read(buf[:k])
	if err != nil {
		return 0, err
	}
	if _, err := dst.CopyOut(buf[:n]); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// ReadPeeked reads into dst from a stream that can look before it takes:
// peek copies bytes without taking them, discard takes n of them. Only
// what reached dst is taken: a copy that faults takes nothing. readers
// is held from the look to the take, one read at a time: two at once
// would both copy out what they peeked.
func ReadPeeked(dst UserIO, readers sync.Locker, peek func([]byte) (int, error), discard func(int)) (int64, error) {
	readers.Lock()
	defer readers.Unlock()
	buf := stagingBufs.Get().(*[IOChunk]byte)
	defer stagingBufs.Put(buf)
	n, err := peek(buf[:min(dst.Len(), IOChunk)])
	if err != nil {
		return 0, err
	}
	if _, err := dst.CopyOut(buf[:n]); err != nil {
		return 0, err
	}
	discard(n)
	return int64(n), nil
}

// WriteStaged writes src with write, through a buffer: the bytes are
// copied in first, and a copy that faults writes nothing. It returns what
// write took.
func WriteStaged(src UserIO, write func([]byte) (int, error)) (int64, error) {
	buf := stagingBufs.Get().(*[IOChunk]byte)
	defer stagingBufs.Put(buf)
	b := buf[:min(src.Len(), IOChunk)]
	if _, err := src.CopyIn(b); err != nil {
		return 0, err
	}
	n, err := write(b)
	return int64(n), err
}

// WriteCopied writes src with write through a buffer as Linux writes a
// regular file (generic_perform_write): the bytes copied before a copy
// faults are written, and the fault is EFAULT only when nothing was.
func WriteCopied(src UserIO, write func([]byte) (int, error)) (int64, error) {
	buf := stagingBufs.Get().(*[IOChunk]byte)
	defer stagingBufs.Put(buf)
	n, copyErr := src.CopyIn(buf[:min(src.Len(), IOChunk)])
	if n == 0 && copyErr != nil {
		return 0, copyErr
	}
	w, err := write(buf[:n])
	if err == nil {
		err = copyErr
	}
	return int64(w), err
}
