package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/fs/procfs"
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

// The ioctls of a namespace's file (linux/nsfs.h). Linux 6.11's
// NS_GET_PID_FROM_PIDNS and its kin are not answered (ENOTTY).
const (
	nsGetUserns   = 0xb701
	nsGetParent   = 0xb702
	nsGetNstype   = 0xb703
	nsGetOwnerUID = 0xb704
)

// nsIoctl answers the ioctls of a namespace's file as Linux's ns_ioctl:
// NS_GET_USERNS and NS_GET_PARENT open the related namespace's file
// (close-on-exec, read-only, as open_related_ns), NS_GET_OWNER_UID stores
// the owner of a user namespace (root's, of the one there is).
func nsIoctl(t *kernel.Task, ns *kernel.Namespace, cmd, arg uint64) (uint64, error) {
	switch cmd {
	case nsGetNstype:
		return uint64(ns.Kind), nil
	case nsGetUserns:
		return openRelatedNamespace(t, ns, t.NamespaceOwner)
	case nsGetParent:
		return openRelatedNamespace(t, ns, t.NamespaceParent)
	case nsGetOwnerUID:
		if ns.Kind != unix.CLONE_NEWUSER {
			return 0, unix.EINVAL
		}
		return 0, copyOutStruct(t, arg, uint32(0))
	}
	return 0, unix.ENOTTY
}

// openRelatedNamespace opens the file of the namespace related finds for
// ns, in a new descriptor.
func openRelatedNamespace(t *kernel.Task, ns *kernel.Namespace, related func(*kernel.Namespace) (*kernel.Namespace, error)) (uint64, error) {
	r, err := related(ns)
	if err != nil {
		return 0, err
	}
	f := t.Proc.Root.OpenNode(procfs.NamespaceFile(r.Ino, r), procfs.NamespaceName(r.KindName(), r.Ino))
	fd, err := t.Proc.Files.Open(f, unix.O_RDONLY, true)
	return uint64(fd), err
}
