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

// Allocate implements fallocate(2) on the file: mode 0 makes the file at
// least off+length long, FALLOC_FL_KEEP_SIZE alone does nothing more
// (the memory is taken as it is written), and with FALLOC_FL_PUNCH_HOLE
// the range reads as zeros; other modes are EOPNOTSUPP.
func (f *NodeFile) Allocate(mode uint32, off, length int64) error {
	n := f.node
	if n.IsDir() {
		return unix.EISDIR
	}
	switch mode {
	case 0, unix.FALLOC_FL_KEEP_SIZE, unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE:
	default:
		return unix.EOPNOTSUPP
	}
	end := off + length
	if end < off {
		return unix.EFBIG
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	size := n.sizeLocked()
	if mode&unix.FALLOC_FL_PUNCH_HOLE != 0 {
		if n.seals&writeSeals != 0 {
			return unix.EPERM
		}
		n.pullMapped()
		zeros := make([]byte, pageSize)
		for at := off; at < min(end, size); at += pageSize {
			if err := n.writeAtLocked(zeros[:min(int64(pageSize), min(end, size)-at)], at); err != nil {
				return err
			}
		}
		if n.mapped != nil {
			n.mapped.Push(off, end)
		}
		return nil
	}
	if mode == 0 && end > size {
		if n.seals&unix.F_SEAL_GROW != 0 {
			return unix.EPERM
		}
		return n.truncateLocked(end)
	}
	return nil
}
