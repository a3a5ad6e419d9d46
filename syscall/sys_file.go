package syscall

import (
	"encoding/binary"
	iofs "io/fs"
	"path"
	"strings"

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
	register(sysno.Openat, sysOpenat)
	register(sysno.Close, sysClose)
	register(sysno.Lseek, sysLseek)
	register(sysno.Fstat, sysFstat)
	register(sysno.Newfstatat, sysNewfstatat)
	register(sysno.Readlinkat, sysReadlinkat)
	register(sysno.Faccessat, sysFaccessat)
	register(sysno.Ioctl, sysIoctl)
	register(sysno.Fcntl, sysFcntl)
	register(sysno.Getcwd, sysGetcwd)
	register(sysno.Mkdirat, sysMkdirat)
	register(sysno.Unlinkat, sysUnlinkat)
	register(sysno.Renameat2, sysRenameat2)
	register(sysno.Fchownat, sysFchownat)
	register(sysno.Fchown, sysFchown)
	register(sysno.Fchmodat, sysFchmodat)
	register(sysno.Fchmod, sysFchmod)
	register(sysno.Umask, sysUmask)
	register(sysno.Ftruncate, sysFtruncate)
	register(sysno.Fsync, sysFsync)
	register(sysno.Fdatasync, sysFsync)
	register(sysno.Pwrite64, sysPwrite64)
	register(sysno.Getdents64, sysGetdents64)
	register(sysno.Sendfile, sysSendfile)
}

// Linux's bounds: MAX_RW_COUNT for one read or write, UIO_MAXIOV iovecs.
const (
	maxIO     = 0x7ffff000
	maxIovecs = 1024
)

// sysRead implements read(2).
func sysRead(t *kernel.Task, a Args) (uint64, error) {
	f, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	buf := make([]byte, min(a[2], maxIO))
	n, err := f.Read(buf)
	if err != nil {
		return 0, err
	}
	return uint64(n), copyOut(t, a[1], buf[:n])
}

// sysWrite implements write(2).
func sysWrite(t *kernel.Task, a Args) (uint64, error) {
	f, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	buf := make([]byte, min(a[2], maxIO))
	if err := copyIn(t, a[1], buf); err != nil {
		return 0, err
	}
	n, err := f.Write(buf)
	return uint64(n), err
}

// iovecs reads an iovec array.
func iovecs(t *kernel.Task, addr, count uint64) ([][2]uint64, error) {
	if count > maxIovecs {
		return nil, unix.EINVAL
	}
	raw := make([]byte, 16*count)
	if err := copyIn(t, addr, raw); err != nil {
		return nil, err
	}
	v := make([][2]uint64, count)
	for i := range v {
		v[i] = [2]uint64{binary.LittleEndian.Uint64(raw[16*i:]), binary.LittleEndian.Uint64(raw[16*i+8:])}
	}
	return v, nil
}

// sysWritev implements writev(2): one write of the gathered buffers.
func sysWritev(t *kernel.Task, a Args) (uint64, error) {
	f, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	vs, err := iovecs(t, a[1], a[2])
	if err != nil {
		return 0, err
	}
	var buf []byte
	for _, v := range vs {
		if uint64(len(buf))+v[1] > maxIO {
			return 0, unix.EINVAL
		}
		chunk := make([]byte, v[1])
		if err := copyIn(t, v[0], chunk); err != nil {
			return 0, err
		}
		buf = append(buf, chunk...)
	}
	n, err := f.Write(buf)
	return uint64(n), err
}

// sysReadv implements readv(2): one read, scattered over the buffers.
func sysReadv(t *kernel.Task, a Args) (uint64, error) {
	f, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	vs, err := iovecs(t, a[1], a[2])
	if err != nil {
		return 0, err
	}
	total := uint64(0)
	for _, v := range vs {
		total += v[1]
	}
	buf := make([]byte, min(total, maxIO))
	n, err := f.Read(buf)
	if err != nil {
		return 0, err
	}
	rest := buf[:n]
	for _, v := range vs {
		k := min(uint64(len(rest)), v[1])
		if err := copyOut(t, v[0], rest[:k]); err != nil {
			return 0, err
		}
		rest = rest[k:]
	}
	return uint64(n), nil
}

