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
		return recvWhole(t, a[0], oneIovec(a[1], a[2]))
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
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	var few [fewIovecs]iovec
	vs, err := readIovecs(t, a[1], a[2], &few)
	if err != nil {
		return 0, err
	}
	if movesMessages(d) {
		return recvWhole(t, a[0], vs)
	}
	return readTo(t, d, vs, readerOf(t, d), modeOf(d))
}

// sysWritev implements writev(2).
func sysWritev(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	var few [fewIovecs]iovec
	vs, err := readIovecs(t, a[1], a[2], &few)
	if err != nil {
		return 0, err
	}
	if writesAsSend(d) {
		return sendData(t, a[0], vs, 0, 0, 0, jnet.Control{})
	}
	return writeFrom(t, d, vs, d.File.WriteFrom, modeOf(d))
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
func recvWhole(t *kernel.Task, fd uint64, vs []iovec) (uint64, error) {
	n, r, err := recvData(t, fd, vs, 0)
	dropRefs(r.rights)
	return n, err
}

// positioned returns the description open on fd for pread and pwrite,
// with the reference the caller drops, and checks the offset: ESPIPE for
// pipes and sockets, EINVAL when negative or when the range passes the
// largest offset.
func positioned(t *kernel.Task, fd, off uint64, vs []iovec) (*fs.Description, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, err
	}
	if !d.Positioned() {
		d.DecRef()
		return nil, unix.ESPIPE
	}
	if int64(off) < 0 || int64(off+iovecsLen(vs)) < 0 {
		d.DecRef()
		return nil, unix.EINVAL
	}
	return d, nil
}

// preadTo reads the file at off into vs.
func preadTo(t *kernel.Task, fd, off uint64, vs []iovec) (uint64, error) {
	d, err := positioned(t, fd, off, vs)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	pos := int64(off)
	return readTo(t, d, vs, func(dst fs.UserIO) (int64, error) {
		n, err := d.ReadAt(dst, pos)
		pos += n
		return n, err
	}, modeOf(d))
}

// pwriteFrom writes vs to the file at off.
func pwriteFrom(t *kernel.Task, fd, off uint64, vs []iovec) (uint64, error) {
	d, err := positioned(t, fd, off, vs)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	pos := int64(off)
	return writeFrom(t, d, vs, func(src fs.UserIO) (int64, error) {
		n, err := d.WriteAt(src, pos)
		pos += n
		return n, err
	}, modeOf(d))
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
	in, ok := inDesc.NodeFile()
	if !ok || !inDesc.Readable() || !out.Writable() {
		return 0, unix.EBADF
	}
	if out.Node() == in.Node() {
		return 0, unix.EINVAL // Linux splices no file into itself
	}
	off := in.Offset()
	if a[2] != 0 {
		if err := copyInStruct(t, a[2], &off); err != nil {
			return 0, err
		}
		if off < 0 {
			return 0, unix.EINVAL
		}
	}
	count := min(a[3], maxIO)
	var send func(done int64, n int) (int, bool, error)
	if w, ok := out.File.(readerWriter); ok {
		// The socket reads the file itself, so the count must not pass
		// the file's end.
		size := in.Stat().Size
		count = min(count, uint64(max(size-off, 0)))
		span := fileSpans.Get().(*fileSpan)
		defer fileSpans.Put(span)
		send = func(done int64, n int) (int, bool, error) {
			for {
				*span = fileSpan{f: in, off: off + done, end: off + done + int64(n)}
				sent, err := w.WriteReader(span, n)
				if err == unix.EAGAIN && !out.Nonblock() {
					if err = waitReady(t, out, unix.EPOLLOUT); err == nil {
						continue
					}
				}
				shrank := span.shrank
				*span = fileSpan{}        // the pool keeps no file
				return sent, !shrank, err // a file truncated meanwhile ends it
			}
		}
	} else {
		buf := sendfileBufs.Get().(*[ioChunk]byte)
		defer sendfileBufs.Put(buf)
		send = func(done int64, n int) (int, bool, error) {
			r, err := in.ReadAt(buf[:n], off+done)
			if r == 0 || err != nil {
				return 0, false, err
			}
			from := func(off uint64) fs.UserIO { return fs.NewBytes(buf[off:r]) }
			sent, err := writeAll(t, out, uint64(r), from, out.File.WriteFrom, modeOf(out))
			return int(sent), true, err
		}
	}
	sent := int64(0)
	for uint64(sent) < count && (sent == 0 || t.Preempt()) {
		// A chunk at a time: one datagram each for a UDP socket.
		n, more, err := send(sent, int(min(ioChunk, count-uint64(sent))))
		sent += int64(n)
		if err != nil && sent == 0 {
			return 0, err
		}
		if err != nil || !more {
			break
		}
	}
	if a[2] != 0 {
		return uint64(sent), copyOutStruct(t, a[2], off+sent)
	}
	in.SetOffset(off + sent)
	return uint64(sent), nil
}

// sendfileBufs hold a chunk of the file on its way to a file other than
// a TCP socket, which then stages it again (fs.WriteStaged).
var sendfileBufs = sync.Pool{New: func() any { return new([ioChunk]byte) }}

// readerWriter is a file that writes what it reads from a reader (a TCP
// socket, whose stack copies the file's bytes into its buffers itself).
type readerWriter interface {
	WriteReader(r io.Reader, n int) (int, error)
}

// fileSpans keep sendfile's spans between calls: a socket takes one as an
// io.Reader, which would allocate one per call.
var fileSpans = sync.Pool{New: func() any { return new(fileSpan) }}

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
