package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.FanotifyInit, sysFanotifyInit)
	register(sysno.FanotifyMark, sysFanotifyMark)
}

// The fanotify_init flags we take: the classes, the descriptor's flags,
// the limits lifted, and thread ids reported. Groups that report file
// handles, pidfds or audit are not offered (EINVAL).
const (
	fanotifyClasses   = unix.FAN_CLASS_NOTIF | unix.FAN_CLASS_CONTENT | unix.FAN_CLASS_PRE_CONTENT
	fanotifyInitFlags = fanotifyClasses | unix.FAN_CLOEXEC | unix.FAN_NONBLOCK |
		unix.FAN_UNLIMITED_QUEUE | unix.FAN_UNLIMITED_MARKS | unix.FAN_REPORT_TID
	// fanotifyFileFlags are the event files' flags a group may ask
	// (FANOTIFY_INIT_ALL_EVENT_F_BITS).
	fanotifyFileFlags = unix.O_ACCMODE | unix.O_APPEND | unix.O_NONBLOCK | unix.O_SYNC | unix.O_DSYNC |
		unix.O_CLOEXEC | unix.O_LARGEFILE | unix.O_NOATIME
)

// sysFanotifyInit implements fanotify_init(2): CAP_SYS_ADMIN first
// (EPERM), since the groups an unprivileged user may make report file
// handles; EMFILE past the user's groups.
func sysFanotifyInit(t *kernel.Task, a Args) (uint64, error) {
	flags, fileFlags := uint32(a[0]), uint32(a[1])
	if t.Proc.Caps.Effective&(1<<unix.CAP_SYS_ADMIN) == 0 {
		return 0, unix.EPERM
	}
	if flags&^fanotifyInitFlags != 0 || fileFlags&^fanotifyFileFlags != 0 || fileFlags&unix.O_ACCMODE == unix.O_ACCMODE {
		return 0, unix.EINVAL
	}
	if flags&fanotifyClasses == fanotifyClasses {
		return 0, unix.EINVAL
	}
	g, err := fs.NewFanotify(t.Proc.Root, t.Proc.RealCred().UID, flags, fileFlags)
	if err != nil {
		return 0, err
	}
	status := uint32(unix.O_RDWR)
	if flags&unix.FAN_NONBLOCK != 0 {
		status |= unix.O_NONBLOCK
	}
	fd, err := t.Proc.Files.Open(g, status, flags&unix.FAN_CLOEXEC != 0)
	return uint64(fd), err
}

// The fanotify_mark flags (FANOTIFY_MARK_FLAGS) and the events a group
// without file handles may mark.
const (
	fanotifyMarkTypes = unix.FAN_MARK_MOUNT | unix.FAN_MARK_FILESYSTEM
	fanotifyMarkFlags = fanotifyMarkTypes | unix.FAN_MARK_ADD | unix.FAN_MARK_REMOVE | unix.FAN_MARK_FLUSH |
		unix.FAN_MARK_DONT_FOLLOW | unix.FAN_MARK_ONLYDIR | unix.FAN_MARK_IGNORED_MASK |
		unix.FAN_MARK_IGNORED_SURV_MODIFY
	fanotifyMarkEvents = fs.FanotifyFDEvents | unix.FAN_ONDIR | unix.FAN_EVENT_ON_CHILD
)

