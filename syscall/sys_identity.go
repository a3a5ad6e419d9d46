package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Getuid, func(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Proc.UID), nil })
	register(sysno.Geteuid, func(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Proc.EUID), nil })
	register(sysno.Getgid, func(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Proc.GID), nil })
	register(sysno.Getegid, func(t *kernel.Task, a Args) (uint64, error) { return uint64(t.Proc.EGID), nil })
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
	register(sysno.Setfsuid, func(t *kernel.Task, a Args) (uint64, error) {
		old := setFSID(t, userIDs(t.Proc), uint32(a[0]))
		t.Proc.FixCapsAfterSetfsuid(uint32(old))
		return old, nil
	})
	register(sysno.Setfsgid, func(t *kernel.Task, a Args) (uint64, error) { return setFSID(t, groupIDs(t.Proc), uint32(a[0])), nil })
}

// Credentials follow Linux's rules, with "privileged" meaning an effective
// uid of 0 (CAP_SETUID, CAP_SETGID): a privileged process sets any id;
// another may only move its ids among its real, effective and saved ones.
// noID is -1, which leaves an id as it is.
const noID = ^uint32(0)

// ids are a process's real, effective, saved and file-system user or
// group ids. Every change of them moves the file-system id to the
// effective one, as Linux's do.
type ids struct{ real, eff, saved, fs *uint32 }

func userIDs(p *kernel.Process) ids  { return ids{&p.UID, &p.EUID, &p.SUID, &p.FSUID} }
func groupIDs(p *kernel.Process) ids { return ids{&p.GID, &p.EGID, &p.SGID, &p.FSGID} }

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
	*s.fs = *s.eff
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
	*s.fs = *s.eff
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
	*s.fs = *s.eff
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

// changingUser runs a change of the user ids, tells the process when
// its real uid changed (RLIMIT_NPROC's check at the next execve) and
// adjusts its capabilities as Linux does.
func changingUser(t *kernel.Task, change func(ids) error) error {
	p := t.Proc
	old, oldEff, oldSaved := p.UID, p.EUID, p.SUID
	err := change(userIDs(p))
	if p.UID != old {
		p.UserChanged()
	}
	p.FixCapsAfterSetuid(old, oldEff, oldSaved)
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
	groups := make([]uint32, a[0])
	if err := copyIn(t, a[1], linux.SliceAsBytes(groups)); err != nil {
		return 0, err
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
	return uint64(len(g)), copyOutStructs(t, a[1], g)
}

// setFSID implements setfsuid(2) and setfsgid(2): the file-system id
// becomes id when it is the real, effective, saved or file-system id, or
// the caller is privileged; the old id is returned whatever happened
// (-1, which no id is, only asks for it).
func setFSID(t *kernel.Task, s ids, id uint32) uint64 {
	old := *s.fs
	if id != noID && (s.own(id) || id == old || t.Proc.EUID == 0) {
		*s.fs = id
	}
	return uint64(old)
}
