package syscall

import (
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"golang.org/x/sys/unix"
)

// The inode-flag ioctls, which Linux's do_vfs_ioctl answers for every
// file before its own ioctl: FS_IOC_GETFLAGS and SETFLAGS (an int, the
// FS_*_FL flags) and FS_IOC_FSGETXATTR and FSSETXATTR (struct fsxattr,
// the FS_XFLAG_* flags).
const (
	fsIocFsGetXattr = 0x801c581f
	fsIocFsSetXattr = 0x401c5820
)

// fsxattr is struct fsxattr.
type fsxattr struct {
	XFlags, ExtSize, NExtents, ProjID, CowExtSize uint32
	_                                             [8]byte
}

// The FS_XFLAG_* flags that have an FS_*_FL twin (FS_XFLAG_COMMON), each
// with it.
var xflagTwins = [...]struct{ xflag, flag uint32 }{
	{0x20, 0x8},             // SYNC
	{0x8, fs.FlagImmutable}, // IMMUTABLE
	{0x10, fs.FlagAppend},   // APPEND
	{0x80, fs.FlagNoDump},   // NODUMP
	{0x40, fs.FlagNoAtime},  // NOATIME
	{0x8000, 0x2000000},     // DAX
	{0x200, 0x20000000},     // PROJINHERIT
}

// unsupportedFlag is a flag no file system here keeps: what an fsxattr
// that sets more than the common flags asks for.
const unsupportedFlag = 0x80000000

// fileattrIoctl answers the inode-flag ioctls on d; handled is false for
// other requests and for files whose file system keeps no flags (a pipe,
// a socket, procfs), whose own ioctl then answers.
func fileattrIoctl(t *kernel.Task, d *fs.Description, cmd, arg uint64) (ret uint64, handled bool, err error) {
	if cmd != unix.FS_IOC_GETFLAGS && cmd != unix.FS_IOC_SETFLAGS && cmd != fsIocFsGetXattr && cmd != fsIocFsSetXattr {
		return 0, false, nil
	}
	nf, ok := d.NodeFile()
	if !ok || !nf.Node().HasFlags() {
		return 0, false, nil
	}
	n := nf.Node()
	var flags uint32
	switch cmd {
	case unix.FS_IOC_GETFLAGS:
		return 0, true, copyOutStruct(t, arg, int32(n.Flags()))
	case fsIocFsGetXattr:
		var fa fsxattr
		for _, tw := range xflagTwins {
			if n.Flags()&tw.flag != 0 {
				fa.XFlags |= tw.xflag
			}
		}
		return 0, true, copyOutStruct(t, arg, fa)
	case unix.FS_IOC_SETFLAGS:
		var v int32
		if err := copyInStruct(t, arg, &v); err != nil {
			return 0, true, err
		}
		flags = uint32(v)
	case fsIocFsSetXattr:
		var fa fsxattr
		if err := copyInStruct(t, arg, &fa); err != nil {
			return 0, true, err
		}
		rest := fa.XFlags
		for _, tw := range xflagTwins {
			if fa.XFlags&tw.xflag != 0 {
				flags |= tw.flag
				rest &^= tw.xflag
			}
		}
		if rest != 0 || fa.ExtSize != 0 || fa.ProjID != 0 || fa.CowExtSize != 0 {
			flags |= unsupportedFlag
		}
	}
	return 0, true, fs.SetFlags(n, t.Proc.Cred(), flags, t.Proc.Caps.Effective&(1<<unix.CAP_LINUX_IMMUTABLE) != 0)
}
