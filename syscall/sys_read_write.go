package syscall

import (
	"errors"
	"io"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	jnet "github.com/jiege-go/jiege/net"
)

func init() {
	register(sysno.Read, sysRead)
	register(sysno.Write, sysWrite)
	register(sysno.Readv, sysReadv)
	register(sysno.Writev, sysWritev)
	register(sysno.Pread64, sysPread64)
	register(sysno.Pwrite64, sysPwrite64)
	register(sysno.Preadv, sysPreadv)
	register(sysno.Pwritev, sysPwritev)
	register(sysno.Preadv2, sysPreadv2)
	register(sysno.Pwritev2, sysPwritev2)
	register(sysno.Lseek, sysLseek)
	register(sysno.Sendfile, sysSendfile)
}

// sysRead implements read(2).
func sysRead(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if movesMessages(d) {
		return recvWhole(t, a[0], oneIovec(a[1], a[2]), 0)
	}
	return readTo(t, d, oneIovec(a[1], a[2]), readerOf(t, d), modeOf(d))
}

// sysWrite implements write(2).
func sysWrite(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if writesAsSend(d) {
		return sendData(t, a[0], oneIovec(a[1], a[2]), 0, 0, 0, jnet.Control{})
	}
	return writeFrom(t, d, oneIovec(a[1], a[2]), d.File.WriteFrom, modeOf(d))
}

// sysReadv implements readv(2).
func sysReadv(t *kernel.Task, a Args) (uint64, error) {
	return readvAt(t, a[0], a[1], a[2], -1, 0)
}

// sysWritev implements writev(2).
func sysWritev(t *kernel.Task, a Args) (uint64, error) {
	return writevAt(t, a[0], a[1], a[2], -1, 0)
}

// readv reads into vs at the file position of d, open on fd, with
// preadv2's flags (rwv2Flags).
func readv(t *kernel.Task, d *fs.Description, fd uint64, vs []iovec, flags uint64) (uint64, error) {
	if movesMessages(d) {
		return recvWhole(t, fd, vs, flags)
	}
	return readTo(t, d, vs, readerOf(t, d), modeWith(d, flags))
}

// writev writes vs at the file position of d, open on fd, with
// pwritev2's flags (rwv2Flags).
func writev(t *kernel.Task, d *fs.Description, fd uint64, vs []iovec, flags uint64) (uint64, error) {
	if writesAsSend(d) {
		var sendFlags uint64
		if flags&unix.RWF_NOWAIT != 0 {
			sendFlags = unix.MSG_DONTWAIT
		}
		return sendData(t, fd, vs, sendFlags, 0, 0, jnet.Control{})
	}
	return writeFrom(t, d, vs, d.File.WriteFrom, modeWith(d, flags))
}

// rwv2Flags are the RWF_ flags preadv2 and pwritev2 take: RWF_NOWAIT
// makes the call non-blocking; HIPRI, DSYNC and SYNC change nothing where
// every write is in memory. RWF_APPEND, RWF_NOAPPEND and RWF_ATOMIC are
// EOPNOTSUPP: they are not offered.
const rwv2Flags = unix.RWF_HIPRI | unix.RWF_DSYNC | unix.RWF_SYNC | unix.RWF_NOWAIT

// checkRWFlags refuses RWF_ flags not offered, and RWF_NOWAIT on a file
// that cannot say it would block (Linux's FMODE_NOWAIT: pipes and sockets
// have it; tmpfs files have not), with EOPNOTSUPP.
func checkRWFlags(d *fs.Description, flags uint64) error {
	if flags&^rwv2Flags != 0 {
		return unix.EOPNOTSUPP
	}
	if _, waitable := d.Waitable(); flags&unix.RWF_NOWAIT != 0 && !waitable {
		return unix.EOPNOTSUPP
	}
	return nil
}

// modeWith is the mode of a read or write on d with RWF_ flags.
func modeWith(d *fs.Description, flags uint64) ioMode {
	m := modeOf(d)
	m.nonblock = m.nonblock || flags&unix.RWF_NOWAIT != 0
	return m
}

// movesMessages reports whether d is a socket of messages (datagrams,
// seqpacket), which read and write move whole, as recv and send do, not
// in the chunks of a stream.
func movesMessages(d *fs.Description) bool {
	so, ok := d.File.(jnet.Socket)
	return ok && so.MaxMessage() > 0
}

