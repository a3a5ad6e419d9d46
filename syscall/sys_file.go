package syscall

import (
	iofs "io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.Openat, sysOpenat)
	register(sysno.Openat2, sysOpenat2)
	register(sysno.Mknodat, sysMknodat)
	register(sysno.Mkdirat, sysMkdirat)
	register(sysno.Unlinkat, sysUnlinkat)
	register(sysno.Renameat2, sysRenameat2)
	register(sysno.Linkat, sysLinkat)
	register(sysno.Symlinkat, sysSymlinkat)
	register(sysno.Readlinkat, sysReadlinkat)
	register(sysno.Umask, sysUmask)
	register(sysno.Fsync, sysFsync)
	register(sysno.Fdatasync, sysFsync)
	register(sysno.SyncFileRange, sysSyncFileRange)
	register(sysno.Readahead, sysReadahead)
	register(sysno.CloseRange, sysCloseRange)
	register(sysno.Getdents64, sysGetdents64)
	register(sysno.Getcwd, sysGetcwd)
	register(sysno.Chdir, sysChdir)
	register(sysno.Chroot, sysChroot)
	register(sysno.Fchdir, sysFchdir)
}

// cwdFD is AT_FDCWD as a raw argument.
const cwdFD = uint64(unix.AT_FDCWD & 0xffffffff)

// resolve makes a path absolute against dirfd: the working directory for
// AT_FDCWD, otherwise the directory open on dirfd.
func resolve(t *kernel.Task, dirfd int32, p string) (string, error) {
	if p == "" {
		return "", unix.ENOENT
	}
	dir := "/"
	if !strings.HasPrefix(p, "/") {
		var err error
		if dir, err = startDir(t, dirfd); err != nil {
			return "", err
		}
	}
	p, err := t.Proc.Resolve().Join(dir, p) // under the root directory
	return selfResolved(t, p), err
}

// startDir is the directory a relative path starts from: the working
// directory for AT_FDCWD, otherwise the directory open on dirfd.
func startDir(t *kernel.Task, dirfd int32) (string, error) {
	if dirfd == unix.AT_FDCWD {
		return t.Proc.Cwd(), nil
	}
	d, err := t.Proc.Files.Get(int(dirfd))
	if err != nil {
		return "", err
	}
	defer d.DecRef()
	nf, ok := d.NodeFile()
	if !ok || !nf.Node().IsDir() {
		return "", unix.ENOTDIR
	}
	return nf.Path(), nil
}

// selfResolved is the absolute path p with the links into /proc/self
// resolved for t.
func selfResolved(t *kernel.Task, p string) string {
	// /dev/fd is a link to /proc/self/fd on every Debian system, and
	// /proc/self (of every procfs mount) is the caller's /proc/PID.
	if strings.HasPrefix(p, "/dev/") { // where every one of selfLinks is
		for _, l := range selfLinks {
			if rest, ok := strings.CutPrefix(p, l.from); ok && (rest == "" || rest[0] == '/') {
				p = l.to + rest
				break
			}
		}
	}
	for _, proc := range t.Proc.Root.ProcTargets(t.Proc.MountNS()) {
		// proc and "/self" matched in turn: no string is made to match.
		if !strings.HasPrefix(p, proc) {
			continue
		}
		if rest, ok := strings.CutPrefix(p[len(proc):], "/self"); ok && (rest == "" || rest[0] == '/') {
			p = proc + "/" + strconv.Itoa(t.Proc.PID) + rest
			break
		}
	}
	return p
}

// selfLinks are the links into /proc/self that udev makes in /dev; the
// tree's walk cannot follow a link through /proc/self, so they are
// resolved here.
var selfLinks = []struct{ from, to string }{
	{"/dev/fd", "/proc/self/fd"}, {"/dev/stdin", "/proc/self/fd/0"},
	{"/dev/stdout", "/proc/self/fd/1"}, {"/dev/stderr", "/proc/self/fd/2"},
}

// visible is the tree path p as t names it from its root directory
// (chroot): where /proc/PID/fd/N is recognised.
func visible(t *kernel.Task, p string) string {
	v, _ := t.Proc.Visible(p)
	return v
}

// pipeOfFD returns the pipe end that /proc/PID/fd/N of k names, if it
// names one, and its description with the reference the caller drops:
// opening it opens that pipe anew, as Linux's magic link does.
func pipeOfFD(k *kernel.Kernel, p string) (reopener, *fs.Description, bool) {
	d, ok := descriptionOfFDLink(k, p)
	if !ok {
		return nil, nil, false
	}
	r, ok := d.File.(reopener)
	if !ok {
		d.DecRef()
		return nil, nil, false
	}
	return r, d, true
}

