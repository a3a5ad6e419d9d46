package fs

import (
	"io/fs"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// Extended attributes, as tmpfs keeps them: the user.*, trusted.* and
// security.* namespaces (others are EOPNOTSUPP), by name on the node,
// listed in the order of Linux's simple_xattr tree. The checks are
// Linux's xattr_permission and commoncap's: user.* only on regular files
// and directories, with read or write permission on the file (a sticky
// directory's owner only writes them); trusted.* only by the privileged
// (others see none); security.* written only by the privileged.

// XattrSizeMax is the largest value (XATTR_SIZE_MAX).
const XattrSizeMax = 65536

// Xattr flags (XATTR_CREATE, XATTR_REPLACE).
const (
	XattrCreate  = 1
	XattrReplace = 2
)

const (
	xattrUser     = "user."
	xattrTrusted  = "trusted."
	xattrSecurity = "security."
)

// xattrAccess checks c's access to n's attribute name for reading or
// writing (xattr_permission), then that the namespace is one tmpfs keeps.
// A nil n is a file outside the tree (a pipe, a socket): a special file
// whose file system keeps no attributes.
func xattrAccess(n *Node, c *Cred, name string, write bool) error {
	denied := error(unix.ENODATA)
	if write {
		denied = unix.EPERM
	}
	if n == nil || n.Generate != nil || n.ListDir != nil {
		if n == nil && strings.HasPrefix(name, xattrUser) {
			return denied
		}
		return unix.EOPNOTSUPP // procfs, sysfs, pipefs, sockfs
	}
	if write && n.onReadOnlyFS() {
		return unix.EROFS // mnt_want_write comes first
	}
	if write {
		if err := mayModify(n); err != nil {
			return err
		}
	}
	switch {
	case strings.HasPrefix(name, xattrSecurity):
		if write && !c.Privileged() {
			return unix.EPERM // CAP_SYS_ADMIN (cap_inode_setxattr)
		}
		return nil
	case strings.HasPrefix(name, xattrTrusted):
		if !c.Privileged() {
			return denied
		}
		return nil
	case strings.HasPrefix(name, xattrUser):
		if !n.Mode.IsRegular() && !n.IsDir() {
			return denied
		}
		if n.IsDir() && n.Mode&fs.ModeSticky != 0 && write && !c.Owns(n) {
			return unix.EPERM
		}
	}
	want := MayRead
	if write {
		want = MayWrite
	}
	if err := Access(n, c, want); err != nil {
		return err
	}
	if !strings.HasPrefix(name, xattrUser) {
		return unix.EOPNOTSUPP
	}
	return nil
}

// SetXattr sets n's attribute name to value for c; flags XattrCreate
// (EEXIST when it exists) or XattrReplace (ENODATA when it does not).
// Each attribute charges the kernel-wide budget (mm.Charged) for its name
// and value until it is replaced or removed or the file is gone: ENOSPC
// past it, as tmpfs's simple_xattr accounting answers.
func SetXattr(n *Node, c *Cred, name string, value []byte, flags int) error {
	if err := xattrAccess(n, c, name, true); err != nil {
		return err
	}
	if err := n.setXattr(name, value, flags); err != nil {
		return err
	}
	n.touchChange()
	return nil
}

func (n *Node) setXattr(name string, value []byte, flags int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	old, exists := n.xattrs[name]
	switch {
	case flags&XattrCreate != 0 && exists:
		return unix.EEXIST
	case flags&XattrReplace != 0 && !exists:
		return unix.ENODATA
	}
	if err := mm.Charged.Charge(xattrCost(name, value)); err != nil {
		return unix.ENOSPC
	}
	if exists {
		mm.Charged.Uncharge(xattrCost(name, old))
	}
	if n.xattrs == nil {
		n.xattrs = map[string][]byte{}
	}
	n.xattrs[name] = slices.Clone(value)
	return nil
}

// xattrCost is what an attribute charges: its name, its value and the
// map entry that holds them.
func xattrCost(name string, value []byte) int { return len(name) + len(value) + 64 }

// dropXattrsLocked gives back the attributes' charge: the file is gone.
// n.mu is held.
func (n *Node) dropXattrsLocked() {
	for name, v := range n.xattrs {
		mm.Charged.Uncharge(xattrCost(name, v))
	}
	n.xattrs = nil
}

// GetXattr returns n's attribute name for c: ENODATA when it has none.
func GetXattr(n *Node, c *Cred, name string) ([]byte, error) {
	if err := xattrAccess(n, c, name, false); err != nil {
		return nil, err
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	v, ok := n.xattrs[name]
	if !ok {
		return nil, unix.ENODATA
	}
	return v, nil
}

// ListXattr returns the names of n's attributes that c may see, in
// Linux's order (by name, descending).
func ListXattr(n *Node, c *Cred) []string {
	if n == nil {
		return nil
	}
	n.mu.RLock()
	names := make([]string, 0, len(n.xattrs))
	for name := range n.xattrs {
		if c.Privileged() || !strings.HasPrefix(name, xattrTrusted) {
			names = append(names, name)
		}
	}
	n.mu.RUnlock()
	slices.Sort(names)
	slices.Reverse(names)
	return names
}

// RemoveXattr removes n's attribute name for c: ENODATA when it has none.
func RemoveXattr(n *Node, c *Cred, name string) error {
	if err := xattrAccess(n, c, name, true); err != nil {
		return err
	}
	if !n.removeXattr(name) {
		return unix.ENODATA
	}
	n.touchChange()
	return nil
}

func (n *Node) removeXattr(name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	v, ok := n.xattrs[name]
	if ok {
		delete(n.xattrs, name)
		mm.Charged.Uncharge(xattrCost(name, v))
	}
	return ok
}
