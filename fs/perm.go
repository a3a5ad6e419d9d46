package fs

import (
	"io/fs"
	"slices"

	"golang.org/x/sys/unix"
)

// Cred is who asks for a tree operation: the ids permission checks use
// (Linux's fsuid and fsgid, which follow the effective ids) and the
// supplementary groups. A nil *Cred is the kernel itself, which is never
// refused.
type Cred struct {
	UID, GID uint32
	Groups   []uint32
	// Resolve confines the operation's walks (openat2); nil: none.
	Resolve *Resolve
	// Landlock is the caller's Landlock domain; nil: unrestricted.
	Landlock *LandlockDomain
	// Mounts is the caller's mount namespace; nil: the tree's initial one.
	Mounts *MountNS
}

// resolve is c's Resolve, nil for the kernel.
func (c *Cred) resolve() *Resolve {
	if c == nil {
		return nil
	}
	return c.Resolve
}

// Join resolves p from dir as c's walks do (Resolve.Join): an absolute p
// under a chrooted caller's root.
func (c *Cred) Join(dir, p string) (string, error) { return c.resolve().Join(dir, p) }

// InGroup reports whether gid is the caller's group or one of its
// supplementary groups.
func (c *Cred) InGroup(gid uint32) bool {
	return c.GID == gid || slices.Contains(c.Groups, gid)
}

// Privileged reports whether c holds root's capabilities (CAP_DAC_OVERRIDE,
// CAP_FOWNER, CAP_CHOWN, CAP_FSETID): the kernel or uid 0.
func (c *Cred) Privileged() bool { return c == nil || c.UID == 0 }

// Owns reports whether c may act as n's owner: chmod, utimes, the sticky
// bit's exemption.
func (c *Cred) Owns(n *Node) bool { return c.Privileged() || c.UID == n.UID }

// Access masks, as in access(2) and the permission bits of one class.
const (
	MayExec  = 1
	MayWrite = 2
	MayRead  = 4
)

// Access checks that c may do what mask asks of n, as Linux's
// generic_permission does: the owner's bits for the owner, the group's for
// a member of the file's group, the others' for everyone else; root reads
// and writes anything and searches any directory, but executes a file only
// when some execute bit is set. It returns unix.EACCES when refused.
func Access(n *Node, c *Cred, mask int) error {
	if mask&MayWrite != 0 && (n.Mode.IsRegular() || n.IsDir() || n.Mode&fs.ModeSymlink != 0) && n.onReadOnlyFS() {
		return unix.EROFS // before any permission, as Linux's sb_permission
	}
	if mask&MayWrite != 0 && n.immutable() {
		return unix.EPERM // even for root, as Linux's inode_permission
	}
	mode := uint32(n.Mode.Perm())
	if c.Privileged() {
		if n.setting && uint32(mask)&^(mode>>6)&7 != 0 {
			return unix.EACCES // a setting holds root to its owner's bits, as Linux's sysctl_perm
		}
		if mask&MayExec == 0 || n.IsDir() || mode&0o111 != 0 {
			return nil
		}
		return unix.EACCES
	}
	switch {
	case c.UID == n.UID:
		mode >>= 6
	case c.InGroup(n.GID):
		mode >>= 3
	}
	if uint32(mask)&^mode&7 != 0 {
		return unix.EACCES
	}
	return nil
}

// mayDelete checks that c may remove or replace the entry victim of dir:
// write and search on dir and, in a sticky directory (/tmp), ownership of
// the directory or of the entry (EPERM), as Linux's may_delete does; an
// append-only directory keeps its entries, and an immutable or
// append-only entry stays (EPERM).
func mayDelete(dir, victim *Node, c *Cred) error {
	if err := Access(dir, c, MayWrite|MayExec); err != nil {
		return err
	}
	if dir.appendOnly() {
		return unix.EPERM
	}
	if dir.Mode&fs.ModeSticky != 0 && !c.Owns(dir) && !c.Owns(victim) {
		return unix.EPERM
	}
	return mayModify(victim)
}

