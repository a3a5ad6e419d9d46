package syscall

import (
	"encoding/binary"
	"errors"
	"io"
	iofs "io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/syscall/sysno"
)

func init() {
	register(sysno.Read, sysRead)
	register(sysno.Write, sysWrite)
	register(sysno.Readv, sysReadv)
	register(sysno.Writev, sysWritev)
	register(sysno.Pread64, sysPread64)
	register(sysno.Preadv, sysPreadv)
	register(sysno.Pwritev, sysPwritev)
	register(sysno.Openat, sysOpenat)
	register(sysno.Mknodat, sysMknodat)
	register(sysno.Close, sysClose)
	register(sysno.Lseek, sysLseek)
	register(sysno.Fstat, sysFstat)
	register(sysno.Newfstatat, sysNewfstatat)
	register(sysno.Statx, sysStatx)
	register(sysno.Utimensat, sysUtimensat)
	register(sysno.Linkat, sysLinkat)
	register(sysno.Symlinkat, sysSymlinkat)
	register(sysno.Statfs, sysStatfs)
	register(sysno.Fstatfs, sysFstatfs)
	register(sysno.Readlinkat, sysReadlinkat)
	register(sysno.Faccessat, sysFaccessat)
	register(sysno.Ioctl, sysIoctl)
	register(sysno.Fcntl, sysFcntl)
	register(sysno.Getcwd, sysGetcwd)
	register(sysno.Chdir, sysChdir)
	register(sysno.Fchdir, sysFchdir)
	register(sysno.Mkdirat, sysMkdirat)
	register(sysno.Unlinkat, sysUnlinkat)
	register(sysno.Renameat2, sysRenameat2)
	register(sysno.Fchownat, sysFchownat)
	register(sysno.Fchown, sysFchown)
	register(sysno.Fchmodat, sysFchmodat)
	register(sysno.Fchmod, sysFchmod)
	register(sysno.Umask, sysUmask)
	register(sysno.Ftruncate, sysFtruncate)
	register(sysno.Truncate, sysTruncate)
	register(sysno.Faccessat2, sysFaccessat2)
	register(sysno.Fsync, sysFsync)
	register(sysno.Flock, sysFlock)
	register(sysno.Fdatasync, sysFsync)
	register(sysno.Pwrite64, sysPwrite64)
	register(sysno.Getdents64, sysGetdents64)
	register(sysno.Sendfile, sysSendfile)
}

// sysRead implements read(2).
func sysRead(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	return readTo(t, d, oneIovec(a[1], a[2]), d.File.Read, modeOf(d))
}

// sysWrite implements write(2).
func sysWrite(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	return writeFrom(t, d, oneIovec(a[1], a[2]), d.File.Write, modeOf(d))
}

// sysReadv implements readv(2).
func sysReadv(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	vs, err := readIovecs(t, a[1], a[2])
	if err != nil {
		return 0, err
	}
	return readTo(t, d, vs, d.File.Read, modeOf(d))
}

// sysWritev implements writev(2).
func sysWritev(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	vs, err := readIovecs(t, a[1], a[2])
	if err != nil {
		return 0, err
	}
	return writeFrom(t, d, vs, d.File.Write, modeOf(d))
}

// positioned returns the regular file open on fd for pread and pwrite,
// and checks the offset: ESPIPE for pipes and sockets, EINVAL when negative.
func positioned(t *kernel.Task, fd, off uint64) (*fs.Description, *fs.NodeFile, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, nil, err
	}
	nf, ok := d.File.(*fs.NodeFile)
	if !ok {
		return nil, nil, unix.ESPIPE
	}
	if int64(off) < 0 {
		return nil, nil, unix.EINVAL
	}
	return d, nf, nil
}

// preadTo reads the file at off into vs.
func preadTo(t *kernel.Task, fd, off uint64, vs []iovec) (uint64, error) {
	d, nf, err := positioned(t, fd, off)
	if err != nil {
		return 0, err
	}
	if int64(off+iovecsLen(vs)) < 0 { // the range passes the largest offset
		return 0, unix.EINVAL
	}
	pos := int64(off)
	return readTo(t, d, vs, func(b []byte) (int, error) {
		n, err := nf.ReadAt(b, pos)
		pos += int64(n)
		return n, err
	}, modeOf(d))
}