// descriptionOfFDLink returns the description open on the descriptor
// that /proc/PID/fd/N of k names, if it names one, with a reference the
// caller drops.
func descriptionOfFDLink(k *kernel.Kernel, p string) (*fs.Description, bool) {
	pid, fd, ok := procFD(p)
	if !ok {
		return nil, false
	}
	proc := k.ProcessByID(pid)
	if proc == nil {
		return nil, false
	}
	d, err := proc.Files.Get(fd)
	return d, err == nil
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

// fileOfFDLink returns the tree file open on the descriptor that
// /proc/PID/fd/N of k names, if it names one: following that magic link
// reaches the file itself, whatever its name, or without one.
func fileOfFDLink(k *kernel.Kernel, p string) (*fs.NodeFile, bool) {
	d, ok := descriptionOfFDLink(k, p)
	if !ok {
		return nil, false
	}
	defer d.DecRef()
	return d.NodeFile()
}

// unlinkedOfFD returns the file without a name in the tree that
// /proc/PID/fd/N of k names, if it names one, and the path it shows.
func unlinkedOfFD(k *kernel.Kernel, p string) (*fs.Node, string, bool) {
	nf, ok := fileOfFDLink(k, p)
	if !ok || nf.Node().Links != 0 || !nf.Node().Mode.IsRegular() {
		return nil, "", false
	}
	return nf.Node(), nf.Path(), true
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
	return openPath(t, name, p, a[2], a[3], t.Proc.Cred())
}

// openat2's resolve flags (linux/openat2.h).
const (
	resolveNoXDev       = 0x01
	resolveNoMagicLinks = 0x02
	resolveNoSymlinks   = 0x04
	resolveBeneath      = 0x08
	resolveInRoot       = 0x10
	resolveCached       = 0x20
	resolveFlags        = 0x3f
)

// openFlags are Linux's VALID_OPEN_FLAGS: openat2 refuses any other bit.
const openFlags = unix.O_ACCMODE | unix.O_CREAT | unix.O_EXCL | unix.O_NOCTTY | unix.O_TRUNC |
	unix.O_APPEND | unix.O_NONBLOCK | unix.O_SYNC | unix.O_DSYNC | unix.O_ASYNC | unix.O_DIRECT |
	unix.O_LARGEFILE | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_NOATIME | unix.O_CLOEXEC |
	unix.O_PATH | unix.O_TMPFILE

// sysOpenat2 implements openat2(2): openat with every argument checked
// (Linux's build_open_flags) and the lookup confined by the resolve
// flags. The tree is all in memory, so RESOLVE_CACHED never has to give
// up with EAGAIN where Linux's dcache would serve it, only for a create
// or a truncate, as Linux refuses those at once.
func sysOpenat2(t *kernel.Task, a Args) (uint64, error) {
	var how linux.OpenHow
	size, known := a[3], uint64(unsafe.Sizeof(how))
	switch {
	case size < known:
		return 0, unix.EINVAL
	case size > mm.PageSize:
		return 0, unix.E2BIG
	case size > known:
		tail := make([]byte, size-known)
		if err := copyIn(t, a[2]+known, tail); err != nil {
			return 0, err
		}
		if slices.ContainsFunc(tail, func(b byte) bool { return b != 0 }) {
			return 0, unix.E2BIG
		}
	}
	if err := copyInStruct(t, a[2], &how); err != nil {
		return 0, err
	}
	flags := how.Flags &^ unix.O_CLOEXEC
	creates := flags&(unix.O_CREAT|unix.O_TMPFILE&^unix.O_DIRECTORY) != 0
	switch {
	case flags&^openFlags != 0, how.Resolve&^resolveFlags != 0,
		how.Resolve&resolveBeneath != 0 && how.Resolve&resolveInRoot != 0,
		creates && how.Mode&^0o7777 != 0, !creates && how.Mode != 0,
		flags&(unix.O_DIRECTORY|unix.O_CREAT) == unix.O_DIRECTORY|unix.O_CREAT,
		flags&(unix.O_TMPFILE&^unix.O_DIRECTORY) != 0 && (flags&unix.O_DIRECTORY == 0 || flags&unix.O_ACCMODE == unix.O_RDONLY),
		flags&unix.O_PATH != 0 && flags&^(unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW) != 0:
		return 0, unix.EINVAL
	case how.Resolve&resolveCached != 0 && (flags&unix.O_TRUNC != 0 || creates):
		return 0, unix.EAGAIN
	}
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	c := t.Proc.Cred()
	var p string
	if how.Resolve&^resolveCached == 0 {
		p, err = resolve(t, int32(a[0]), name)
	} else {
		c.Resolve, p, err = openat2Resolve(t, int32(a[0]), name, how.Resolve)
	}
	if err != nil {
		return 0, err
	}
	return openPath(t, name, p, how.Flags, how.Mode, c)
}

// openat2Resolve makes the Resolve of openat2's resolve flags for name
// from dirfd, and the path to open: the lookup starts at the root, or
// with RESOLVE_IN_ROOT at dirfd for an absolute name too; the scoping
// flags make dirfd's directory the root.
func openat2Resolve(t *kernel.Task, dirfd int32, name string, resolve uint64) (*fs.Resolve, string, error) {
	if name == "" {
		return nil, "", unix.ENOENT
	}
	root := t.Proc.RootDir()
	r := &fs.Resolve{
		Root:         root,
		Beneath:      resolve&resolveBeneath != 0,
		NoSymlinks:   resolve&resolveNoSymlinks != 0,
		NoMagicLinks: resolve&resolveNoMagicLinks != 0,
		NoXDev:       resolve&resolveNoXDev != 0,
		Start:        root,
	}
	if strings.HasPrefix(name, "/") && resolve&resolveInRoot == 0 {
		p, err := r.Join(root, name)
		return r, selfResolved(t, p), err
	}
	dir, err := startDir(t, dirfd)
	if err != nil {
		return nil, "", err
	}
	r.Start = dir
	if resolve&(resolveBeneath|resolveInRoot) != 0 {
		r.Root, r.Scoped = dir, true
	}
	p, err := r.Join(dir, name)
	return r, selfResolved(t, p), err
}

// reopenPipe opens anew the pipe end pe that /proc/PID/fd/N names, whose
// description d it holds a reference to.
func reopenPipe(t *kernel.Task, pe reopener, d *fs.Description, dirOnly bool, acc, flags uint64) (uint64, error) {
	defer d.DecRef()
	if dirOnly {
		return 0, unix.ENOTDIR
	}
	f := pe.Reopen(acc != unix.O_WRONLY, acc != unix.O_RDONLY)
	fd, err := t.Proc.Files.Open(f, uint32(flags&^unix.O_CREAT), flags&unix.O_CLOEXEC != 0)
	return uint64(fd), err // a failed Open closed f
}

// openPath opens the absolute path p (name, as the caller gave it) with
// openat's flags and mode, for c (whose Resolve confines an openat2).
func openPath(t *kernel.Task, name, p string, flags, mode uint64, c *fs.Cred) (uint64, error) {
	oPath := flags&unix.O_PATH != 0
	if oPath {
		// Linux keeps only these of an O_PATH open's flags: it opens a
		// location, which is neither read, written, created nor truncated.
		flags &= unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	}
	acc := flags & unix.O_ACCMODE
	if acc == unix.O_ACCMODE {
		return 0, unix.EINVAL
	}
	if flags&(unix.O_TMPFILE&^unix.O_DIRECTORY) != 0 {
		return openTmpfile(t, p, flags, mode, c)
	}
	dirOnly := namesDirectory(name)
	if dirOnly && flags&unix.O_CREAT != 0 {
		// Linux finds the directory to create in, then refuses the slash.
		if _, err := lookupNamed(t, c, path.Dir(p), true, true); err != nil {
			return 0, err
		}
		return 0, unix.EISDIR
	}
	if dirOnly {
		// ENOTDIR before Open truncates a file named "file/".
		if _, err := lookupNamed(t, c, p, true, true); err != nil {
			return 0, err
		}
	}
	magicOK := c.Resolve.FollowsMagicLinks() // else the walk refuses the link
	seen := visible(t, p)
	if pe, d, ok := pipeOfFD(t.Kernel(), seen); ok {
		if magicOK {
			return reopenPipe(t, pe, d, dirOnly, acc, flags)
		}
		d.DecRef()
	}
	var want int
	switch acc {
	case unix.O_RDONLY:
		want = fs.MayRead
	case unix.O_WRONLY:
		want = fs.MayWrite
	case unix.O_RDWR:
		want = fs.MayRead | fs.MayWrite
	}
	if flags&unix.O_TRUNC != 0 {
		want |= fs.MayWrite
	}
	if oPath {
		want = 0
	}
	var n *fs.Node
	var created, reopened bool
	var err error
	if un, at, ok := unlinkedOfFD(t.Kernel(), seen); ok && flags&unix.O_NOFOLLOW == 0 && magicOK {
		// A file without a name (a memfd, an unlinked file) opened anew
		// through /proc/PID/fd/N, which names no path in the tree.
		n, p, reopened, err = un, at, true, fs.Access(un, c, want)
		if err == nil {
			err = fs.MayOpen(n, fs.OpenFlags{Want: want, Append: flags&unix.O_APPEND != 0, Trunc: flags&unix.O_TRUNC != 0})
		}
	} else {
		n, created, err = t.Proc.Root.Open(c, p, fs.OpenFlags{
			Create: flags&unix.O_CREAT != 0, Excl: flags&unix.O_EXCL != 0,
			Trunc: flags&unix.O_TRUNC != 0, Append: flags&unix.O_APPEND != 0, Follow: flags&unix.O_NOFOLLOW == 0 || dirOnly,
			Perm: fs.ModeFromUnix(uint32(mode) & 0o7777 &^ t.Proc.Umask()), Want: want, NoAtime: flags&unix.O_NOATIME != 0,
		})
	}
	if err != nil {
		return 0, err
	}
	if !created {
		flags &^= unix.O_CREAT // the description's F_CREATED_QUERY
	}
	if (flags&unix.O_DIRECTORY != 0 || dirOnly) && !n.IsDir() {
		return 0, unix.ENOTDIR
	}
	if n.Mode&iofs.ModeSymlink != 0 && !oPath {
		return 0, unix.ELOOP // O_NOFOLLOW met a symbolic link
	}
	var f fs.File = t.Proc.Root.OpenNodeFor(n, p, t)
	if reopened && flags&unix.O_TRUNC != 0 {
		nf := f.(*fs.NodeFile)
		if err := nf.Truncate(0); err != nil { // a memfd's seals may refuse it
			nf.Close()
			return 0, err
		}
	}
	switch {
	case oPath: // a device or FIFO is not opened for a location
	case n.IsDevice():
		if f, err = t.Proc.Root.OpenDevice(n, p); err != nil {
			return 0, err
		}
	case n.IsBlockDevice(), n.Mode&iofs.ModeSocket != 0:
		return 0, unix.ENXIO // no block driver; a socket is connected to, not opened
	case n.IsFIFO():
		if f, err = openFIFO(t, n, acc, flags&unix.O_NONBLOCK != 0); err != nil {
			return 0, err
		}
	}
	if !oPath {
		if err := t.Proc.Root.OpenPermission(n, p, t); err != nil {
			f.Close()
			return 0, err
		}
	}
	desc := fs.NewDescription(f, uint32(flags))
	if !oPath {
		kept := uint64(fs.LandlockTruncate)
		if n.IsDevice() {
			kept |= fs.LandlockIoctlDev
		}
		desc.LandlockDenied = t.Proc.Root.LandlockDenied(c, p, kept)
	}
	fd, err := t.Proc.Files.OpenDescription(desc, flags&unix.O_CLOEXEC != 0)
	if err != nil {
		return 0, err // OpenDescription closed f
	}
	if !oPath {
		truncated := flags&unix.O_TRUNC != 0 && !created && n.Mode.IsRegular()
		t.Proc.Root.NotifyOpen(f, n, p, truncated, t)
	}
	return uint64(fd), nil
}

// openTmpfile is open(O_TMPFILE): a regular file with no name in the
// directory p, which linkat may name later unless O_EXCL. It must be
// opened for writing, with O_DIRECTORY and without O_CREAT (EINVAL), as
// Linux's build_open_flags checks.
func openTmpfile(t *kernel.Task, p string, flags, mode uint64, c *fs.Cred) (uint64, error) {
	if flags&(unix.O_TMPFILE|unix.O_CREAT) != unix.O_TMPFILE || flags&unix.O_ACCMODE == unix.O_RDONLY {
		return 0, unix.EINVAL
	}
	perm := fs.ModeFromUnix(uint32(mode) & 0o7777 &^ t.Proc.Umask())
	n, err := t.Proc.Root.CreateTemp(c, p, perm, flags&unix.O_EXCL == 0)
	if err != nil {
		return 0, err
	}
	// Linux names it "#ino" in the directory, and shows it deleted.
	f := t.Proc.Root.OpenNode(n, strings.TrimSuffix(p, "/")+"/#"+strconv.FormatUint(n.Ino, 10)+" (deleted)")
	fd, err := t.Proc.Files.Open(f, uint32(flags), flags&unix.O_CLOEXEC != 0)
	return uint64(fd), err // a failed Open closed f
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

// sysMknodat implements mknodat(2) for named pipes, regular files,
// sockets (a name no socket is bound to) and device nodes.
func sysMknodat(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	perm := fs.ModeFromUnix(uint32(a[2]) & 0o7777 &^ t.Proc.Umask())
	var n *fs.Node
	switch a[2] & unix.S_IFMT {
	case unix.S_IFIFO:
		n = fs.NewFIFO(perm)
	case 0, unix.S_IFREG:
		n = &fs.Node{Mode: perm}
	case unix.S_IFCHR, unix.S_IFBLK:
		if t.Proc.EUID != 0 {
			return 0, unix.EPERM // CAP_MKNOD
		}
		if a[2]&unix.S_IFMT == unix.S_IFBLK {
			n = fs.NewBlockDevice(perm, a[3])
		} else {
			n = fs.NewDevice(perm, a[3])
		}
	case unix.S_IFSOCK:
		n = &fs.Node{Mode: iofs.ModeSocket | perm}
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
	return 0, t.Proc.Root.Mkdir(t.Proc.Cred(), p, fs.ModeFromUnix(uint32(a[2])&0o1777&^t.Proc.Umask()))
}

// sysUnlinkat implements unlinkat(2). A path whose last component is "."
// or ".." or that is the root names no entry to remove: EINVAL, ENOTEMPTY
// and EBUSY for a directory, EISDIR otherwise, as Linux's do_rmdir and
// do_unlinkat.
func sysUnlinkat(t *kernel.Task, a Args) (uint64, error) {
	if a[2]&^unix.AT_REMOVEDIR != 0 {
		return 0, unix.EINVAL
	}
	dir := a[2]&unix.AT_REMOVEDIR != 0
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	p, err := resolve(t, int32(a[0]), name)
	if err != nil {
		return 0, err
	}
	last := "/"
	if trimmed := strings.TrimRight(name, "/"); trimmed != "" {
		last = path.Base(trimmed)
	}
	if last == "." || last == ".." || last == "/" {
		switch {
		case !dir:
			return 0, unix.EISDIR
		case last == ".":
			return 0, unix.EINVAL
		case last == "..":
			return 0, unix.ENOTEMPTY
		default:
			return 0, unix.EBUSY
		}
	}
	return 0, t.Proc.Root.Remove(t.Proc.Cred(), p, dir)
}

// sysRenameat2 implements renameat2(2) (and rename, renameat) with
// RENAME_NOREPLACE and RENAME_EXCHANGE.
func sysRenameat2(t *kernel.Task, a Args) (uint64, error) {
	flags := a[4]
	if flags&^(unix.RENAME_NOREPLACE|unix.RENAME_EXCHANGE) != 0 ||
		flags&unix.RENAME_NOREPLACE != 0 && flags&unix.RENAME_EXCHANGE != 0 {
		return 0, unix.EINVAL // RENAME_WHITEOUT is not offered
	}
	from, err := pathArg(t, a[0], a[1])
	if err != nil {
		return 0, err
	}
	to, err := pathArg(t, a[2], a[3])
	if err != nil {
		return 0, err
	}
	if flags&unix.RENAME_EXCHANGE != 0 {
		err = t.Proc.Root.Exchange(t.Proc.Cred(), from, to)
	} else {
		err = t.Proc.Root.Rename(t.Proc.Cred(), from, to, flags&unix.RENAME_NOREPLACE != 0)
	}
	if err != nil {
		return 0, err
	}
	followRename(t.Kernel(), path.Clean(from), path.Clean(to), flags&unix.RENAME_EXCHANGE != 0)
	return 0, nil
}

// followRename moves the working directories in or under a renamed
// directory to its new name (and those under to to from, for an
// exchange): a working directory is kept as a path, and Linux's follows
// the directory.
func followRename(k *kernel.Kernel, from, to string, exchange bool) {
	moved := func(cwd, from, to string) (string, bool) {
		if cwd == from {
			return to, true
		}
		if rest, ok := strings.CutPrefix(cwd, from+"/"); ok {
			return path.Join(to, rest), true
		}
		return "", false
	}
	for _, p := range k.Processes() {
		if cwd, ok := moved(p.Cwd(), from, to); ok {
			p.SetCwd(cwd)
		} else if cwd, ok := moved(p.Cwd(), to, from); ok && exchange {
			p.SetCwd(cwd)
		}
	}
}

// sysLinkat implements linkat(2).
//
// The file may be named by its descriptor: an empty path with
// AT_EMPTY_PATH, or /proc/PID/fd/N followed, which also names a file
// open(O_TMPFILE) made without a name.
func sysLinkat(t *kernel.Task, a Args) (uint64, error) {
	flags := a[4]
	if flags&^(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL
	}
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	var byFD *fs.Node
	var oldp string
	if name == "" && flags&unix.AT_EMPTY_PATH != 0 {
		if int32(a[0]) == unix.AT_FDCWD {
			byFD, err = t.Proc.Root.Lookup(t.Proc.Cred(), t.Proc.Cwd(), true)
		} else if byFD, err = nodeOf(t, a[0]); err == unix.EINVAL {
			err = unix.EXDEV // a pipe, socket or device: no file of the tree
		}
		if err != nil {
			return 0, err
		}
	} else if oldp, err = resolve(t, int32(a[0]), name); err != nil {
		return 0, err
	} else if nf, ok := fileOfFDLink(t.Kernel(), visible(t, oldp)); ok && flags&unix.AT_SYMLINK_FOLLOW != 0 {
		byFD = nf.Node()
	}
	newp, err := pathArg(t, a[2], a[3])
	if err != nil {
		return 0, err
	}
	if byFD != nil {
		return 0, t.Proc.Root.LinkNode(t.Proc.Cred(), byFD, newp)
	}
	return 0, t.Proc.Root.Link(t.Proc.Cred(), oldp, newp, flags&unix.AT_SYMLINK_FOLLOW != 0)
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
	if name == "" && int32(a[0]) != unix.AT_FDCWD {
		// An empty path names dirfd itself: a symlink opened with
		// O_PATH|O_NOFOLLOW is read, anything else is ENOENT, as Linux.
		d, err := t.Proc.Files.Get(int(int32(a[0])))
		if err != nil {
			return 0, err
		}
		defer d.DecRef()
		n := d.Node()
		if n == nil || n.Link == "" {
			return 0, unix.ENOENT
		}
		target = n.Link
	} else if path.Clean(name) == "/proc/self" {
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
		if n.Magic() && strings.HasPrefix(target, "/") {
			target, _ = t.Proc.Visible(target) // from the reader's root
		}
	}
	b := []byte(target)[:min(uint64(len(target)), a[3])]
	return uint64(len(b)), copyOut(t, a[2], b)
}

// sysUmask implements umask(2).
func sysUmask(t *kernel.Task, a Args) (uint64, error) {
	return uint64(t.Proc.SetUmask(uint32(a[0]) & 0o777)), nil
}

// sysFsync implements fsync(2) and fdatasync(2): memory is the medium.
// Only a tree's regular files and directories have an fsync; pipes,
// sockets, devices and procfs files are EINVAL, as on Linux.
func sysFsync(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if n := d.Node(); d.Flags()&unix.O_PATH != 0 {
		return 0, unix.EBADF
	} else if _, ok := d.NodeFile(); !ok || n.Generate != nil || n.ListDir != nil || !n.Mode.IsRegular() && !n.IsDir() {
		return 0, unix.EINVAL
	}
	return 0, nil
}

// sync_file_range(2)'s flags.
const syncFileRangeFlags = 1 | 2 | 4 // WAIT_BEFORE, WRITE, WAIT_AFTER

// sysSyncFileRange implements sync_file_range(2), which has nothing to
// write: Linux's checks of the flags, the range and the file's kind
// (ESPIPE for a pipe, a socket or a device).
func sysSyncFileRange(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	off, n := int64(a[1]), int64(a[2])
	if a[3]&^syncFileRangeFlags != 0 || off < 0 || off+n < 0 || off+n < off {
		return 0, unix.EINVAL
	}
	if node := d.Node(); node == nil || !node.Mode.IsRegular() && !node.IsDir() && node.Mode&iofs.ModeSymlink == 0 {
		return 0, unix.ESPIPE
	}
	return 0, nil
}

// sysReadahead implements readahead(2): a file in memory is read already.
// EBADF unless open for reading, EINVAL for anything but a regular file.
func sysReadahead(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if !d.Readable() {
		return 0, unix.EBADF
	}
	if n := d.Node(); n == nil || !n.Mode.IsRegular() {
		return 0, unix.EINVAL
	}
	return 0, nil
}

// close_range(2)'s flags.
const (
	closeRangeUnshare = 2
	closeRangeCloexec = 4
)

// sysCloseRange implements close_range(2): every open descriptor from
// first to last is closed (its process's locks on the file released, as
// close does), or marked close-on-exec with CLOSE_RANGE_CLOEXEC; with
// CLOSE_RANGE_UNSHARE first in a copy of a table shared by CLONE_FILES.
func sysCloseRange(t *kernel.Task, a Args) (uint64, error) {
	first, last, flags := uint32(a[0]), uint32(a[1]), a[2]
	if flags&^(closeRangeUnshare|closeRangeCloexec) != 0 || first > last {
		return 0, unix.EINVAL
	}
	if flags&closeRangeUnshare != 0 {
		if err := t.Proc.UnshareFiles(); err != nil {
			return 0, err
		}
	}
	for _, fd := range t.Proc.Files.Numbers() {
		if uint32(fd) < first || uint32(fd) > last {
			continue
		}
		if flags&closeRangeCloexec != 0 {
			t.Proc.Files.SetCloExec(fd, true)
			continue
		}
		if d, err := t.Proc.Files.Remove(fd); err == nil {
			if n := d.Node(); n != nil {
				t.Proc.Root.ReleaseLocks(n, t.Proc)
			}
			d.DecRef()
		}
	}
	return 0, nil
}

// sysGetdents64 implements getdents64(2): ".", ".." and the entries sorted
// by name; the file position counts entries.
func sysGetdents64(t *kernel.Task, a Args) (uint64, error) {
	f, d, err := nodeFile(t, a[0])
	if err != nil {
		return 0, err
	}
	if d.Flags()&unix.O_PATH != 0 {
		d.DecRef()
		return 0, unix.EBADF
	}
	defer d.DecRef()
	dir := f.Node()
	if !dir.IsDir() {
		return 0, unix.ENOTDIR
	}
	entries := append([]fs.DirEntry{{Name: ".", Node: dir}, {Name: "..", Node: dir}}, t.Proc.Root.List(dir)...)
	var out []byte
	var ends []int // where each entry in out ends
	start := int(f.Offset())
	i := start
	for ; i < len(entries); i++ {
		e := entries[i]
		if uint64(len(out)+linux.Dirent64Len(e.Name)) > a[2] {
			break
		}
		out = linux.AppendDirent64(out, e.Node.Ino, int64(i+1), direntType(e.Node), e.Name)
		ends = append(ends, len(out))
	}
	if len(out) == 0 && i < len(entries) {
		return 0, unix.EINVAL // the buffer cannot hold one entry
	}
	if copyOut(t, a[1], out) == nil {
		f.SetOffset(int64(i))
		return uint64(len(out)), nil
	}
	// As Linux, the entries that reached the buffer before the one that
	// faulted are returned and consumed; the rest stay for the next call.
	done := 0
	for i = start; i-start < len(ends); i++ {
		end := ends[i-start]
		if copyOut(t, a[1]+uint64(done), out[done:end]) != nil {
			break
		}
		done = end
	}
	if done == 0 {
		return 0, unix.EFAULT
	}
	f.SetOffset(int64(i))
	return uint64(done), nil
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
	case n.IsBlockDevice():
		return unix.DT_BLK
	case n.Mode&iofs.ModeSocket != 0:
		return unix.DT_SOCK
	}
	return unix.DT_REG
}

// namesDirectory says whether a path ends in a slash: Linux then follows
// a final symbolic link and requires a directory (ENOTDIR), which the
// cleaned path resolve returns no longer shows.
func namesDirectory(name string) bool { return strings.HasSuffix(name, "/") }

// lookupNamed looks p up for c, following a final symbolic link when
// follow is set; dirOnly (namesDirectory) requires a directory.
func lookupNamed(t *kernel.Task, c *fs.Cred, p string, follow, dirOnly bool) (*fs.Node, error) {
	n, err := t.Proc.Root.Lookup(c, p, follow)
	if err == nil && dirOnly && !n.IsDir() {
		return nil, unix.ENOTDIR
	}
	return n, err
}

// pathArg reads a path argument and resolves it against a directory fd.
func pathArg(t *kernel.Task, dirfd, addr uint64) (string, error) {
	name, err := copyInString(t, addr)
	if err != nil {
		return "", err
	}
	return resolve(t, int32(dirfd), name)
}

// nodeFile returns the tree file open on fd and its description, with
// the reference the caller drops: EINVAL for any other file.
func nodeFile(t *kernel.Task, fd uint64) (*fs.NodeFile, *fs.Description, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, nil, err
	}
	nf, ok := d.NodeFile()
	if !ok {
		d.DecRef()
		return nil, nil, unix.EINVAL
	}
	return nf, d, nil
}

// nodeOf returns the tree node open on fd. It drops its reference to the
// description before returning: the node is the tree's, and what its
// callers change or check (owner, mode, times, access) needs nothing of
// the open file.
func nodeOf(t *kernel.Task, fd uint64) (*fs.Node, error) {
	f, d, err := nodeFile(t, fd)
	if err != nil {
		return nil, err
	}
	d.DecRef()
	return f.Node(), nil
}

// sysGetcwd implements getcwd(2): a working directory outside the root
// directory is shown "(unreachable)" and from the tree's root, as Linux
// does (glibc's getcwd and realpath refuse a path that is not absolute).
func sysGetcwd(t *kernel.Task, a Args) (uint64, error) {
	dir, reachable := t.Proc.Visible(t.Proc.Cwd())
	if !reachable {
		dir = "(unreachable)" + dir
	}
	cwd := append([]byte(dir), 0)
	if len(cwd) > unix.PathMax {
		return 0, unix.ENAMETOOLONG // Linux builds the path in a PATH_MAX buffer
	}
	if uint64(len(cwd)) > a[1] {
		return 0, unix.ERANGE
	}
	return uint64(len(cwd)), copyOut(t, a[0], cwd)
}

// sysChdir implements chdir(2).
func sysChdir(t *kernel.Task, a Args) (uint64, error) {
	canon, err := searchableDir(t, a[0])
	if err != nil {
		return 0, err
	}
	t.Proc.SetCwd(canon)
	return 0, nil
}

// sysChroot implements chroot(2): the process's paths resolve under the
// directory from now on (and those of the processes sharing its context
// by CLONE_FS); its working directory stays. CAP_SYS_CHROOT is checked
// after the lookup and the directory's search permission, as Linux does.
func sysChroot(t *kernel.Task, a Args) (uint64, error) {
	canon, err := searchableDir(t, a[0])
	if err != nil {
		return 0, err
	}
	if t.Proc.EUID != 0 {
		return 0, unix.EPERM
	}
	t.Proc.SetRootDir(canon)
	return 0, nil
}

// searchableDir looks up the directory path argument addr names for chdir
// and chroot, which need search permission in it, and returns its
// physical path, the one getcwd reports.
func searchableDir(t *kernel.Task, addr uint64) (string, error) {
	p, err := pathArg(t, cwdFD, addr)
	if err != nil {
		return "", err
	}
	n, canon, err := t.Proc.Root.LookupPath(t.Proc.Cred(), p)
	if err != nil {
		return "", err
	}
	if !n.IsDir() {
		return "", unix.ENOTDIR
	}
	if err := fs.Access(n, t.Proc.Cred(), fs.MayExec); err != nil {
		return "", err
	}
	return canon, nil
}

// openNodeOf is nodeOf for the calls that need an open file, not a
// location: EBADF for an O_PATH descriptor, as Linux's fdget.
func openNodeOf(t *kernel.Task, fd uint64) (*fs.Node, error) {
	f, d, err := nodeFile(t, fd)
	if err != nil {
		return nil, err
	}
	d.DecRef()
	if d.Flags()&unix.O_PATH != 0 {
		return nil, unix.EBADF
	}
	return f.Node(), nil
}

// sysFchdir implements fchdir(2).
func sysFchdir(t *kernel.Task, a Args) (uint64, error) {
	f, d, err := nodeFile(t, a[0])
	if err != nil {
		if err == unix.EINVAL {
			return 0, unix.ENOTDIR
		}
		return 0, err
	}
	defer d.DecRef()
	if !f.Node().IsDir() {
		return 0, unix.ENOTDIR
	}
	if err := fs.Access(f.Node(), t.Proc.Cred(), fs.MayExec); err != nil {
		return 0, err
	}
	t.Proc.SetCwd(f.Path())
	return 0, nil
}
