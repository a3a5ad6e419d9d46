package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Splice, sysSplice)
	register(sysno.Tee, sysTee)
	register(sysno.CopyFileRange, sysCopyFileRange)
	register(sysno.Vmsplice, sysVmsplice)
}

// sysVmsplice implements vmsplice(2) by copying, which is what it does on
// Linux too unless SPLICE_F_GIFT's pages are taken (never, since 2.6.28's
// fixes): the user's buffers into a pipe's write end, as much as fits once
// there is room, or a pipe's read end into them. It waits only without
// SPLICE_F_NONBLOCK (the pipe's own O_NONBLOCK does not count, as Linux's
// wait_for_space); EBADF for anything but a pipe.
func sysVmsplice(t *kernel.Task, a Args) (uint64, error) {
	if a[3]&^spliceFlags != 0 {
		return 0, unix.EINVAL
	}
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if _, ok := d.File.(*fs.PipeEnd); !ok {
		return 0, unix.EBADF
	}
	var few [fewIovecs]iovec
	vs, err := readIovecs(t, a[1], a[2], &few)
	if err != nil || iovecsLen(vs) == 0 {
		return 0, err
	}
	nonblock := a[3]&unix.SPLICE_F_NONBLOCK != 0
	if !d.Writable() {
		return readTo(t, d, vs, d.File.ReadTo, ioMode{nonblock: nonblock})
	}
	// Into the pipe: what fits once there is room, not all of it (the
	// caller may be the pipe's only reader).
	for {
		n, err := writeFrom(t, d, vs, d.File.WriteFrom, ioMode{nonblock: true})
		if err != unix.EAGAIN || nonblock {
			return n, err
		}
		if err := waitReady(t, d, unix.EPOLLOUT); err != nil {
			return 0, err
		}
	}
}

const spliceFlags = unix.SPLICE_F_MOVE | unix.SPLICE_F_NONBLOCK | unix.SPLICE_F_MORE | unix.SPLICE_F_GIFT

// spliceEnd is one side of a splice: a pipe, or another file read or
// written at its position or at an offset the caller passed.
type spliceEnd struct {
	d      *fs.Description
	pipe   *fs.PipeEnd
	offPtr uint64 // the caller's loff_t, 0: the file's position
	off    int64
}

// spliceEnds gets the descriptors of a splice or tee and their offsets,
// with Linux's checks in Linux's order.
func spliceEnds(t *kernel.Task, fdIn, offIn, fdOut, offOut uint64) (in, out spliceEnd, err error) {
	if in.d, err = t.Proc.Files.Get(int(int32(fdIn))); err != nil {
		return in, out, err
	}
	if out.d, err = t.Proc.Files.Get(int(int32(fdOut))); err != nil {
		in.d.DecRef()
		return in, out, err
	}
	in.pipe, _ = in.d.File.(*fs.PipeEnd)
	out.pipe, _ = out.d.File.(*fs.PipeEnd)
	in.offPtr, out.offPtr = offIn, offOut
	switch {
	case !in.d.Readable() || !out.d.Writable():
		err = unix.EBADF
	case in.pipe == nil && out.pipe == nil:
		err = unix.EINVAL
	case out.d.Flags()&unix.O_APPEND != 0:
		err = unix.EINVAL
	}
	for _, e := range []*spliceEnd{&in, &out} {
		if err != nil || e.offPtr == 0 {
			continue
		}
		if e.pipe != nil || !e.d.Positioned() {
			err = unix.ESPIPE
		} else if err = copyInStruct(t, e.offPtr, &e.off); err == nil && e.off < 0 {
			err = unix.EINVAL
		}
	}
	for _, e := range []*spliceEnd{&in, &out} {
		if err == nil && e.pipe == nil && !spliceable(e.d) {
			err = unix.EINVAL // no splice_read or splice_write, as Linux's warn_unsupported
		}
	}
	if err != nil {
		in.d.DecRef()
		out.d.DecRef()
	}
	return in, out, err
}