// writesAsSend reports whether a write on d is a send(2) without flags: on
// a socket of messages, and on a Unix socket, whose sends carry the
// writer's credentials (SO_PASSCRED).
func writesAsSend(d *fs.Description) bool {
	so, ok := d.File.(jnet.Socket)
	return ok && (so.MaxMessage() > 0 || so.Family() == unix.AF_UNIX)
}

// recvWhole reads one message into vs as recv(2) without flags; the
// descriptions passed with it are dropped, as a read drops them.
func recvWhole(t *kernel.Task, fd uint64, vs []iovec, flags uint64) (uint64, error) {
	var recvFlags uint64
	if flags&unix.RWF_NOWAIT != 0 {
		recvFlags = unix.MSG_DONTWAIT
	}
	n, r, err := recvData(t, fd, vs, recvFlags)
	dropRefs(r.rights)
	return n, err
}

// positioned returns the description open on fd for pread and pwrite,
// with the reference the caller drops, and checks the offset
// (checkPositioned).
func positioned(t *kernel.Task, fd, off uint64, vs []iovec) (*fs.Description, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, err
	}
	if err := checkPositioned(d, off, vs); err != nil {
		d.DecRef()
		return nil, err
	}
	return d, nil
}

// checkPositioned checks a positioned read or write of vs at off on d:
// ESPIPE for pipes and sockets, EINVAL when the offset is negative or
// the range passes the largest offset.
func checkPositioned(d *fs.Description, off uint64, vs []iovec) error {
	if !d.Positioned() {
		return unix.ESPIPE
	}
	if int64(off) < 0 || int64(off+iovecsLen(vs)) < 0 {
		return unix.EINVAL
	}
	return nil
}

// preadTo reads the file at off into vs.
func preadTo(t *kernel.Task, fd, off uint64, vs []iovec) (uint64, error) {
	d, err := positioned(t, fd, off, vs)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return preadOn(t, d, int64(off), vs, 0)
}

// pwriteFrom writes vs to the file at off.
func pwriteFrom(t *kernel.Task, fd, off uint64, vs []iovec) (uint64, error) {
	d, err := positioned(t, fd, off, vs)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return pwriteOn(t, d, int64(off), vs, 0)
}

// preadOn reads d at off into vs, with preadv2's flags (rwv2Flags).
func preadOn(t *kernel.Task, d *fs.Description, off int64, vs []iovec, flags uint64) (uint64, error) {
	pos := off
	return readTo(t, d, vs, func(dst fs.UserIO) (int64, error) {
		n, err := d.ReadAt(dst, pos)
		pos += n
		return n, err
	}, modeWith(d, flags))
}

// pwriteOn writes vs to d at off, with pwritev2's flags (rwv2Flags).
func pwriteOn(t *kernel.Task, d *fs.Description, off int64, vs []iovec, flags uint64) (uint64, error) {
	pos := off
	return writeFrom(t, d, vs, func(src fs.UserIO) (int64, error) {
		n, err := d.WriteAt(src, pos)
		pos += n
		return n, err
	}, modeWith(d, flags))
}

// sysPread64 implements pread64(2).
func sysPread64(t *kernel.Task, a Args) (uint64, error) {
	return preadTo(t, a[0], a[3], oneIovec(a[1], a[2]))
}

// sysPwrite64 implements pwrite64(2).
func sysPwrite64(t *kernel.Task, a Args) (uint64, error) {
	return pwriteFrom(t, a[0], a[3], oneIovec(a[1], a[2]))
}

// sysPreadv implements preadv(2).
func sysPreadv(t *kernel.Task, a Args) (uint64, error) {
	var few [fewIovecs]iovec
	vs, err := readIovecs(t, a[1], a[2], &few)
	if err != nil {
		return 0, err
	}
	return preadTo(t, a[0], a[3], vs)
}

// sysPwritev implements pwritev(2).
func sysPwritev(t *kernel.Task, a Args) (uint64, error) {
	var few [fewIovecs]iovec
	vs, err := readIovecs(t, a[1], a[2], &few)
	if err != nil {
		return 0, err
	}
	return pwriteFrom(t, a[0], a[3], vs)
}

