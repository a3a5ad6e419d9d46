package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.InotifyInit1, sysInotifyInit1)
	register(sysno.InotifyAddWatch, sysInotifyAddWatch)
	register(sysno.InotifyRmWatch, sysInotifyRmWatch)
}

// sysInotifyInit1 implements inotify_init1(2): EMFILE past the user's
// max_user_instances.
func sysInotifyInit1(t *kernel.Task, a Args) (uint64, error) {
	flags := a[0]
	if flags&^(unix.IN_CLOEXEC|unix.IN_NONBLOCK) != 0 {
		return 0, unix.EINVAL
	}
	in, err := fs.NewInotify(t.Proc.Root, t.Proc.RealCred().UID)
	if err != nil {
		return 0, err
	}
	fd, err := t.Proc.Files.Open(in, unix.O_RDONLY|uint32(flags&unix.IN_NONBLOCK), flags&unix.IN_CLOEXEC != 0)
	return uint64(fd), err
}

// inotifyOf returns the instance open on fd, with the reference the
// caller drops: EINVAL for another kind of file.
func inotifyOf(t *kernel.Task, fd uint64) (*fs.Inotify, *fs.Description, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, nil, err
	}
	in, ok := d.File.(*fs.Inotify)
	if !ok {
		d.DecRef()
		return nil, nil, unix.EINVAL
	}
	return in, d, nil
}

// inotifyBits are the bits inotify_add_watch's mask may have
// (ALL_INOTIFY_BITS).
const inotifyBits = unix.IN_ALL_EVENTS | unix.IN_UNMOUNT | unix.IN_Q_OVERFLOW | unix.IN_IGNORED |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK | unix.IN_MASK_ADD | unix.IN_MASK_CREATE |
	unix.IN_ISDIR | unix.IN_ONESHOT

// sysInotifyAddWatch implements inotify_add_watch(2): the file must be
// readable by the caller (EACCES).
func sysInotifyAddWatch(t *kernel.Task, a Args) (uint64, error) {
	mask := uint32(a[2])
	if mask&unix.IN_MASK_ADD != 0 && mask&unix.IN_MASK_CREATE != 0 || mask&inotifyBits == 0 {
		return 0, unix.EINVAL
	}
	in, d, err := inotifyOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	p, err := pathArg(t, cwdFD, a[1])
	if err != nil {
		return 0, err
	}
	cred := t.Proc.Cred()
	n, err := lookupNamed(t, cred, p, mask&unix.IN_DONT_FOLLOW == 0, mask&unix.IN_ONLYDIR != 0)
	if err != nil {
		return 0, err
	}
	if err := fs.Access(n, cred, fs.MayRead); err != nil {
		return 0, err
	}
	wd, err := in.AddWatch(n, mask)
	return uint64(wd), err
}

// sysInotifyRmWatch implements inotify_rm_watch(2).
func sysInotifyRmWatch(t *kernel.Task, a Args) (uint64, error) {
	in, d, err := inotifyOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return 0, in.RemoveWatch(int32(a[1]))
}