// sysPread64 implements pread64(2).
func sysPread64(t *kernel.Task, a Args) (uint64, error) {
	f, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	nf, ok := f.(*fs.NodeFile)
	if !ok {
		return 0, unix.ESPIPE
	}
	buf := make([]byte, min(a[2], maxIO))
	n, err := nf.ReadAt(buf, int64(a[3]))
	if err != nil {
		return 0, err
	}
	return uint64(n), copyOut(t, a[1], buf[:n])
}

// resolve makes a path absolute against dirfd, which must be AT_FDCWD for
// now: open directories as bases come with the VFS.
func resolve(t *kernel.Task, dirfd int32, p string) (string, error) {
	if p == "" {
		return "", unix.ENOENT
	}
	if strings.HasPrefix(p, "/") {
		return path.Clean(p), nil
	}
	if dirfd != unix.AT_FDCWD {
		return "", unix.ENOSYS
	}
	return path.Join(t.Proc.Cwd, p), nil
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
	n, err := t.Proc.Root.Open(p, fs.OpenFlags{
		Create: flags&unix.O_CREAT != 0, Excl: flags&unix.O_EXCL != 0,
		Trunc: flags&unix.O_TRUNC != 0 && acc != unix.O_RDONLY, Follow: flags&unix.O_NOFOLLOW == 0,
		Perm: iofs.FileMode(a[3]) &^ iofs.FileMode(t.Proc.Umask),
	})
	if err != nil {
		return 0, err
	}
	if flags&unix.O_DIRECTORY != 0 && !n.IsDir() {
		return 0, unix.ENOTDIR
	}
	if n.IsDir() && acc != unix.O_RDONLY {
		return 0, unix.EISDIR
	}
	f := fs.OpenNodeMode(n, acc != unix.O_WRONLY, acc != unix.O_RDONLY, flags&unix.O_APPEND != 0)
	fd, err := t.Proc.Files.Install(f, flags&unix.O_CLOEXEC != 0, 0)
	return uint64(fd), err
}

// sysMkdirat implements mkdirat(2).
func sysMkdirat(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	return 0, t.Proc.Root.Mkdir(p, iofs.FileMode(a[2])&0o7777&^iofs.FileMode(t.Proc.Umask))
}

// sysUnlinkat implements unlinkat(2).
func sysUnlinkat(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	return 0, t.Proc.Root.Remove(p, a[2]&unix.AT_REMOVEDIR != 0)
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
	return 0, t.Proc.Root.Rename(from, to)
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
			n, err = t.Proc.Root.Lookup(p, a[4]&unix.AT_SYMLINK_NOFOLLOW == 0)
		}
	}
	if err != nil {
		return 0, err
	}
	chown(n, a[2], a[3])
	return 0, nil
}

// sysFchown implements fchown(2).
func sysFchown(t *kernel.Task, a Args) (uint64, error) {
	n, err := nodeOf(t, a[0])
	if err != nil {
		return 0, err
	}
	chown(n, a[1], a[2])
	return 0, nil
}

// chown sets owners; -1 leaves one as it is.
func chown(n *fs.Node, uid, gid uint64) {
	if uint32(uid) != ^uint32(0) {
		n.UID = uint32(uid)
	}
	if uint32(gid) != ^uint32(0) {
		n.GID = uint32(gid)
	}
}

// sysFchmodat implements fchmodat(2).
func sysFchmodat(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	n, err := t.Proc.Root.Lookup(p, true)
	if err != nil {
		return 0, err
	}
	n.Mode = n.Mode&^iofs.ModePerm | iofs.FileMode(a[2])&iofs.ModePerm
	return 0, nil
}

// sysFchmod implements fchmod(2).
func sysFchmod(t *kernel.Task, a Args) (uint64, error) {
	n, err := nodeOf(t, a[0])
	if err != nil {
		return 0, err
	}
	n.Mode = n.Mode&^iofs.ModePerm | iofs.FileMode(a[1])&iofs.ModePerm
	return 0, nil
}