// sysPreadv2 implements preadv2(2): preadv, or readv at offset -1, with
// RWF_ flags (EOPNOTSUPP for those not offered). On a 64-bit machine the
// offset is the fourth argument whole; the fifth is unused.
func sysPreadv2(t *kernel.Task, a Args) (uint64, error) {
	return readvAt(t, a[0], a[1], a[2], int64(a[3]), a[5])
}

// sysPwritev2 implements pwritev2(2), as sysPreadv2 reads.
func sysPwritev2(t *kernel.Task, a Args) (uint64, error) {
	return writevAt(t, a[0], a[1], a[2], int64(a[3]), a[5])
}

// readvAt reads into the count buffers of the iovec array at iov from
// fd, at off or at the file position when off is -1, with RWF_ flags:
// readv, preadv2, and io_uring's vectored reads. As Linux's do_readv and
// do_preadv: the descriptor is looked up before the buffers are read.
func readvAt(t *kernel.Task, fd, iov, count uint64, off int64, flags uint64) (uint64, error) {
	var few [fewIovecs]iovec
	d, vs, err := vectored(t, fd, iov, count, off, flags, &few)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return readAt(t, d, fd, vs, off, flags)
}

// writevAt writes as readvAt reads: writev, pwritev2, io_uring's writes.
func writevAt(t *kernel.Task, fd, iov, count uint64, off int64, flags uint64) (uint64, error) {
	var few [fewIovecs]iovec
	d, vs, err := vectored(t, fd, iov, count, off, flags, &few)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return writeAt(t, d, fd, vs, off, flags)
}

// vectored checks readvAt's and writevAt's arguments in Linux's order and
// returns the description, with a reference the caller drops, and the
// buffers.
func vectored(t *kernel.Task, fd, iov, count uint64, off int64, flags uint64, few *[fewIovecs]iovec) (*fs.Description, []iovec, error) {
	if off < -1 {
		return nil, nil, unix.EINVAL
	}
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, nil, err
	}
	vs, err := readIovecs(t, iov, count, few)
	if err == nil {
		err = checkRWFlags(d, flags)
	}
	if err != nil {
		d.DecRef()
		return nil, nil, err
	}
	return d, vs, nil
}

// readAt reads into vs from d, open on fd, at off or at the file
// position when off is -1.
func readAt(t *kernel.Task, d *fs.Description, fd uint64, vs []iovec, off int64, flags uint64) (uint64, error) {
	if off == -1 {
		return readv(t, d, fd, vs, flags)
	}
	if err := checkPositioned(d, uint64(off), vs); err != nil {
		return 0, err
	}
	return preadOn(t, d, off, vs, flags)
}

// writeAt writes vs to d as readAt reads.
func writeAt(t *kernel.Task, d *fs.Description, fd uint64, vs []iovec, off int64, flags uint64) (uint64, error) {
	if off == -1 {
		return writev(t, d, fd, vs, flags)
	}
	if err := checkPositioned(d, uint64(off), vs); err != nil {
		return 0, err
	}
	return pwriteOn(t, d, off, vs, flags)
}

// sysLseek implements lseek(2).
func sysLseek(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if uint32(a[2]) > unix.SEEK_HOLE { // SEEK_MAX, before the file's own checks
		return 0, unix.EINVAL
	}
	off, err := d.Seek(int64(a[1]), int(a[2]))
	return uint64(off), err
}

// sysSendfile implements sendfile(2) from a tree file to any file, a
// chunk at a time: a TCP socket reads the file straight into its buffers,
// other files are written from a buffer. The offset (or the file
// position) advances by what was sent.
func sysSendfile(t *kernel.Task, a Args) (uint64, error) {
	out, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer out.DecRef()
	inDesc, err := t.Proc.Files.Get(int(int32(a[1])))
	if err != nil {
		return 0, err
	}
	defer inDesc.DecRef()
	return sendfile(t, out, inDesc, a[2], a[3])
}

