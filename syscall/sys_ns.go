package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Setns, sysSetns)
}

// namespaceOf returns the namespace whose /proc/PID/ns file d has open.
func namespaceOf(d *fs.Description) (*kernel.Namespace, bool) {
	n := d.Node()
	if n == nil || n.Dev != fs.DevNsfs {
		return nil, false
	}
	ns, ok := n.Bound.(*kernel.Namespace)
	return ns, ok
}

// sysSetns implements setns(2) with a namespace's file: EBADF for an
// O_PATH descriptor (Linux's fdget), EINVAL for any other file (a
// pidfd's namespaces are not taken).
func sysSetns(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if d.Flags()&unix.O_PATH != 0 {
		return 0, unix.EBADF
	}
	ns, ok := namespaceOf(d)
	if !ok {
		return 0, unix.EINVAL
	}
	return 0, t.Setns(ns, int(int32(a[1])))
}

// The ioctls of a namespace's file (linux/nsfs.h); NS_GET_USERNS
// (0xb701) has no user namespace's file to give.
const (
	nsGetParent   = 0xb702
	nsGetNstype   = 0xb703
	nsGetOwnerUID = 0xb704
)

// nsIoctl answers the ioctls of a namespace's file as Linux's ns_ioctl
// does for a namespace that has no parent (UTS, IPC) and is no user
// namespace; there is no user namespace's file to give (ENOTTY, as a
// Linux without them).
func nsIoctl(ns *kernel.Namespace, cmd uint64) (uint64, error) {
	switch cmd {
	case nsGetNstype:
		return uint64(ns.Kind), nil
	case nsGetParent, nsGetOwnerUID:
		return 0, unix.EINVAL
	}
	return 0, unix.ENOTTY
}