// sysUmask implements umask(2).
func sysUmask(t *kernel.Task, a Args) (uint64, error) {
	old := t.Proc.Umask
	t.Proc.Umask = uint32(a[0]) & 0o777
	return uint64(old), nil
}

// sysFtruncate implements ftruncate(2).
func sysFtruncate(t *kernel.Task, a Args) (uint64, error) {
	f, err := nodeFile(t, a[0])
	if err != nil {
		return 0, err
	}
	return 0, f.Truncate(int64(a[1]))
}

// sysFsync implements fsync(2) and fdatasync(2): memory is the medium.
func sysFsync(t *kernel.Task, a Args) (uint64, error) {
	_, err := t.Proc.Files.Get(int(int32(a[0])))
	return 0, err
}

// sysPwrite64 implements pwrite64(2).
func sysPwrite64(t *kernel.Task, a Args) (uint64, error) {
	f, err := nodeFile(t, a[0])
	if err != nil {
		return 0, err
	}
	buf := make([]byte, min(a[2], maxIO))
	if err := copyIn(t, a[1], buf); err != nil {
		return 0, err
	}
	n, err := f.WriteAt(buf, int64(a[3]))
	return uint64(n), err
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

// sysSendfile implements sendfile(2) from a tree file to any file: the
// data is copied in chunks, and the offset (or the file position) advances
// by what was sent.
func sysSendfile(t *kernel.Task, a Args) (uint64, error) {
	out, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	in, err := nodeFile(t, a[1])
	if err != nil {
		return 0, err
	}
	off := in.Offset()
	if a[2] != 0 {
		b := make([]byte, 8)
		if err := copyIn(t, a[2], b); err != nil {
			return 0, err
		}
		off = int64(binary.LittleEndian.Uint64(b))
	}
	const chunk = 64 << 10
	buf := make([]byte, min(a[3], chunk))
	sent := int64(0)
	for uint64(sent) < a[3] {
		n, err := in.ReadAt(buf[:min(uint64(len(buf)), a[3]-uint64(sent))], off+sent)
		if n == 0 || err != nil {
			if sent == 0 && err != nil {
				return 0, err
			}
			break
		}
		w, err := out.Write(buf[:n])
		sent += int64(w)
		if err != nil {
			if sent == 0 {
				return 0, err
			}
			break
		}
		if w < n {
			break
		}
	}
	if a[2] != 0 {
		return uint64(sent), copyOut(t, a[2], words(uint64(off+sent)))
	}
	in.SetOffset(off + sent)
	return uint64(sent), nil
}

func direntType(n *fs.Node) byte {
	switch {
	case n.IsDir():
		return unix.DT_DIR
	case n.Mode&iofs.ModeSymlink != 0:
		return unix.DT_LNK
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
	f, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, err
	}
	nf, ok := f.(*fs.NodeFile)
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

// sysClose implements close(2).
func sysClose(t *kernel.Task, a Args) (uint64, error) {
	return 0, t.Proc.Files.Close(int(int32(a[0])))
}

// sysLseek implements lseek(2).
func sysLseek(t *kernel.Task, a Args) (uint64, error) {
	f, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	s, ok := f.(fs.Seeker)
	if !ok {
		return 0, unix.ESPIPE
	}
	off, err := s.Seek(int64(a[1]), int(a[2]))
	return uint64(off), err
}

// statBytes encodes struct stat as asm-generic (riscv64) lays it out.
func statBytes(st fs.Stat) []byte {
	b := make([]byte, 128)
	le := binary.LittleEndian
	le.PutUint64(b[0:], st.Dev)
	le.PutUint64(b[8:], st.Ino)
	le.PutUint32(b[16:], st.Mode)
	le.PutUint32(b[20:], st.Nlink)
	le.PutUint32(b[24:], st.UID)
	le.PutUint32(b[28:], st.GID)
	le.PutUint64(b[32:], st.Rdev)
	le.PutUint64(b[48:], uint64(st.Size))
	le.PutUint32(b[56:], uint32(st.Blksize))
	le.PutUint64(b[64:], uint64(st.Blocks))
	for _, off := range []int{72, 88, 104} { // atime, mtime, ctime
		le.PutUint64(b[off:], uint64(st.MTime))
	}
	return b
}

// sysFstat implements fstat(2).
func sysFstat(t *kernel.Task, a Args) (uint64, error) {
	f, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	return 0, copyOut(t, a[1], statBytes(f.Stat()))
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
	n, err := t.Proc.Root.Lookup(p, flags&unix.AT_SYMLINK_NOFOLLOW == 0)
	if err != nil {
		return 0, err
	}
	return 0, copyOut(t, a[2], statBytes(fs.StatNode(n)))
}

// sysReadlinkat implements readlinkat(2); /proc/self/exe names the program.
func sysReadlinkat(t *kernel.Task, a Args) (uint64, error) {
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	var target string
	if name == "/proc/self/exe" {
		target = t.Proc.Exe
	} else {
		p, err := resolve(t, int32(a[0]), name)
		if err != nil {
			return 0, err
		}
		n, err := t.Proc.Root.Lookup(p, false)
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

// sysFaccessat implements faccessat(2) for root: everything is readable
// and writable, and files with an execute bit are executable.
func sysFaccessat(t *kernel.Task, a Args) (uint64, error) {
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	p, err := resolve(t, int32(a[0]), name)
	if err != nil {
		return 0, err
	}
	n, err := t.Proc.Root.Lookup(p, true)
	if err != nil {
		return 0, err
	}
	if a[2]&unix.X_OK != 0 && n.Mode.Perm()&0o111 == 0 {
		return 0, unix.EACCES
	}
	return 0, nil
}

// ioctl requests (asm-generic/ioctls.h).
const (
	fionread = 0x541b
	fionbio  = 0x5421
	fionclex = 0x5450
	fioclex  = 0x5451
	fioasync = 0x5452
)

// sysIoctl implements ioctl(2): FIONBIO on files that have O_NONBLOCK,
// FIONREAD on TCP sockets (nginx asks it after a read that filled its
// buffer, and closes the connection when it fails); no file has terminal
// controls (ENOTTY, as for a pipe).
func sysIoctl(t *kernel.Task, a Args) (uint64, error) {
	f, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	switch a[1] {
	case fionbio:
		nb, ok := f.(nonblocker)
		if !ok {
			return 0, unix.ENOTTY
		}
		b := make([]byte, 4)
		if err := copyIn(t, a[2], b); err != nil {
			return 0, err
		}
		nb.SetNonblock(binary.LittleEndian.Uint32(b) != 0)
		return 0, nil
	case fionread:
		p, ok := f.(pender)
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
		return 0, t.Proc.Files.SetCloExec(int(int32(a[0])), a[1] == fioclex)
	case fioasync:
		return 0, nil // no SIGIO is sent yet
	}
	return 0, unix.ENOTTY
}

// pender is a file that knows how many bytes a read would return.
type pender interface {
	Pending() (int, error)
}

// nonblocker is a file with O_NONBLOCK (sockets).
type nonblocker interface {
	Nonblock() bool
	SetNonblock(bool)
}

// sysFcntl implements fcntl(2) for the descriptor and status flags.
func sysFcntl(t *kernel.Task, a Args) (uint64, error) {
	f, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	nb, canBlock := f.(nonblocker)
	fd := int(int32(a[0]))
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
		nfd, err := t.Proc.Files.Install(f, a[1] == unix.F_DUPFD_CLOEXEC, int(a[2]))
		return uint64(nfd), err
	case unix.F_GETFL:
		flags := uint64(unix.O_RDWR)
		if canBlock && nb.Nonblock() {
			flags |= unix.O_NONBLOCK
		}
		return flags, nil
	case unix.F_SETFL:
		if canBlock {
			nb.SetNonblock(a[2]&unix.O_NONBLOCK != 0)
		}
		return 0, nil
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