// pwriteFrom writes vs to the file at off; EINVAL past the largest offset.
func pwriteFrom(t *kernel.Task, fd, off uint64, vs []iovec) (uint64, error) {
	d, nf, err := positioned(t, fd, off)
	if err != nil {
		return 0, err
	}
	if int64(off+iovecsLen(vs)) < 0 { // the range passes the largest offset
		return 0, unix.EINVAL
	}
	pos := int64(off)
	return writeFrom(t, d, vs, func(b []byte) (int, error) {
		n, err := nf.WriteAt(b, pos)
		pos += int64(n)
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
	vs, err := readIovecs(t, a[1], a[2])
	if err != nil {
		return 0, err
	}
	return preadTo(t, a[0], a[3], vs)
}

// sysPwritev implements pwritev(2).
func sysPwritev(t *kernel.Task, a Args) (uint64, error) {
	vs, err := readIovecs(t, a[1], a[2])
	if err != nil {
		return 0, err
	}
	return pwriteFrom(t, a[0], a[3], vs)
}

// cwdFD is AT_FDCWD as a raw argument.
const cwdFD = uint64(unix.AT_FDCWD & 0xffffffff)

// resolve makes a path absolute against dirfd: the working directory for
// AT_FDCWD, otherwise the directory open on dirfd.
func resolve(t *kernel.Task, dirfd int32, p string) (string, error) {
	if p == "" {
		return "", unix.ENOENT
	}
	switch {
	case strings.HasPrefix(p, "/"):
		p = fs.CleanPath(p)
	case dirfd == unix.AT_FDCWD:
		p = path.Join(t.Proc.Cwd, p)
	default:
		d, err := t.Proc.Files.Get(int(dirfd))
		if err != nil {
			return "", err
		}
		nf, ok := d.File.(*fs.NodeFile)
		if !ok || !nf.Node().IsDir() {
			return "", unix.ENOTDIR
		}
		p = path.Join(nf.Path(), p)
	}
	// /dev/fd is a link to /proc/self/fd on every Debian system, and
	// /proc/self (of every procfs mount) is the caller's /proc/PID.
	for _, l := range selfLinks {
		if rest, ok := strings.CutPrefix(p, l.from); ok && (rest == "" || rest[0] == '/') {
			p = l.to + rest
			break
		}
	}
	for _, proc := range t.Proc.Root.ProcTargets() {
		if rest, ok := strings.CutPrefix(p, proc+"/self"); ok && (rest == "" || rest[0] == '/') {
			p = proc + "/" + strconv.Itoa(t.Proc.PID) + rest
			break
		}
	}
	return p, nil
}

// selfLinks are the links into /proc/self that udev makes in /dev; the
// tree's walk cannot follow a link through /proc/self, so they are
// resolved here.
var selfLinks = []struct{ from, to string }{
	{"/dev/fd", "/proc/self/fd"}, {"/dev/stdin", "/proc/self/fd/0"},
	{"/dev/stdout", "/proc/self/fd/1"}, {"/dev/stderr", "/proc/self/fd/2"},
}

// pipeOfFD returns the pipe end that /proc/PID/fd/N names, if it names
// one: opening it opens that pipe anew, as Linux's magic link does.
func pipeOfFD(p string) (reopener, bool) {
	pid, fd, ok := procFD(p)
	if !ok {
		return nil, false
	}
	proc := kernel.ProcessByID(pid)
	if proc == nil {
		return nil, false
	}
	d, err := proc.Files.Get(fd)
	if err != nil {
		return nil, false
	}
	r, ok := d.File.(reopener)
	return r, ok
}

// procFD parses /proc/PID/fd/N (every open's path passes here).
func procFD(p string) (pid, fd int, ok bool) {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return 0, 0, false
	}
	pidPart, fdPart, ok := strings.Cut(rest, "/fd/")
	if !ok || !allDigits(pidPart) || !allDigits(fdPart) {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(pidPart)
	fd, err2 := strconv.Atoi(fdPart)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return pid, fd, true
}

// allDigits says whether s is one or more decimal digits.
func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// reopener is a pipe end, which a path in /proc/PID/fd opens anew.
type reopener interface {
	fs.File
	Reopen(read, write bool) fs.File
}

// sysOpenat implements openat(2) over the in-memory tree.
func sysOpenat(t *kernel.Task, a Args) (uint64, error) {
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	p, err := resolve(t, int32(a[0]), name)
	if err != nil {
		return 0, err
	}
	flags := a[2]
	acc := flags & unix.O_ACCMODE
	if acc == unix.O_ACCMODE {
		return 0, unix.EINVAL
	}
	if pe, ok := pipeOfFD(p); ok {
		f := pe.Reopen(acc != unix.O_WRONLY, acc != unix.O_RDONLY)
		fd, err := t.Proc.Files.Open(f, uint32(flags), flags&unix.O_CLOEXEC != 0)
		if err != nil {
			f.Close()
		}
		return uint64(fd), err
	}
	want := map[uint64]int{unix.O_RDONLY: fs.MayRead, unix.O_WRONLY: fs.MayWrite, unix.O_RDWR: fs.MayRead | fs.MayWrite}[acc]
	if flags&unix.O_TRUNC != 0 {
		want |= fs.MayWrite
	}
	n, err := t.Proc.Root.Open(t.Proc.Cred(), p, fs.OpenFlags{
		Create: flags&unix.O_CREAT != 0, Excl: flags&unix.O_EXCL != 0,
		Trunc: flags&unix.O_TRUNC != 0 && acc != unix.O_RDONLY, Follow: flags&unix.O_NOFOLLOW == 0,
		Perm: fs.ModeFromUnix(uint32(a[3]) & 0o7777 &^ t.Proc.Umask), Want: want,
	})
	if err != nil {
		return 0, err
	}
	if flags&unix.O_DIRECTORY != 0 && !n.IsDir() {
		return 0, unix.ENOTDIR
	}
	var f fs.File = fs.OpenNode(n, p)
	switch {
	case n.IsDevice():
		if f, err = fs.OpenDevice(n, p); err != nil {
			return 0, err
		}
	case n.IsFIFO():
		if f, err = openFIFO(t, n, acc, flags&unix.O_NONBLOCK != 0); err != nil {
			return 0, err
		}
	}
	fd, err := t.Proc.Files.Open(f, uint32(flags), flags&unix.O_CLOEXEC != 0)
	if err != nil {
		f.Close()
	}
	return uint64(fd), err
}

// openFIFO opens a named pipe; without O_NONBLOCK a reader waits for a
// writer and a writer for a reader, as Linux's fifo_open.
func openFIFO(t *kernel.Task, n *fs.Node, acc uint64, nonblock bool) (fs.File, error) {
	o, err := fs.OpenFIFO(n, acc != unix.O_WRONLY, acc != unix.O_RDONLY, nonblock)
	if err != nil {
		return nil, err
	}
	return waitPartner(t, o, nonblock)
}

// waitPartner waits, unless nonblock, until a pipe end just opened has its
// partner, and returns the end.
func waitPartner(t *kernel.Task, o *fs.FIFOOpen, nonblock bool) (fs.File, error) {
	if nonblock {
		return o.File, nil
	}
	changed := make(chan struct{}, 1)
	cancel := o.Watch(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancel()
	for !o.Partnered() {
		if err := t.Block(changed, time.Time{}); err != nil {
			o.File.Close()
			return nil, err
		}
	}
	return o.File, nil
}

// sysMknodat implements mknodat(2) for named pipes, regular files and
// character devices.
func sysMknodat(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	perm := fs.ModeFromUnix(uint32(a[2]) & 0o7777 &^ t.Proc.Umask)
	var n *fs.Node
	switch a[2] & unix.S_IFMT {
	case unix.S_IFIFO:
		n = fs.NewFIFO(perm)
	case 0, unix.S_IFREG:
		n = &fs.Node{Mode: perm}
	case unix.S_IFCHR:
		if t.Proc.EUID != 0 {
			return 0, unix.EPERM // CAP_MKNOD
		}
		n = fs.NewDevice(perm, a[3])
	case unix.S_IFDIR:
		return 0, unix.EPERM
	default:
		return 0, unix.EINVAL
	}
	n.Touch()
	return 0, t.Proc.Root.Create(t.Proc.Cred(), p, n)
}

// sysMkdirat implements mkdirat(2).
func sysMkdirat(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	return 0, t.Proc.Root.Mkdir(t.Proc.Cred(), p, fs.ModeFromUnix(uint32(a[2])&0o1777&^t.Proc.Umask))
}

// sysUnlinkat implements unlinkat(2).
func sysUnlinkat(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	return 0, t.Proc.Root.Remove(t.Proc.Cred(), p, a[2]&unix.AT_REMOVEDIR != 0)
}

// sysRenameat2 implements renameat2(2) without flags.
func sysRenameat2(t *kernel.Task, a Args) (uint64, error) {
	if a[4] != 0 {
		return 0, unix.EINVAL
	}
	from, err := pathArg(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	to, err := pathArg(t, a[2], a[3])
	if err != nil {
		return 0, err
	}
	return 0, t.Proc.Root.Rename(t.Proc.Cred(), from, to)
}

// sysFchownat implements fchownat(2) (and chown through it).
func sysFchownat(t *kernel.Task, a Args) (uint64, error) {
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	var n *fs.Node
	if name == "" && a[4]&unix.AT_EMPTY_PATH != 0 {
		n, err = nodeOf(t, a[0])
	} else {
		var p string
		if p, err = resolve(t, int32(a[0]), name); err == nil {
			n, err = t.Proc.Root.Lookup(t.Proc.Cred(), p, a[4]&unix.AT_SYMLINK_NOFOLLOW == 0)
		}
	}
	if err != nil {
		return 0, err
	}
	return 0, fs.Chown(n, t.Proc.Cred(), uint32(a[2]), uint32(a[3]))
}

// sysFchown implements fchown(2).
func sysFchown(t *kernel.Task, a Args) (uint64, error) {
	n, err := nodeOf(t, a[0])
	if err != nil {
		return 0, err
	}
	return 0, fs.Chown(n, t.Proc.Cred(), uint32(a[1]), uint32(a[2]))
}

// sysFchmodat implements fchmodat(2).
func sysFchmodat(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	n, err := t.Proc.Root.Lookup(t.Proc.Cred(), p, true)
	if err != nil {
		return 0, err
	}
	return 0, fs.Chmod(n, t.Proc.Cred(), uint32(a[2]))
}

// sysFchmod implements fchmod(2).
func sysFchmod(t *kernel.Task, a Args) (uint64, error) {
	n, err := nodeOf(t, a[0])
	if err != nil {
		return 0, err
	}
	return 0, fs.Chmod(n, t.Proc.Cred(), uint32(a[1]))
}

// sysUmask implements umask(2).
func sysUmask(t *kernel.Task, a Args) (uint64, error) {
	old := t.Proc.Umask
	t.Proc.Umask = uint32(a[0]) & 0o777
	return uint64(old), nil
}

// sysFtruncate implements ftruncate(2): EINVAL for a negative length or a
// description not open for writing.
func sysFtruncate(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	f, ok := d.File.(*fs.NodeFile)
	if !ok || !d.Writable() || int64(a[1]) < 0 {
		return 0, unix.EINVAL
	}
	return 0, f.Truncate(int64(a[1]))
}

// sysTruncate implements truncate(2): the caller needs write permission;
// EISDIR for a directory, EINVAL for a negative length or a file that is
// not regular.
func sysTruncate(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, cwdFD, a[0])
	if err != nil {
		return 0, err
	}
	n, err := t.Proc.Root.Lookup(t.Proc.Cred(), p, true)
	switch {
	case err != nil:
		return 0, err
	case n.IsDir():
		return 0, unix.EISDIR
	case int64(a[1]) < 0:
		return 0, unix.EINVAL
	}
	if err := fs.Access(n, t.Proc.Cred(), fs.MayWrite); err != nil {
		return 0, err
	}
	if !n.Mode.IsRegular() {
		return 0, unix.EINVAL
	}
	f := fs.OpenNode(n, p)
	defer f.Close()
	return 0, f.Truncate(int64(a[1]))
}

// sysFsync implements fsync(2) and fdatasync(2): memory is the medium.
func sysFsync(t *kernel.Task, a Args) (uint64, error) {
	_, err := t.Proc.Files.Get(int(int32(a[0])))
	return 0, err
}

// sysGetdents64 implements getdents64(2): ".", ".." and the entries sorted
// by name; the file position counts entries.
func sysGetdents64(t *kernel.Task, a Args) (uint64, error) {
	f, err := nodeFile(t, a[0])
	if err != nil {
		return 0, err
	}
	dir := f.Node()
	if !dir.IsDir() {
		return 0, unix.ENOTDIR
	}
	entries := append([]fs.DirEntry{{Name: ".", Node: dir}, {Name: "..", Node: dir}}, t.Proc.Root.List(dir)...)
	var out []byte
	i := int(f.Offset())
	for ; i < len(entries); i++ {
		e := entries[i]
		reclen := (19 + len(e.Name) + 1 + 7) &^ 7
		if uint64(len(out)+reclen) > a[2] {
			break
		}
		rec := make([]byte, reclen)
		binary.LittleEndian.PutUint64(rec[0:], e.Node.Ino)
		binary.LittleEndian.PutUint64(rec[8:], uint64(i+1))
		binary.LittleEndian.PutUint16(rec[16:], uint16(reclen))
		rec[18] = direntType(e.Node)
		copy(rec[19:], e.Name)
		out = append(out, rec...)
	}
	if len(out) == 0 && i < len(entries) {
		return 0, unix.EINVAL // the buffer cannot hold one entry
	}
	f.SetOffset(int64(i))
	return uint64(len(out)), copyOut(t, a[1], out)
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
	inDesc, err := t.Proc.Files.Get(int(int32(a[1])))
	if err != nil {
		return 0, err
	}
	in, ok := inDesc.File.(*fs.NodeFile)
	if !ok || !inDesc.Readable() || !out.Writable() {
		return 0, unix.EBADF
	}
	if of, ok := out.File.(*fs.NodeFile); ok && of.Node() == in.Node() {
		return 0, unix.EINVAL // Linux splices no file into itself
	}
	off := in.Offset()
	if a[2] != 0 {
		b := make([]byte, 8)
		if err := copyIn(t, a[2], b); err != nil {
			return 0, err
		}
		off = int64(binary.LittleEndian.Uint64(b))
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
		send = func(done int64, n int) (int, bool, error) {
			for {
				span := &fileSpan{f: in, off: off + done, end: off + done + int64(n)}
				sent, err := w.WriteFrom(span, n)
				if err == unix.EAGAIN && !out.Nonblock() {
					if err = waitReady(t, out, unix.EPOLLOUT); err == nil {
						continue
					}
				}
				return sent, !span.shrank, err // a file truncated meanwhile ends it
			}
		}
	} else {
		buf := chunks.Get().(*[ioChunk]byte)
		defer chunks.Put(buf)
		send = func(done int64, n int) (int, bool, error) {
			r, err := in.ReadAt(buf[:n], off+done)
			if r == 0 || err != nil {
				return 0, false, err
			}
			sent, err := writeAll(t, out, buf[:r], out.File.Write, modeOf(out))
			return sent, true, err
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
		return uint64(sent), copyOut(t, a[2], words(uint64(off+sent)))
	}
	in.SetOffset(off + sent)
	return uint64(sent), nil
}

// readerWriter is a file that writes what it reads from a reader (a TCP
// socket, whose stack copies the file's bytes into its buffers itself).
type readerWriter interface {
	WriteFrom(r io.Reader, n int) (int, error)
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

func direntType(n *fs.Node) byte {
	switch {
	case n.IsDir():
		return unix.DT_DIR
	case n.Mode&iofs.ModeSymlink != 0:
		return unix.DT_LNK
	case n.IsFIFO():
		return unix.DT_FIFO
	case n.IsDevice():
		return unix.DT_CHR
	case n.Mode&iofs.ModeSocket != 0:
		return unix.DT_SOCK
	}
	return unix.DT_REG
}

// pathArg reads a path argument and resolves it against a directory fd.
func pathArg(t *kernel.Task, dirfd, addr uint64) (string, error) {
	name, err := copyInString(t, addr)
	if err != nil {
		return "", err
	}
	return resolve(t, int32(dirfd), name)
}

// nodeFile returns the tree file open on fd.
func nodeFile(t *kernel.Task, fd uint64) (*fs.NodeFile, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, err
	}
	nf, ok := d.File.(*fs.NodeFile)
	if !ok {
		return nil, unix.EINVAL
	}
	return nf, nil
}

// nodeOf returns the tree node open on fd.
func nodeOf(t *kernel.Task, fd uint64) (*fs.Node, error) {
	f, err := nodeFile(t, fd)
	if err != nil {
		return nil, err
	}
	return f.Node(), nil
}

// sysClose implements close(2). Closing any descriptor of a file drops the
// POSIX locks the process holds on it, as on Linux.
func sysClose(t *kernel.Task, a Args) (uint64, error) {
	fd := int(int32(a[0]))
	d, err := t.Proc.Files.Get(fd)
	if err != nil {
		return 0, err
	}
	if nf, ok := d.File.(*fs.NodeFile); ok {
		fs.ReleaseLocks(nf.Node(), t.Proc)
	}
	return 0, t.Proc.Files.Close(fd)
}

// sysLseek implements lseek(2).
func sysLseek(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	s, ok := d.File.(fs.Seeker)
	if !ok {
		return 0, unix.ESPIPE
	}
	off, err := s.Seek(int64(a[1]), int(a[2]))
	return uint64(off), err
}

// sysFstat implements fstat(2).
func sysFstat(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[1], statOf(d.File.Stat()))
}

// sysNewfstatat implements newfstatat(2).
func sysNewfstatat(t *kernel.Task, a Args) (uint64, error) {
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	flags := a[3]
	if name == "" && flags&unix.AT_EMPTY_PATH != 0 {
		return sysFstat(t, Args{a[0], a[2]})
	}
	p, err := resolve(t, int32(a[0]), name)
	if err != nil {
		return 0, err
	}
	if pe, ok := pipeOfFD(p); ok && flags&unix.AT_SYMLINK_NOFOLLOW == 0 {
		return 0, copyOutStruct(t, a[2], statOf(pe.Stat()))
	}
	n, err := t.Proc.Root.Lookup(t.Proc.Cred(), p, flags&unix.AT_SYMLINK_NOFOLLOW == 0)
	if err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[2], statOf(fs.StatNode(n)))
}

// sysReadlinkat implements readlinkat(2); /proc/self/exe names the program.
func sysReadlinkat(t *kernel.Task, a Args) (uint64, error) {
	if int32(a[3]) <= 0 {
		return 0, unix.EINVAL
	}
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	var target string
	if path.Clean(name) == "/proc/self" {
		target = strconv.Itoa(t.Proc.PID)
	} else {
		p, err := resolve(t, int32(a[0]), name)
		if err != nil {
			return 0, err
		}
		n, err := t.Proc.Root.Lookup(t.Proc.Cred(), p, false)
		if err != nil {
			return 0, err
		}
		if n.Link == "" {
			return 0, unix.EINVAL
		}
		target = n.Link
	}
	b := []byte(target)[:min(uint64(len(target)), a[3])]
	return uint64(len(b)), copyOut(t, a[2], b)
}

// sysFaccessat implements faccessat(2) (and access(2) through it).
func sysFaccessat(t *kernel.Task, a Args) (uint64, error) {
	return sysFaccessat2(t, Args{a[0], a[1], a[2], 0})
}

// sysFaccessat2 implements faccessat2(2): the check uses the real ids
// unless AT_EACCESS asks for the effective ones, as a set-user-ID program
// needs.
func sysFaccessat2(t *kernel.Task, a Args) (uint64, error) {
	flags := a[3]
	if a[2]&^uint64(unix.R_OK|unix.W_OK|unix.X_OK) != 0 ||
		flags&^uint64(unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL
	}
	cred := t.Proc.RealCred()
	if flags&unix.AT_EACCESS != 0 {
		cred = t.Proc.Cred()
	}
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	var n *fs.Node
	if name == "" && flags&unix.AT_EMPTY_PATH != 0 {
		n, err = nodeOf(t, a[0])
	} else {
		var p string
		if p, err = resolve(t, int32(a[0]), name); err == nil {
			n, err = t.Proc.Root.Lookup(cred, p, flags&unix.AT_SYMLINK_NOFOLLOW == 0)
		}
	}
	if err != nil {
		return 0, err
	}
	return 0, fs.Access(n, cred, int(a[2]))
}

// ioctl requests (asm-generic/ioctls.h).
const (
	fionread = 0x541b
	fionbio  = 0x5421
	fionclex = 0x5450
	fioclex  = 0x5451
	fioasync = 0x5452
)

// sysIoctl implements ioctl(2): the generic file requests, the terminal
// requests on the console (sys_tty.go), FIONREAD on pipes, the console and
// sockets (nginx asks it after a read that filled its buffer,
// and closes the connection when it fails); no file has terminal controls
// elsewhere (ENOTTY, as for a pipe).
func sysIoctl(t *kernel.Task, a Args) (uint64, error) {
	fd := int(int32(a[0]))
	d, err := t.Proc.Files.Get(fd)
	if err != nil {
		return 0, err
	}
	switch a[1] {
	case fionbio:
		b := make([]byte, 4)
		if err := copyIn(t, a[2], b); err != nil {
			return 0, err
		}
		d.SetNonblock(binary.LittleEndian.Uint32(b) != 0)
		return 0, nil
	case fionread:
		p, ok := d.File.(pender)
		if !ok {
			return 0, unix.ENOTTY
		}
		n, err := p.Pending()
		if err != nil {
			return 0, err
		}
		b := make([]byte, 4)
		binary.LittleEndian.PutUint32(b, uint32(int32(n)))
		return 0, copyOut(t, a[2], b)
	case fioclex, fionclex:
		return 0, t.Proc.Files.SetCloExec(fd, a[1] == fioclex)
	case fioasync:
		return 0, nil // no SIGIO is sent yet
	}
	if _, _, err := sockFile(t, a[0]); err == nil {
		if handled, err := ifreqIoctl(t, a[1], a[2]); handled {
			return 0, err
		}
	}
	if tty, ok := fs.Base(d.File).(*fs.TTY); ok {
		if ret, handled, err := ttyIoctl(t, tty, a[1], a[2]); handled {
			return ret, err
		}
	}
	return 0, unix.ENOTTY
}

// pender is a file that knows how many bytes a read would return.
type pender interface {
	Pending() (int, error)
}

// sysFcntl implements fcntl(2) for descriptors, status flags and pipe sizes.
func sysFcntl(t *kernel.Task, a Args) (uint64, error) {
	fd := int(int32(a[0]))
	d, err := t.Proc.Files.Get(fd)
	if err != nil {
		return 0, err
	}
	switch a[1] {
	case unix.F_GETFD:
		if on, _ := t.Proc.Files.CloExec(fd); on {
			return unix.FD_CLOEXEC, nil
		}
		return 0, nil
	case unix.F_SETFD:
		return 0, t.Proc.Files.SetCloExec(fd, a[2]&unix.FD_CLOEXEC != 0)
	case unix.F_SETOWN, unix.F_GETOWN:
		return 0, nil // no SIGIO is sent yet
	case unix.F_DUPFD, unix.F_DUPFD_CLOEXEC:
		min := int(int32(a[2]))
		if min < 0 || min >= t.Proc.Files.Limit() {
			return 0, unix.EINVAL
		}
		nfd, err := t.Proc.Files.Install(d, a[1] == unix.F_DUPFD_CLOEXEC, min)
		return uint64(nfd), err
	case unix.F_GETFL:
		return uint64(d.Flags()), nil
	case unix.F_SETFL:
		d.SetFlags(uint32(a[2]))
		return 0, nil
	case unix.F_GETLK, unix.F_SETLK, unix.F_SETLKW, unix.F_OFD_GETLK, unix.F_OFD_SETLK, unix.F_OFD_SETLKW:
		return 0, recordLock(t, d, a[1], a[2])
	case unix.F_GETPIPE_SZ, unix.F_SETPIPE_SZ:
		p, ok := d.File.(*fs.PipeEnd)
		if !ok {
			return 0, unix.EBADF
		}
		if a[1] == unix.F_GETPIPE_SZ {
			return uint64(p.Size()), nil
		}
		n, err := p.SetSize(int(int32(a[2])))
		return uint64(n), err
	}
	return 0, unix.EINVAL
}

// sysGetcwd implements getcwd(2).
func sysGetcwd(t *kernel.Task, a Args) (uint64, error) {
	cwd := append([]byte(t.Proc.Cwd), 0)
	if uint64(len(cwd)) > a[1] {
		return 0, unix.ERANGE
	}
	return uint64(len(cwd)), copyOut(t, a[0], cwd)
}

// sysChdir implements chdir(2).
func sysChdir(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, cwdFD, a[0])
	if err != nil {
		return 0, err
	}
	// The working directory is the physical path, as getcwd reports it.
	n, canon, err := t.Proc.Root.LookupPath(t.Proc.Cred(), p)
	if err != nil {
		return 0, err
	}
	if !n.IsDir() {
		return 0, unix.ENOTDIR
	}
	if err := fs.Access(n, t.Proc.Cred(), fs.MayExec); err != nil {
		return 0, err
	}
	t.Proc.Cwd = canon
	return 0, nil
}

// sysFchdir implements fchdir(2).
func sysFchdir(t *kernel.Task, a Args) (uint64, error) {
	f, err := nodeFile(t, a[0])
	if err != nil {
		if err == unix.EINVAL {
			return 0, unix.ENOTDIR
		}
		return 0, err
	}
	if !f.Node().IsDir() {
		return 0, unix.ENOTDIR
	}
	if err := fs.Access(f.Node(), t.Proc.Cred(), fs.MayExec); err != nil {
		return 0, err
	}
	t.Proc.Cwd = f.Path()
	return 0, nil
}

// statTarget finds what a *at call with AT_EMPTY_PATH and
// AT_SYMLINK_NOFOLLOW names: the file open on dirfd for an empty path,
// otherwise the path resolved against dirfd.
func statTarget(t *kernel.Task, dirfd, pathAddr, flags uint64) (fs.Stat, *fs.Node, error) {
	name, err := copyInString(t, pathAddr)
	if err != nil {
		return fs.Stat{}, nil, err
	}
	if name == "" && flags&unix.AT_EMPTY_PATH != 0 {
		d, err := t.Proc.Files.Get(int(int32(dirfd)))
		if err != nil {
			return fs.Stat{}, nil, err
		}
		var n *fs.Node
		if nf, ok := d.File.(*fs.NodeFile); ok {
			n = nf.Node()
		}
		return d.File.Stat(), n, nil
	}
	p, err := resolve(t, int32(dirfd), name)
	if err != nil {
		return fs.Stat{}, nil, err
	}
	n, err := t.Proc.Root.Lookup(t.Proc.Cred(), p, flags&unix.AT_SYMLINK_NOFOLLOW == 0)
	if err != nil {
		return fs.Stat{}, nil, err
	}
	return fs.StatNode(n), n, nil
}

// sysStatx implements statx(2): every basic field, whatever the mask asks.
func sysStatx(t *kernel.Task, a Args) (uint64, error) {
	const syncType = 0x6000 // AT_STATX_SYNC_TYPE
	const known = unix.AT_EMPTY_PATH | unix.AT_SYMLINK_NOFOLLOW | unix.AT_NO_AUTOMOUNT | syncType
	if a[2]&^known != 0 || a[2]&syncType == syncType || uint32(a[3])&unix.STATX__RESERVED != 0 {
		return 0, unix.EINVAL
	}
	st, _, err := statTarget(t, a[0], a[1], a[2])
	if err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[4], statxOf(st))
}