// mayLink applies Linux's protected_hardlinks (on by default): a caller
// who neither owns n nor is privileged may hard-link only a regular file
// that is not set-user-ID, not executable set-group-ID, and that it may
// read and write (EPERM otherwise).
func mayLink(n *Node, c *Cred) error {
	if c.Owns(n) {
		return nil
	}
	if !n.Mode.IsRegular() || n.Mode&fs.ModeSetuid != 0 || n.Mode&fs.ModeSetgid != 0 && n.Mode&0o010 != 0 ||
		Access(n, c, MayRead|MayWrite) != nil {
		return unix.EPERM
	}
	return nil
}

// MaySetTimes checks that c may change n's times (utimensat): to given
// values only as owner (EPERM), and not on an immutable or append-only
// file; to now as owner or with write permission (EACCES), and not on an
// immutable file (Linux's may_setattr).
func MaySetTimes(n *Node, c *Cred, given bool) error {
	if err := ReadOnlyFS(n); err != nil {
		return err
	}
	switch {
	case given && mayModify(n) != nil, n.immutable():
		return unix.EPERM
	case c.Owns(n):
		return nil
	case given:
		return unix.EPERM
	}
	return Access(n, c, MayWrite)
}

// ModeFromUnix converts st_mode's permission and special bits (07777) to a
// FileMode.
func ModeFromUnix(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	if mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// UnixPerm converts a FileMode's permission and special bits to st_mode's.
func UnixPerm(m fs.FileMode) uint32 {
	mode := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		mode |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		mode |= unix.S_ISVTX
	}
	return mode
}

// specialBits are the FileMode bits that chmod sets besides ModePerm.
const specialBits = fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// Chmod sets n's permission and special bits (07777 of mode): only its
// owner or root may (EPERM). A caller outside the file's group loses the
// set-group-ID bit, as on Linux. An immutable or append-only file keeps
// its mode (EPERM).
func Chmod(n *Node, c *Cred, mode uint32) error {
	if err := ReadOnlyFS(n); err != nil {
		return err
	}
	if err := mayModify(n); err != nil {
		return err
	}
	if !c.Owns(n) {
		return unix.EPERM
	}
	m := ModeFromUnix(mode)
	if !c.Privileged() && !c.InGroup(n.GID) {
		m &^= fs.ModeSetgid
	}
	n.mu.Lock()
	n.Mode = n.Mode&^(fs.ModePerm|specialBits) | m
	n.mu.Unlock()
	n.touchChange()
	return nil
}

// Chown sets n's owner and group (NoID leaves one as it is), as Linux's
// chown_ok and chgrp_ok allow: root anything; the owner only the group,
// to one of his groups; anyone else nothing (EPERM). A regular file that
// changes hands loses its set-user-ID bit, and its set-group-ID bit when
// group execute is set. An immutable or append-only file keeps its ids
// (EPERM).
func Chown(n *Node, c *Cred, uid, gid uint32) error {
	if err := ReadOnlyFS(n); err != nil {
		return err
	}
	if uid == NoID && gid == NoID {
		n.touchChange()
		return nil
	}
	if err := mayModify(n); err != nil {
		return err
	}
	if !c.Privileged() {
		if c.UID != n.UID || uid != NoID && uid != n.UID || gid != NoID && gid != n.GID && !c.InGroup(gid) {
			return unix.EPERM
		}
	}
	n.mu.Lock()
	if uid != NoID {
		n.UID = uid
	}
	if gid != NoID {
		n.GID = gid
	}
	if (uid != NoID || gid != NoID) && n.Mode.IsRegular() {
		n.Mode &^= fs.ModeSetuid
		if n.Mode&0o010 != 0 {
			n.Mode &^= fs.ModeSetgid
		}
	}
	n.mu.Unlock()
	n.touchChange()
	return nil
}

// NoID is chown's -1: leave the id as it is.
const NoID = ^uint32(0)

// ownNew gives a new node in parent its owner and group: the creator's
// ids, or the parent's group when the parent is set-group-ID (a new
// directory then inherits the bit). Without privileges outside that group,
// a new file does not keep the set-group-ID bit.
func ownNew(n, parent *Node, c *Cred) {
	if c != nil {
		n.UID, n.GID = c.UID, c.GID
	}
	if parent.Mode&fs.ModeSetgid != 0 {
		n.GID = parent.GID
		if n.IsDir() {
			n.Mode |= fs.ModeSetgid
		}
	}
	if !n.IsDir() && n.Mode&fs.ModeSetgid != 0 && !c.Privileged() && !c.InGroup(n.GID) {
		n.Mode &^= fs.ModeSetgid
	}
}