// sendfile is sendfile(2) once its files are held; offAddr is the
// offset's address or 0.
func sendfile(t *kernel.Task, out, inDesc *fs.Description, offAddr, count uint64) (uint64, error) {
	in, ok := inDesc.NodeFile()
	if !ok || !inDesc.Readable() || !out.Writable() {
		return 0, unix.EBADF
	}
	if out.Node() == in.Node() {
		return 0, unix.EINVAL // Linux splices no file into itself
	}
	off := in.Offset()
	if offAddr != 0 {
		if err := copyInStruct(t, offAddr, &off); err != nil {
			return 0, err
		}
		if off < 0 {
			return 0, unix.EINVAL
		}
	}
	count = min(count, maxIO)
	var sent int64
	var err error
	if w, ok := out.File.(readerWriter); ok {
		sent, err = sendfileToReader(t, out, w, in, off, count)
	} else {
		sent, err = sendfileBuffered(t, out, in, off, count)
	}
	if err != nil {
		return 0, err
	}
	if offAddr != 0 {
		return uint64(sent), copyOutStruct(t, offAddr, off+sent)
	}
	in.SetOffset(off + sent)
	return uint64(sent), nil
}

// sendfileToReader sends count bytes of in from off to a file that reads
// them itself (a TCP socket, whose stack copies the file's bytes into its
// buffers): the count must not pass the file's end.
func sendfileToReader(t *kernel.Task, out *fs.Description, w readerWriter, in *fs.NodeFile, off int64, count uint64) (int64, error) {
	count = min(count, uint64(max(in.Size()-off, 0)))
	span := &callStateOf(t).span
	defer func() { *span = fileSpan{} }() // the task keeps no file
	return sendChunks(t, count, func(done int64, n int) (int, bool, error) {
		for {
			*span = fileSpan{f: in, off: off + done, end: off + done + int64(n)}
			sent, err := w.WriteReader(span, n)
			if err == unix.EAGAIN && !out.Nonblock() {
				if err = waitReady(t, out, unix.EPOLLOUT); err == nil {
					continue
				}
			}
			return sent, !span.shrank, err // a file truncated meanwhile ends it
		}
	})
}

// sendfileBuffered sends count bytes of in from off to any other file,
// through a buffer.
func sendfileBuffered(t *kernel.Task, out *fs.Description, in *fs.NodeFile, off int64, count uint64) (int64, error) {
	buf := sendfileBufs.Get().(*[ioChunk]byte)
	defer sendfileBufs.Put(buf)
	return sendChunks(t, count, func(done int64, n int) (int, bool, error) {
		r, err := in.ReadAt(buf[:n], off+done)
		if r == 0 || err != nil {
			return 0, false, err
		}
		from := func(off uint64) fs.UserIO { return fs.NewBytes(buf[off:r]) }
		sent, err := writeAll(t, out, uint64(r), from, out.File.WriteFrom, modeOf(out))
		return int(sent), true, err
	})
}

// sendChunks sends count bytes with send, a chunk at a time (one datagram
// each for a UDP socket), until send fails or says there is no more; an
// error after some bytes went ends the call with what was sent.
func sendChunks(t *kernel.Task, count uint64, send func(done int64, n int) (int, bool, error)) (int64, error) {
	sent := int64(0)
	for uint64(sent) < count && (sent == 0 || t.Preempt()) {
		n, more, err := send(sent, int(min(ioChunk, count-uint64(sent))))
		sent += int64(n)
		if err != nil && sent == 0 {
			return 0, err
		}
		if err != nil || !more {
			break
		}
	}
	return sent, nil
}

// sendfileBufs hold a chunk of the file on its way to a file other than
// a TCP socket, which then stages it again (fs.WriteStaged).
var sendfileBufs = sync.Pool{New: func() any { return new([ioChunk]byte) }}

// readerWriter is a file that writes what it reads from a reader (a TCP
// socket, whose stack copies the file's bytes into its buffers itself).
type readerWriter interface {
	WriteReader(r io.Reader, n int) (int, error)
}

// fileSpan reads the bytes [off, end) of a file; it fails, and says so,
// when the file ends before end.
type fileSpan struct {
	f        *fs.NodeFile
	off, end int64
	shrank   bool
}

var errFileShrank = errors.New("file truncated while sent")

func (s *fileSpan) Read(p []byte) (int, error) {
	if s.off >= s.end {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p = p[:min(int64(len(p)), s.end-s.off)]
	n, err := s.f.ReadAt(p, s.off)
	s.off += int64(n)
	if err == nil && n == 0 {
		s.shrank, err = true, errFileShrank
	}
	return n, err
}
