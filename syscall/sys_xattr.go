package syscall

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.Setxattr, func(t *kernel.Task, a Args) (uint64, error) { return setxattr(t, a, byPath) })
	register(sysno.Lsetxattr, func(t *kernel.Task, a Args) (uint64, error) { return setxattr(t, a, byLinkPath) })
	register(sysno.Fsetxattr, func(t *kernel.Task, a Args) (uint64, error) { return setxattr(t, a, byFD) })
	register(sysno.Getxattr, func(t *kernel.Task, a Args) (uint64, error) { return getxattr(t, a, byPath) })
	register(sysno.Lgetxattr, func(t *kernel.Task, a Args) (uint64, error) { return getxattr(t, a, byLinkPath) })
	register(sysno.Fgetxattr, func(t *kernel.Task, a Args) (uint64, error) { return getxattr(t, a, byFD) })
	register(sysno.Listxattr, func(t *kernel.Task, a Args) (uint64, error) { return listxattr(t, a, byPath) })
	register(sysno.Llistxattr, func(t *kernel.Task, a Args) (uint64, error) { return listxattr(t, a, byLinkPath) })
	register(sysno.Flistxattr, func(t *kernel.Task, a Args) (uint64, error) { return listxattr(t, a, byFD) })
	register(sysno.Removexattr, func(t *kernel.Task, a Args) (uint64, error) { return removexattr(t, a, byPath) })
	register(sysno.Lremovexattr, func(t *kernel.Task, a Args) (uint64, error) { return removexattr(t, a, byLinkPath) })
	register(sysno.Fremovexattr, func(t *kernel.Task, a Args) (uint64, error) { return removexattr(t, a, byFD) })
}

// How an xattr call names its file: a path (followed, or not: the l
// forms) or a descriptor (the f forms).
type xattrTarget int

const (
	byPath xattrTarget = iota
	byLinkPath
	byFD
)

// xattrNode finds the node an xattr call names in its first argument;
// nil for a descriptor of no tree node (a pipe, a socket).
func xattrNode(t *kernel.Task, arg uint64, by xattrTarget) (*fs.Node, error) {
	if by == byFD {
		d, err := t.Proc.Files.Get(int(int32(arg)))
		if err != nil {
			return nil, err
		}
		defer d.DecRef()
		if d.Flags()&unix.O_PATH != 0 {
			return nil, unix.EBADF
		}
		return d.Node(), nil
	}
	p, err := pathArg(t, cwdFD, arg)
	if err != nil {
		return nil, err
	}
	return t.Proc.Root.Lookup(t.Proc.Cred(), p, by == byPath)
}

// xattrNameMax is XATTR_NAME_MAX.
const xattrNameMax = 255

// xattrName reads an attribute's name: ERANGE when empty or longer than
// XATTR_NAME_MAX, as Linux's strncpy_from_user into its 256-byte buffer.
func xattrName(t *kernel.Task, addr uint64) (string, error) {
	t.Proc.Lock()
	name, err := t.Proc.AS.CopyInString(uintptr(addr), xattrNameMax+1)
	t.Proc.Unlock()
	switch {
	case errors.Is(err, mm.ErrInvalid):
		return "", unix.ERANGE
	case err != nil:
		return "", unix.EFAULT
	case name == "":
		return "", unix.ERANGE
	}
	return name, nil
}

// setxattr implements setxattr(2), lsetxattr and fsetxattr: the flags,
// name and value are checked before the file is looked up, as Linux does.
func setxattr(t *kernel.Task, a Args, by xattrTarget) (uint64, error) {
	flags := a[4]
	if flags&^(fs.XattrCreate|fs.XattrReplace) != 0 {
		return 0, unix.EINVAL
	}
	name, err := xattrName(t, a[1])
	if err != nil {
		return 0, err
	}
	size := a[3]
	if size > fs.XattrSizeMax {
		return 0, unix.E2BIG
	}
	value := make([]byte, size)
	if err := copyIn(t, a[2], value); err != nil {
		return 0, err
	}
	n, err := xattrNode(t, a[0], by)
	if err != nil {
		return 0, err
	}
	return 0, fs.SetXattr(n, t.Proc.Cred(), name, value, int(flags))
}

// getxattr implements getxattr(2), lgetxattr and fgetxattr: a size of 0
// asks for the value's length, a smaller one is ERANGE.
func getxattr(t *kernel.Task, a Args, by xattrTarget) (uint64, error) {
	n, err := xattrNode(t, a[0], by)
	if err != nil {
		return 0, err
	}
	name, err := xattrName(t, a[1])
	if err != nil {
		return 0, err
	}
	value, err := fs.GetXattr(n, t.Proc.Cred(), name)
	if err != nil {
		return 0, err
	}
	return copyOutSized(t, a[2], a[3], value)
}

// copyOutSized answers getxattr and listxattr: the length alone for a
// size of 0, ERANGE when data does not fit in size bytes, else data
// copied to addr.
func copyOutSized(t *kernel.Task, addr, size uint64, data []byte) (uint64, error) {
	size = min(size, fs.XattrSizeMax)
	switch {
	case size == 0:
		return uint64(len(data)), nil
	case uint64(len(data)) > size:
		return 0, unix.ERANGE
	}
	return uint64(len(data)), copyOut(t, addr, data)
}

// listxattr implements listxattr(2), llistxattr and flistxattr: the
// names, each ended by a NUL; a size of 0 asks for the length.
func listxattr(t *kernel.Task, a Args, by xattrTarget) (uint64, error) {
	n, err := xattrNode(t, a[0], by)
	if err != nil {
		return 0, err
	}
	var list []byte
	for _, name := range fs.ListXattr(n, t.Proc.Cred()) {
		list = append(append(list, name...), 0)
	}
	return copyOutSized(t, a[1], a[2], list)
}

// removexattr implements removexattr(2), lremovexattr and fremovexattr.
func removexattr(t *kernel.Task, a Args, by xattrTarget) (uint64, error) {
	n, err := xattrNode(t, a[0], by)
	if err != nil {
		return 0, err
	}
	name, err := xattrName(t, a[1])
	if err != nil {
		return 0, err
	}
	return 0, fs.RemoveXattr(n, t.Proc.Cred(), name)
}