// utimensat's special nanosecond values.
const (
	utimeNow  = (1 << 30) - 1
	utimeOmit = (1 << 30) - 2
)

// sysUtimensat implements utimensat(2) (and futimens, with a null path).
func sysUtimensat(t *kernel.Task, a Args) (uint64, error) {
	if a[3]&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL
	}
	var n *fs.Node
	var err error
	if a[1] == 0 {
		n, err = nodeOf(t, a[0])
	} else {
		_, n, err = statTarget(t, a[0], a[1], a[3])
	}
	if err != nil {
		return 0, err
	}
	if n == nil {
		return 0, unix.EPERM
	}
	now := time.Now()
	times := [2]time.Time{now, now}
	given, omitted := false, 0
	if a[2] != 0 {
		var ts [2]linuxTimespec
		if err := copyInStruct(t, a[2], &ts); err != nil {
			return 0, err
		}
		for i, v := range ts {
			switch {
			case v.Nsec == utimeOmit:
				times[i] = time.Time{}
				omitted++
			case v.Nsec == utimeNow:
			case v.Nsec < 0 || v.Nsec >= 1e9:
				return 0, unix.EINVAL
			default:
				times[i] = time.Unix(v.Sec, v.Nsec)
				given = true
			}
		}
	}
	if omitted == 2 {
		return 0, nil
	}
	if err := fs.MaySetTimes(n, t.Proc.Cred(), given); err != nil {
		return 0, err
	}
	if !times[0].IsZero() {
		n.ATime = times[0]
	}
	if !times[1].IsZero() {
		n.MTime = times[1]
	}
	n.CTime = now
	return 0, nil
}

