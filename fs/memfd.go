package fs

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// memfd files (memfd_create): regular files with no name, and their
// seals (F_ADD_SEALS), which Linux keeps on shmem inodes only.

// allSeals are the seals F_ADD_SEALS knows (F_SEAL_SEAL..F_SEAL_EXEC).
const allSeals = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE |
	unix.F_SEAL_FUTURE_WRITE | unix.F_SEAL_EXEC

// writeSeals forbid writing the file's contents.
const writeSeals = unix.F_SEAL_WRITE | unix.F_SEAL_FUTURE_WRITE

// NewMemfd returns a memfd file of t owned by c: mode 0777 (0666 with
// noExec), sealable when allowSealing (else sealed with F_SEAL_SEAL).
func NewMemfd(t *Tree, c *Cred, allowSealing, noExec bool) *Node {
	perm := fs.FileMode(0o777)
	var seals uint32 = unix.F_SEAL_SEAL
	if allowSealing {
		seals = 0
	}
	if noExec {
		perm = 0o666
		seals |= unix.F_SEAL_EXEC
	}
	n := &Node{Mode: perm, Ino: nextIno.Add(1), tree: t, memfd: true, seals: seals}
	if c != nil {
		n.UID, n.GID = c.UID, c.GID
	}
	n.Touch()
	return n
}

// Seals returns a regular file's seals: a memfd's, F_SEAL_SEAL for
// another (a tmpfs file, as Linux's shmem files); EINVAL for any other
// kind of file.
func (n *Node) Seals() (uint32, error) {
	if !n.Mode.IsRegular() || n.Generate != nil {
		return 0, unix.EINVAL
	}
	if !n.memfd {
		return unix.F_SEAL_SEAL, nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.seals, nil
}

// AddSeals adds seals to a memfd: EPERM once F_SEAL_SEAL is set (always
// for other files), EBUSY for F_SEAL_WRITE while a shared mapping might
// write.
func (n *Node) AddSeals(seals uint32) error {
	if seals&^allSeals != 0 {
		return unix.EINVAL
	}
	if !n.memfd {
		return unix.EPERM
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seals&unix.F_SEAL_SEAL != 0 {
		return unix.EPERM
	}
	if seals&unix.F_SEAL_WRITE != 0 && n.seals&unix.F_SEAL_WRITE == 0 && n.mapped != nil && n.mapped.Shared() {
		return unix.EBUSY
	}
	n.seals |= seals
	return nil
}

// checkWriteLocked refuses a write of [off, end) that the seals forbid.
// n.mu is held.
func (n *Node) checkWriteLocked(off, end int64) error {
	switch {
	case n.seals&writeSeals != 0:
		return unix.EPERM
	case n.seals&unix.F_SEAL_GROW != 0 && end > n.sizeLocked():
		return unix.EPERM
	}
	return nil
}

// checkResizeLocked refuses a change of size the seals forbid. n.mu is
// held.
func (n *Node) checkResizeLocked(size int64) error {
	old := n.sizeLocked()
	if size < old && n.seals&unix.F_SEAL_SHRINK != 0 || size > old && n.seals&unix.F_SEAL_GROW != 0 {
		return unix.EPERM
	}
	return nil
}

// WriteSealed reports whether the seals forbid writes (a shared mapping
// may then not be writable).
func (n *Node) WriteSealed() bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.seals&writeSeals != 0
}