// spliceable reports whether the file d is open on is one Linux splices
// to or from: a regular file (of /proc too), a device or a socket; not a
// directory, nor an anonymous inode's file (an eventfd, a timerfd, an
// epoll or inotify instance, a pidfd).
func spliceable(d *fs.Description) bool {
	switch d.File.Stat().Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFCHR, unix.S_IFSOCK:
		return true
	}
	return false
}

// read reads the file into b, at the caller's offset or the file's
// position.
func (e *spliceEnd) read(b []byte) (int, error) {
	var n int64
	var err error
	if e.offPtr != 0 {
		n, err = e.d.ReadAt(fs.NewBytes(b), e.off)
		e.off += n
	} else {
		n, err = e.d.File.ReadTo(fs.NewBytes(b))
	}
	return int(n), err
}

// write writes b to the file, at the caller's offset or the position.
func (e *spliceEnd) write(b []byte) (int, error) {
	var n int64
	var err error
	if e.offPtr != 0 {
		n, err = e.d.WriteAt(fs.NewBytes(b), e.off)
		e.off += n
	} else {
		n, err = e.d.File.WriteFrom(fs.NewBytes(b))
	}
	return int(n), err
}

// sysSplice implements splice(2): bytes from a pipe to a file or socket,
// from a file or socket to a pipe, or between two pipes. The pipe side
// waits unless SPLICE_F_NONBLOCK or its own O_NONBLOCK says not to; the
// other side waits as its own reads and writes do (a socket read also
// not under SPLICE_F_NONBLOCK), as Linux's do_splice decides.
func sysSplice(t *kernel.Task, a Args) (uint64, error) {
	n, flags := int64(min(a[4], maxIO)), a[5]
	if n == 0 {
		return 0, nil
	}
	if flags&^spliceFlags != 0 {
		return 0, unix.EINVAL
	}
	in, out, err := spliceEnds(t, a[0], a[1], a[2], a[3])
	if err != nil {
		return 0, err
	}
	defer in.d.DecRef()
	defer out.d.DecRef()
	if in.off+n < 0 || out.off+n < 0 {
		return 0, unix.EINVAL // an offset and the length past the largest (rw_verify_area)
	}
	nonblock := flags&unix.SPLICE_F_NONBLOCK != 0
	var moved int64
	for {
		var pipeSide, other *spliceEnd
		var pipeMask, otherMask uint32
		switch {
		case in.pipe != nil && out.pipe != nil:
			moved, err = fs.SplicePipe(in.pipe, out.pipe, n, false)
			pipeSide, pipeMask = &in, unix.EPOLLIN
			if in.pipe.Readiness(unix.EPOLLIN) != 0 {
				pipeSide, pipeMask = &out, unix.EPOLLOUT
			}
			nonblock = nonblock || in.d.Nonblock() || out.d.Nonblock()
		case in.pipe != nil:
			moved, err = in.pipe.SpliceTo(n, out.write)
			pipeSide, pipeMask, other, otherMask = &in, unix.EPOLLIN, &out, unix.EPOLLOUT
			nonblock = nonblock || in.d.Nonblock()
		default:
			moved, err = out.pipe.SpliceFrom(n, in.read)
			pipeSide, pipeMask, other, otherMask = &out, unix.EPOLLOUT, &in, unix.EPOLLIN
			nonblock = nonblock || out.d.Nonblock()
		}
		if err != unix.EAGAIN {
			break
		}
		// Wait on the side that is not ready: the pipe (empty or full),
		// else the other file (no data, no room).
		waitOn, mask, nb := pipeSide, pipeMask, nonblock
		if other != nil && pipeSide.pipe.Readiness(pipeMask) != 0 {
			waitOn, mask, nb = other, otherMask, other.d.Nonblock()
			if other == &in && flags&unix.SPLICE_F_NONBLOCK != 0 {
				nb = true
			}
		}
		if nb {
			break
		}
		if err = waitReady(t, waitOn.d, mask); err != nil {
			break
		}
	}
	if err != nil {
		return 0, err
	}
	for _, e := range []*spliceEnd{&in, &out} {
		if e.offPtr != 0 {
			if err := copyOutStruct(t, e.offPtr, e.off); err != nil {
				return 0, err
			}
		}
	}
	return uint64(moved), nil
}