// sysFanotifyMark implements fanotify_mark(2), with Linux's checks in
// Linux's order: the flags and mask (EINVAL), the group (EBADF, EINVAL),
// permission events in a notification group (EINVAL), then the object,
// which the caller must be able to read (EACCES). Removing what is not
// marked is ENOENT.
func sysFanotifyMark(t *kernel.Task, a Args) (uint64, error) {
	flags, mask := uint32(a[1]), a[2]
	if mask>>32 != 0 || flags&^fanotifyMarkFlags != 0 || flags&fanotifyMarkTypes == fanotifyMarkTypes {
		return 0, unix.EINVAL
	}
	switch flags & (unix.FAN_MARK_ADD | unix.FAN_MARK_REMOVE | unix.FAN_MARK_FLUSH) {
	case unix.FAN_MARK_ADD, unix.FAN_MARK_REMOVE:
		if mask == 0 {
			return 0, unix.EINVAL
		}
	case unix.FAN_MARK_FLUSH:
		if flags&^(fanotifyMarkTypes|unix.FAN_MARK_FLUSH) != 0 {
			return 0, unix.EINVAL
		}
	default:
		return 0, unix.EINVAL
	}
	if uint32(mask)&^fanotifyMarkEvents != 0 {
		return 0, unix.EINVAL
	}
	if flags&unix.FAN_MARK_IGNORED_MASK != 0 {
		mask &^= unix.FAN_ONDIR | unix.FAN_EVENT_ON_CHILD
	}
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	g, ok := d.File.(*fs.Fanotify)
	if !ok {
		return 0, unix.EINVAL
	}
	if uint32(mask)&fs.FanotifyPermEvents != 0 && !g.Permissions() {
		return 0, unix.EINVAL
	}
	if flags&unix.FAN_MARK_FLUSH != 0 {
		g.Flush(fanotifyKind(flags))
		return 0, nil
	}
	n, p, err := fanotifyObject(t, int32(a[3]), a[4], flags)
	if err != nil {
		return 0, err
	}
	target := fs.FanotifyTarget{Node: n}
	switch {
	case flags&unix.FAN_MARK_MOUNT != 0:
		target = fs.FanotifyTarget{Mount: t.Proc.Root.MountOf(nil, n, p).ID} // as events find it: in the initial namespace
	case flags&unix.FAN_MARK_FILESYSTEM != 0:
		target = fs.FilesystemTarget(n)
	case !n.IsDir():
		mask &^= unix.FAN_EVENT_ON_CHILD
	}
	if flags&unix.FAN_MARK_ADD != 0 {
		return 0, g.AddMark(target, uint32(mask), flags)
	}
	return 0, g.RemoveMark(target, uint32(mask), flags)
}

// fanotifyKind is the kind of mark flags names.
func fanotifyKind(flags uint32) fs.FanotifyKind {
	switch {
	case flags&unix.FAN_MARK_MOUNT != 0:
		return fs.FanotifyMountMark
	case flags&unix.FAN_MARK_FILESYSTEM != 0:
		return fs.FanotifyFilesystemMark
	}
	return fs.FanotifyNodeMark
}

// fanotifyObject finds what a mark is put on: the file open on dirfd
// when there is no path, else the path resolved against dirfd, following
// a final symbolic link unless FAN_MARK_DONT_FOLLOW; a directory with
// FAN_MARK_ONLYDIR (ENOTDIR), readable by the caller (EACCES).
func fanotifyObject(t *kernel.Task, dirfd int32, addr uint64, flags uint32) (*fs.Node, string, error) {
	cred := t.Proc.Cred()
	var n *fs.Node
	var p string
	if addr == 0 {
		d, err := t.Proc.Files.Get(int(dirfd))
		if err != nil {
			return nil, "", err
		}
		defer d.DecRef()
		nf, ok := d.NodeFile()
		if !ok {
			return nil, "", unix.EINVAL
		}
		n, p = nf.Node(), nf.Path()
		if flags&unix.FAN_MARK_ONLYDIR != 0 && !n.IsDir() {
			return nil, "", unix.ENOTDIR
		}
	} else {
		var err error
		if p, err = pathArg(t, uint64(uint32(dirfd)), addr); err != nil {
			return nil, "", err
		}
		if n, err = lookupNamed(t, cred, p, flags&unix.FAN_MARK_DONT_FOLLOW == 0, flags&unix.FAN_MARK_ONLYDIR != 0); err != nil {
			return nil, "", err
		}
	}
	return n, p, fs.Access(n, cred, fs.MayRead)
}
