package syscall

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/syscall/sysno"
)

func init() {
	register(sysno.Clone, sysClone)
	register(sysno.Clone3, sysClone3)
	register(sysno.Setuid, sysSetuid)
	register(sysno.Setgid, sysSetgid)
	register(sysno.Setgroups, sysSetgroups)
	register(sysno.Getgroups, sysGetgroups)
	register(sysno.Setresuid, sysSetresuid)
	register(sysno.Setresgid, sysSetresgid)
	register(sysno.Prctl, sysPrctl)
}

// sysClone implements clone(2): new processes (fork, vfork, CLONE_VM) and
// threads (CLONE_THREAD). Its riscv64 argument order is flags, stack,
// parent_tid, tls, child_tid.
func sysClone(t *kernel.Task, a Args) (uint64, error) {
	child, err := t.Clone(kernel.CloneArgs{Flags: a[0] &^ 0xff, ExitSignal: int(a[0] & 0xff),
		Stack: uintptr(a[1]), ParentTID: uintptr(a[2]), TLS: uintptr(a[3]), ChildTID: uintptr(a[4])})
	if err != nil {
		return 0, err
	}
	return uint64(child.TID), nil
}

// struct clone_args sizes: the first version, and the last one known here
// (set_tid, cgroup).
const (
	cloneArgsSize0   = 64
	cloneArgsSizeMax = 88
)

// sysClone3 implements clone3(2) (glibc's pthread_create tries it first).
// set_tid and cgroup placement need privileges this kernel does not model.
func sysClone3(t *kernel.Task, a Args) (uint64, error) {
	size := a[1]
	switch {
	case size < cloneArgsSize0:
		return 0, unix.EINVAL
	case size > 4096:
		return 0, unix.E2BIG
	}
	b := make([]byte, size)
	if err := copyIn(t, a[0], b); err != nil {
		return 0, err
	}
	for _, c := range b[min(size, cloneArgsSizeMax):] {
		if c != 0 {
			return 0, unix.E2BIG
		}
	}
	b = append(b, make([]byte, cloneArgsSizeMax)...)
	field := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	flags, exitSignal, stack, stackSize := field(0), field(4), field(5), field(6)
	switch {
	case flags&0xff != 0, exitSignal > 64, field(1) != 0, field(8) != 0 || field(9) != 0,
		(stack == 0) != (stackSize == 0),
		flags&unix.CLONE_THREAD != 0 && exitSignal != 0:
		return 0, unix.EINVAL
	}
	sp := uintptr(0)
	if stack != 0 {
		sp = uintptr(stack + stackSize)
	}
	child, err := t.Clone(kernel.CloneArgs{Flags: flags, ExitSignal: int(exitSignal), Stack: sp,
		ChildTID: uintptr(field(2)), ParentTID: uintptr(field(3)), TLS: uintptr(field(7))})
	if err != nil {
		return 0, err
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