// sysTee implements tee(2): copies bytes from one pipe to another,
// leaving them in the first.
func sysTee(t *kernel.Task, a Args) (uint64, error) {
	n, flags := int64(min(a[2], maxIO)), a[3]
	if n == 0 {
		return 0, nil
	}
	if flags&^spliceFlags != 0 {
		return 0, unix.EINVAL
	}
	in, out, err := spliceEnds(t, a[0], 0, a[1], 0)
	if err != nil {
		return 0, err
	}
	defer in.d.DecRef()
	defer out.d.DecRef()
	if in.pipe == nil || out.pipe == nil {
		return 0, unix.EINVAL
	}
	nonblock := flags&unix.SPLICE_F_NONBLOCK != 0 || in.d.Nonblock() || out.d.Nonblock()
	for {
		moved, err := fs.SplicePipe(in.pipe, out.pipe, n, true)
		if err != unix.EAGAIN || nonblock {
			return uint64(moved), err
		}
		waitOn, mask := in.d, uint32(unix.EPOLLIN)
		if in.pipe.Readiness(unix.EPOLLIN) != 0 {
			waitOn, mask = out.d, unix.EPOLLOUT
		}
		if err := waitReady(t, waitOn, mask); err != nil {
			return 0, err
		}
	}
}

// sysCopyFileRange implements copy_file_range(2) between regular files,
// through the kernel's buffer a chunk at a time, stopping at the end of
// the input.
func sysCopyFileRange(t *kernel.Task, a Args) (uint64, error) {
	if a[5] != 0 {
		return 0, unix.EINVAL
	}
	inD, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer inD.DecRef()
	outD, err := t.Proc.Files.Get(int(int32(a[2])))
	if err != nil {
		return 0, err
	}
	defer outD.DecRef()
	in, okIn := inD.NodeFile()
	out, okOut := outD.NodeFile()
	switch {
	case !inD.Readable() || !outD.Writable() || outD.Flags()&unix.O_APPEND != 0:
		return 0, unix.EBADF
	case okIn && in.Node().IsDir(), okOut && out.Node().IsDir():
		return 0, unix.EISDIR
	case !okIn || !okOut || !in.Node().Mode.IsRegular() || !out.Node().Mode.IsRegular():
		return 0, unix.EINVAL
	}
	inOff, outOff := in.Offset(), out.Offset()
	for _, p := range []struct {
		addr uint64
		off  *int64
	}{{a[1], &inOff}, {a[3], &outOff}} {
		if p.addr == 0 {
			continue
		}
		if err := copyInStruct(t, p.addr, p.off); err != nil {
			return 0, err
		}
		if *p.off < 0 {
			return 0, unix.EINVAL
		}
	}
	// As Linux, at most what the source holds when the call begins: a copy
	// to further on in the same file would otherwise read back what it
	// wrote and go on, filling memory, until the process ended.
	count := max(0, min(int64(min(a[4], maxIO)), in.Stat().Size-inOff))
	if in.Node() == out.Node() && inOff < outOff+count && outOff < inOff+count {
		return 0, unix.EINVAL // overlapping ranges of one file
	}
	buf := sendfileBufs.Get().(*[ioChunk]byte)
	defer sendfileBufs.Put(buf)
	done := int64(0)
	for done < count && (done == 0 || t.Preempt()) {
		r, err := in.ReadAt(buf[:min(ioChunk, count-done)], inOff+done)
		w := 0
		if r > 0 {
			w, err = out.WriteAt(buf[:r], outOff+done)
			done += int64(w)
		}
		if err != nil && done == 0 {
			return 0, err
		}
		if err != nil || r == 0 || w < r {
			break
		}
	}
	if a[1] != 0 {
		if err := copyOutStruct(t, a[1], inOff+done); err != nil {
			return 0, err
		}
	} else {
		in.SetOffset(inOff + done)
	}
	if a[3] != 0 {
		return uint64(done), copyOutStruct(t, a[3], outOff+done)
	}
	out.SetOffset(outOff + done)
	return uint64(done), nil
}
