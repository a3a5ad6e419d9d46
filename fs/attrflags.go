package fs

import "golang.org/x/sys/unix"

// Inode flags (chattr, FS_IOC_GETFLAGS and FS_IOC_SETFLAGS), as Linux's
// tmpfs keeps them: the four a user may change, of which immutable and
// append-only are enforced by the checks in perm.go, xattr.go and the
// open, truncate and fallocate paths, and no-dump and no-atime are kept
// for whoever reads them (this tree updates no access times).
const (
	FlagImmutable = 0x10 // FS_IMMUTABLE_FL
	FlagAppend    = 0x20 // FS_APPEND_FL
	FlagNoDump    = 0x40 // FS_NODUMP_FL
	FlagNoAtime   = 0x80 // FS_NOATIME_FL

	// tmpfsFlags are the flags tmpfs takes (SHMEM_FL_USER_MODIFIABLE).
	tmpfsFlags = FlagImmutable | FlagAppend | FlagNoDump | FlagNoAtime
)

// OnTmpfs reports whether n is a node of tmpfs (or of the initramfs,
// which is one): not of procfs or sysfs, not synthetic.
func (n *Node) OnTmpfs() bool {
	return n.Generate == nil && n.ListDir == nil && devOf(n) != DevProc && devOf(n) != DevSysfs
}

// HasFlags reports whether n keeps inode flags: a regular file or
// directory of tmpfs; not a special file, whose ioctl is its own.
func (n *Node) HasFlags() bool { return n.OnTmpfs() && (n.Mode.IsRegular() || n.IsDir()) }

// Flags returns n's inode flags.
func (n *Node) Flags() uint32 { return n.flags.Load() }

// immutable and appendOnly say which of the enforced flags n carries.
func (n *Node) immutable() bool  { return n.flags.Load()&FlagImmutable != 0 }
func (n *Node) appendOnly() bool { return n.flags.Load()&FlagAppend != 0 }

// SetFlags sets n's inode flags for c as Linux's vfs_fileattr_set and
// shmem_fileattr_set do: EROFS on a read-only mount, EPERM unless c owns
// n, EPERM when immutable or append-only would change without
// CAP_LINUX_IMMUTABLE (mayImmutable), EOPNOTSUPP for a flag tmpfs does
// not keep. The change time moves.
func SetFlags(n *Node, c *Cred, flags uint32, mayImmutable bool) error {
	if !n.HasFlags() {
		return unix.ENOTTY
	}
	if err := ReadOnlyFS(n); err != nil {
		return err
	}
	if !c.Owns(n) {
		return unix.EPERM
	}
	if (flags^n.Flags())&(FlagImmutable|FlagAppend) != 0 && !mayImmutable {
		return unix.EPERM
	}
	if flags&^tmpfsFlags != 0 {
		return unix.EOPNOTSUPP
	}
	n.flags.Store(flags)
	n.touchChange()
	return nil
}

// mayModify refuses (EPERM) what neither an immutable nor an
// append-only n allows: a change of its mode, owner, given times or
// extended attributes, a new name, its removal.
func mayModify(n *Node) error {
	if n.immutable() || n.appendOnly() {
		return unix.EPERM
	}
	return nil
}

// MayOpen checks an open of n as o asks beyond permission, as Linux's
// may_open: EPERM when n is append-only and the open writes without
// O_APPEND or truncates.
func MayOpen(n *Node, o OpenFlags) error {
	if n.appendOnly() && (o.Want&MayWrite != 0 && !o.Append || o.Trunc) {
		return unix.EPERM
	}
	return nil
}

// MayTruncate checks a truncate: EPERM for an append-only n. (An
// immutable file is refused write permission first, by truncate(2)'s
// Access; ftruncate on a description opened before the flag was set
// truncates it, as on Linux.)
func MayTruncate(n *Node) error {
	if n.appendOnly() {
		return unix.EPERM
	}
	return nil
}

// MayAllocate checks fallocate on n: EPERM when n is immutable, or when
// the mode does more than allocate (allocateOnly false: punch, zero,
// collapse, insert) and n is append-only.
func MayAllocate(n *Node, allocateOnly bool) error {
	if n.appendOnly() && !allocateOnly || n.immutable() {
		return unix.EPERM
	}
	return nil
}

// MayChangeAppend checks fcntl(F_SETFL) turning O_APPEND on or off on a
// description of n: EPERM when n is append-only.
func MayChangeAppend(n *Node) error {
	if n.appendOnly() {
		return unix.EPERM
	}
	return nil
}