// sysLinkat implements linkat(2).
func sysLinkat(t *kernel.Task, a Args) (uint64, error) {
	if a[4]&^(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL
	}
	oldp, err := pathArg(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	newp, err := pathArg(t, a[2], a[3])
	if err != nil {
		return 0, err
	}
	return 0, t.Proc.Root.Link(t.Proc.Cred(), oldp, newp, a[4]&unix.AT_SYMLINK_FOLLOW != 0)
}

// sysSymlinkat implements symlinkat(2).
func sysSymlinkat(t *kernel.Task, a Args) (uint64, error) {
	target, err := copyInString(t, a[0])
	if err != nil {
		return 0, err
	}
	if target == "" {
		return 0, unix.ENOENT
	}
	p, err := pathArg(t, a[1], a[2])
	if err != nil {
		return 0, err
	}
	return 0, t.Proc.Root.Create(t.Proc.Cred(), p, fs.NewSymlink(target))
}

// statfsOf describes the file system a file of st is on: the tree as a
// tmpfs (its size limit and what its files hold), procfs and sysfs as
// Linux reports them.
func statfsOf(st fs.Stat) linuxStatfs {
	const (
		tmpfsMagic = 0x01021994
		procMagic  = 0x9fa0
		sysfsMagic = 0x62656572
	)
	switch st.Dev {
	case fs.DevProc:
		return linuxStatfs{Type: procMagic, Bsize: 4096, Frsize: 4096, Namelen: 255}
	case fs.DevSysfs:
		return linuxStatfs{Type: sysfsMagic, Bsize: 4096, Frsize: 4096, Namelen: 255}
	}
	used, limit := fs.Usage()
	if size, mntUsed, ok := fs.TmpfsUsage(st.Dev); ok && size > 0 {
		limit, used = size, mntUsed // a mount with its own size=
	}
	blocks := uint64(limit) / 4096
	free := blocks - min(blocks, uint64(used)/4096)
	return linuxStatfs{Type: tmpfsMagic, Bsize: 4096, Frsize: 4096, Namelen: 255,
		Blocks: blocks, Bfree: free, Bavail: free}
}

// sysStatfs implements statfs(2).
func sysStatfs(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, cwdFD, a[0])
	if err != nil {
		return 0, err
	}
	n, err := t.Proc.Root.Lookup(t.Proc.Cred(), p, true)
	if err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[1], statfsOf(fs.StatNode(n)))
}

