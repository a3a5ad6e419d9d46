package syscall

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/syscall/sysno"
)

func init() {
	register(sysno.Clone, sysClone)
	register(sysno.Setuid, sysSetuid)
	register(sysno.Setgid, sysSetgid)
	register(sysno.Setgroups, sysSetgroups)
	register(sysno.Getgroups, sysGetgroups)
	register(sysno.Setresuid, sysSetresuid)
	register(sysno.Setresgid, sysSetresgid)
	register(sysno.Prctl, sysPrctl)
}

// sysClone implements clone(2) for new processes (fork); threads
// (CLONE_VM, CLONE_THREAD) are not supported yet.
func sysClone(t *kernel.Task, a Args) (uint64, error) {
	flags := a[0]
	const known = unix.CLONE_CHILD_SETTID | unix.CLONE_CHILD_CLEARTID | unix.CLONE_PARENT_SETTID | 0xff
	if flags&^known != 0 {
		return 0, unix.ENOSYS
	}
	if flags&0xff != uint64(unix.SIGCHLD) {
		return 0, unix.EINVAL
	}
	child, err := t.Fork(uintptr(a[1]), uintptr(a[4]), flags&unix.CLONE_CHILD_SETTID != 0, flags&unix.CLONE_CHILD_CLEARTID != 0)
	if err != nil {
		return 0, err
	}
	if flags&unix.CLONE_PARENT_SETTID != 0 {
		b := make([]byte, 4)
		binary.LittleEndian.PutUint32(b, uint32(child.TID))
		if err := copyOut(t, a[2], b); err != nil {
			return 0, err
		}
	}
	return uint64(child.TID), nil
}

// Credentials: root may take any identity; others only their own.
func mayChange(t *kernel.Task, id uint32, own ...uint32) bool {
	if t.Proc.EUID == 0 {
		return true
	}
	for _, o := range own {
		if id == o {
			return true
		}
	}
	return false
}

// sysSetuid implements setuid(2).
func sysSetuid(t *kernel.Task, a Args) (uint64, error) {
	p := t.Proc
	id := uint32(a[0])
	if !mayChange(t, id, p.UID) {
		return 0, unix.EPERM
	}
	if p.EUID == 0 {
		p.UID = id
	}
	p.EUID = id
	return 0, nil
}

// sysSetgid implements setgid(2).
func sysSetgid(t *kernel.Task, a Args) (uint64, error) {
	p := t.Proc
	id := uint32(a[0])
	if !mayChange(t, id, p.GID) {
		return 0, unix.EPERM
	}
	if p.EUID == 0 {
		p.GID = id
	}
	p.EGID = id
	return 0, nil
}

// sysSetresuid implements setresuid(2) (-1 keeps a value).
func sysSetresuid(t *kernel.Task, a Args) (uint64, error) {
	p := t.Proc
	for _, v := range a[:3] {
		if uint32(v) != ^uint32(0) && !mayChange(t, uint32(v), p.UID, p.EUID) {
			return 0, unix.EPERM
		}
	}
	if uint32(a[0]) != ^uint32(0) {
		p.UID = uint32(a[0])
	}
	if uint32(a[1]) != ^uint32(0) {
		p.EUID = uint32(a[1])
	}
	return 0, nil
}

// sysSetresgid implements setresgid(2) (-1 keeps a value).
func sysSetresgid(t *kernel.Task, a Args) (uint64, error) {
	p := t.Proc
	for _, v := range a[:3] {
		if uint32(v) != ^uint32(0) && !mayChange(t, uint32(v), p.GID, p.EGID) {
			return 0, unix.EPERM
		}
	}
	if uint32(a[0]) != ^uint32(0) {
		p.GID = uint32(a[0])
	}
	if uint32(a[1]) != ^uint32(0) {
		p.EGID = uint32(a[1])
	}
	return 0, nil
}

// sysSetgroups implements setgroups(2).
func sysSetgroups(t *kernel.Task, a Args) (uint64, error) {
	if t.Proc.EUID != 0 {
		return 0, unix.EPERM
	}
	if a[0] > 65536 {
		return 0, unix.EINVAL
	}
	b := make([]byte, 4*a[0])
	if err := copyIn(t, a[1], b); err != nil {
		return 0, err
	}
	groups := make([]uint32, a[0])
	for i := range groups {
		groups[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	t.Proc.Groups = groups
	return 0, nil
}

// sysGetgroups implements getgroups(2).
func sysGetgroups(t *kernel.Task, a Args) (uint64, error) {
	g := t.Proc.Groups
	if a[0] == 0 {
		return uint64(len(g)), nil
	}
	if a[0] < uint64(len(g)) {
		return 0, unix.EINVAL
	}
	b := make([]byte, 4*len(g))
	for i, v := range g {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return uint64(len(g)), copyOut(t, a[1], b)
}

// sysPrctl implements prctl(2) for what servers set: dumpability, the
// keep-capabilities flag and the process name.
func sysPrctl(t *kernel.Task, a Args) (uint64, error) {
	switch a[0] {
	case unix.PR_SET_DUMPABLE, unix.PR_SET_KEEPCAPS, unix.PR_SET_NAME, unix.PR_SET_PDEATHSIG:
		return 0, nil
	case unix.PR_GET_DUMPABLE:
		return 1, nil
	}
	return 0, unix.EINVAL
}
