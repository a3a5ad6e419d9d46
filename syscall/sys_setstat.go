package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Fchownat, sysFchownat)
	register(sysno.Fchown, sysFchown)
	register(sysno.Fchmodat, sysFchmodat)
	register(sysno.Fchmod, sysFchmod)
	register(sysno.Ftruncate, sysFtruncate)
	register(sysno.Truncate, sysTruncate)
	register(sysno.Utimensat, sysUtimensat)
}

// sysFchownat implements fchownat(2) (and chown through it).
func sysFchownat(t *kernel.Task, a Args) (uint64, error) {
	if a[4]&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL
	}
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
	n, err := openNodeOf(t, a[0])
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
	n, err := openNodeOf(t, a[0])
	if err != nil {
		return 0, err
	}
	return 0, fs.Chmod(n, t.Proc.Cred(), uint32(a[1]))
}

// sysFtruncate implements ftruncate(2): EINVAL for a negative length or a
// description not open for writing.
func sysFtruncate(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if hf, ok := d.File.(*fs.HugeFile); ok && d.Writable() && int64(a[1]) >= 0 {
		return 0, hf.Truncate(int64(a[1]))
	}
	f, ok := d.NodeFile()
	if !ok || !d.Writable() || int64(a[1]) < 0 {
		return 0, unix.EINVAL
	}
	if err := fs.MayTruncate(f.Node()); err != nil {
		return 0, err
	}
	if d.LandlockDenied&fs.LandlockTruncate != 0 {
		return 0, unix.EACCES
	}
	if err := checkFileSizeLimit(t, f, int64(a[1])); err != nil {
		return 0, err
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
	if err := fs.MayTruncate(n); err != nil {
		return 0, err
	}
	if err := t.Proc.Root.LandlockCheck(t.Proc.Cred(), p, fs.LandlockTruncate); err != nil {
		return 0, err
	}
	f := t.Proc.Root.OpenNode(n, p)
	defer f.Close()
	if err := checkFileSizeLimit(t, f, int64(a[1])); err != nil {
		return 0, err
	}
	return 0, f.Truncate(int64(a[1]))
}

// checkFileSizeLimit refuses a truncate that grows f past RLIMIT_FSIZE:
// SIGXFSZ and EFBIG, as Linux's inode_newsize_ok.
func checkFileSizeLimit(t *kernel.Task, f *fs.NodeFile, size int64) error {
	if size > f.Stat().Size && size > fileSizeLimit(t) {
		fileSizeExceeded(t)
		return unix.EFBIG
	}
	return nil
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
	if a[1] == 0 && int32(a[0]) == unix.AT_FDCWD {
		return 0, unix.EFAULT // no path and no file: Linux reads the null name
	}
	if a[1] == 0 {
		n, err = openNodeOf(t, a[0])
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
		var ts [2]linux.Timespec
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