// sysFstatfs implements fstatfs(2).
func sysFstatfs(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[1], statfsOf(d.File.Stat()))
}

// linuxFlock is struct flock.
type linuxFlock struct {
	Type   int16
	Whence int16
	_      int32
	Start  int64
	Len    int64
	Pid    int32
	_      int32
}

// recordLock implements fcntl's F_GETLK, F_SETLK, F_SETLKW and their OFD
// forms: POSIX locks are the process's, OFD locks the description's.
func recordLock(t *kernel.Task, d *fs.Description, cmd, addr uint64) error {
	nf, ok := d.File.(*fs.NodeFile)
	if !ok {
		return unix.EINVAL
	}
	var fl linuxFlock
	if err := copyInStruct(t, addr, &fl); err != nil {
		return err
	}
	var owner fs.LockOwner = t.Proc
	pid := t.Proc.PID
	ofd := cmd == unix.F_OFD_GETLK || cmd == unix.F_OFD_SETLK || cmd == unix.F_OFD_SETLKW
	if ofd {
		if fl.Pid != 0 {
			return unix.EINVAL
		}
		owner, pid = nf, -1
	}
	var base int64
	switch fl.Whence {
	case unix.SEEK_SET:
	case unix.SEEK_CUR:
		base = nf.Offset()
	case unix.SEEK_END:
		base = nf.Stat().Size
	default:
		return unix.EINVAL
	}
	start, end := base+fl.Start, int64(0)
	switch {
	case fl.Len > 0:
		end = start + fl.Len
		if end < start {
			return unix.EOVERFLOW
		}
	case fl.Len < 0:
		start, end = start+fl.Len, start
	}
	if start < 0 {
		return unix.EINVAL
	}
	want := fs.Lock{Owner: owner, PID: pid, Write: fl.Type == unix.F_WRLCK, Start: start, End: end}
	switch fl.Type {
	case unix.F_RDLCK:
		if !d.Readable() && cmd != unix.F_GETLK && cmd != unix.F_OFD_GETLK {
			return unix.EBADF
		}
	case unix.F_WRLCK:
		if !d.Writable() && cmd != unix.F_GETLK && cmd != unix.F_OFD_GETLK {
			return unix.EBADF
		}
	case unix.F_UNLCK:
		if cmd == unix.F_GETLK || cmd == unix.F_OFD_GETLK {
			return unix.EINVAL
		}
	default:
		return unix.EINVAL
	}
	node := nf.Node()
	switch cmd {
	case unix.F_GETLK, unix.F_OFD_GETLK:
		l, busy := fs.TestLock(node, want)
		if !busy {
			fl.Type = unix.F_UNLCK
		} else {
			fl.Type, fl.Whence, fl.Start, fl.Pid = unix.F_RDLCK, unix.SEEK_SET, l.Start, int32(l.PID)
			if l.Write {
				fl.Type = unix.F_WRLCK
			}
			fl.Len = 0
			if l.End != 0 {
				fl.Len = l.End - l.Start
			}
		}
		return copyOutStruct(t, addr, fl)
	}
	wait := cmd == unix.F_SETLKW || cmd == unix.F_OFD_SETLKW
	return lockWaiting(t, node, wait, func() error { return fs.SetLock(node, want, fl.Type == unix.F_UNLCK) })
}

// lockWaiting runs try, and while it finds the lock taken and the caller
// waits, tries again at each change of node's locks.
func lockWaiting(t *kernel.Task, node *fs.Node, wait bool, try func() error) error {
	err := try()
	if err != unix.EAGAIN || !wait {
		return err
	}
	changed := make(chan struct{}, 1)
	cancel := fs.WatchLocks(node, func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancel()
	for {
		if err = try(); err != unix.EAGAIN {
			return err
		}
		if err := t.Block(changed, time.Time{}); err != nil {
			return err
		}
	}
}

// sysFlock implements flock(2): EWOULDBLOCK with LOCK_NB while another
// description holds a conflicting lock.
func sysFlock(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	nf, ok := d.File.(*fs.NodeFile)
	if !ok {
		return 0, unix.EINVAL
	}
	op := a[1] &^ unix.LOCK_NB
	if op != unix.LOCK_SH && op != unix.LOCK_EX && op != unix.LOCK_UN {
		return 0, unix.EINVAL
	}
	node := nf.Node()
	return 0, lockWaiting(t, node, a[1]&unix.LOCK_NB == 0, func() error {
		return fs.Flock(node, nf, op == unix.LOCK_EX, op == unix.LOCK_UN)
	})
}
