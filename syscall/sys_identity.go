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
	register(sysno.Setreuid, sysSetreuid)
	register(sysno.Setregid, sysSetregid)
	register(sysno.Getresuid, sysGetresuid)
	register(sysno.Getresgid, sysGetresgid)
	register(sysno.Prctl, sysPrctl)
}

// sysClone implements clone(2): new processes (fork, vfork, CLONE_VM) and
// threads (CLONE_THREAD). Its riscv64 argument order is flags, stack,
// parent_tid, tls, child_tid. Its flags are 32 bits, as on Linux: the
// flags above them (CLONE_CLEAR_SIGHAND) are clone3's.
func sysClone(t *kernel.Task, a Args) (uint64, error) {
	flags := uint64(uint32(a[0]))
	child, err := t.Clone(kernel.CloneArgs{Flags: flags &^ 0xff, ExitSignal: int(flags & 0xff),
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
// The pidfd field counts only with CLONE_PIDFD (refused: no pidfds here);
// glibc's pthread_create fills it in anyway, as Linux allows.
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
	case flags&0xff != 0, exitSignal > 64, field(8) != 0 || field(9) != 0,
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

// Credentials follow Linux's rules, with "privileged" meaning an effective
// uid of 0 (CAP_SETUID, CAP_SETGID): a privileged process sets any id;
// another may only move its ids among its real, effective and saved ones.
// noID is -1, which leaves an id as it is.
const noID = ^uint32(0)

// ids are a process's real, effective and saved user or group ids.
type ids struct{ real, eff, saved *uint32 }

func userIDs(p *kernel.Process) ids  { return ids{&p.UID, &p.EUID, &p.SUID} }
func groupIDs(p *kernel.Process) ids { return ids{&p.GID, &p.EGID, &p.SGID} }

// own reports whether id is one of the three.
func (s ids) own(id uint32) bool { return id == *s.real || id == *s.eff || id == *s.saved }

// setID implements setuid(2) and setgid(2): privileged, all three ids;
// otherwise the effective id, to the real or saved one.
func setID(t *kernel.Task, s ids, id uint32) error {
	switch {
	case id == noID:
		return unix.EINVAL
	case t.Proc.EUID == 0:
		*s.real, *s.eff, *s.saved = id, id, id
	case id == *s.real || id == *s.saved:
		*s.eff = id
	default:
		return unix.EPERM
	}
	return nil
}

// setREID implements setreuid(2) and setregid(2): the real id may become
// the effective one, the effective id any of the three; when the real id
// is set or the effective one moves away from it, the saved id follows
// the effective one.
func setREID(t *kernel.Task, s ids, r, e uint32) error {
	if t.Proc.EUID != 0 {
		if r != noID && r != *s.real && r != *s.eff || e != noID && !s.own(e) {
			return unix.EPERM
		}
	}
	oldReal := *s.real
	if r != noID {
		*s.real = r
	}
	if e != noID {
		*s.eff = e
	}
	if r != noID || e != noID && e != oldReal {
		*s.saved = *s.eff
	}
	return nil
}

// setRESID implements setresuid(2) and setresgid(2): unprivileged, each
// new id must be one of the three old ones.
func setRESID(t *kernel.Task, s ids, r, e, sv uint32) error {
	if t.Proc.EUID != 0 {
		for _, id := range []uint32{r, e, sv} {
			if id != noID && !s.own(id) {
				return unix.EPERM
			}
		}
	}
	for _, f := range []struct {
		dst *uint32
		id  uint32
	}{{s.real, r}, {s.eff, e}, {s.saved, sv}} {
		if f.id != noID {
			*f.dst = f.id
		}
	}
	return nil
}

// getRESID implements getresuid(2) and getresgid(2).
func getRESID(t *kernel.Task, s ids, a Args) error {
	for i, id := range []uint32{*s.real, *s.eff, *s.saved} {
		b := []byte{byte(id), byte(id >> 8), byte(id >> 16), byte(id >> 24)}
		if err := copyOut(t, a[i], b); err != nil {
			return err
		}
	}
	return nil
}

// changingUser runs a change of the user ids and tells the process when
// its real uid changed (RLIMIT_NPROC's check at the next execve).
func changingUser(t *kernel.Task, change func(ids) error) error {
	old := t.Proc.UID
	err := change(userIDs(t.Proc))
	if t.Proc.UID != old {
		t.Proc.UserChanged()
	}
	return err
}

// sysSetuid implements setuid(2).
func sysSetuid(t *kernel.Task, a Args) (uint64, error) {
	return 0, changingUser(t, func(s ids) error { return setID(t, s, uint32(a[0])) })
}

// sysSetgid implements setgid(2).
func sysSetgid(t *kernel.Task, a Args) (uint64, error) {
	return 0, setID(t, groupIDs(t.Proc), uint32(a[0]))
}

// sysSetreuid implements setreuid(2).
func sysSetreuid(t *kernel.Task, a Args) (uint64, error) {
	return 0, changingUser(t, func(s ids) error { return setREID(t, s, uint32(a[0]), uint32(a[1])) })
}

// sysSetregid implements setregid(2).
func sysSetregid(t *kernel.Task, a Args) (uint64, error) {
	return 0, setREID(t, groupIDs(t.Proc), uint32(a[0]), uint32(a[1]))
}

// sysSetresuid implements setresuid(2).
func sysSetresuid(t *kernel.Task, a Args) (uint64, error) {
	return 0, changingUser(t, func(s ids) error { return setRESID(t, s, uint32(a[0]), uint32(a[1]), uint32(a[2])) })
}

// sysSetresgid implements setresgid(2).
func sysSetresgid(t *kernel.Task, a Args) (uint64, error) {
	return 0, setRESID(t, groupIDs(t.Proc), uint32(a[0]), uint32(a[1]), uint32(a[2]))
}

// sysGetresuid implements getresuid(2).
func sysGetresuid(t *kernel.Task, a Args) (uint64, error) {
	return 0, getRESID(t, userIDs(t.Proc), a)
}

// sysGetresgid implements getresgid(2).
func sysGetresgid(t *kernel.Task, a Args) (uint64, error) {
	return 0, getRESID(t, groupIDs(t.Proc), a)
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
