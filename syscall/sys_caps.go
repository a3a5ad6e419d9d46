package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Capget, sysCapget)
	register(sysno.Capset, sysCapset)
}

// capVersion checks a capability header's version, as Linux's
// cap_validate_magic: the number of data structures it passes (1 for
// version 1, 2 for versions 2 and 3); for another, version 3 is written
// back and the answer is EINVAL.
func capVersion(t *kernel.Task, header uint64) (int, error) {
	var version uint32
	if err := copyInStruct(t, header, &version); err != nil {
		return 0, err
	}
	switch version {
	case unix.LINUX_CAPABILITY_VERSION_1:
		return 1, nil
	case unix.LINUX_CAPABILITY_VERSION_2, unix.LINUX_CAPABILITY_VERSION_3:
		return 2, nil
	}
	if err := copyOutStruct(t, header, uint32(unix.LINUX_CAPABILITY_VERSION_3)); err != nil {
		return 0, err
	}
	return 0, unix.EINVAL
}

// sysCapget implements capget(2). A null data pointer asks for the
// preferred version only: a bad version then is no error.
func sysCapget(t *kernel.Task, a Args) (uint64, error) {
	n, err := capVersion(t, a[0])
	if a[1] == 0 || err != nil {
		if a[1] == 0 && err == unix.EINVAL {
			return 0, nil
		}
		return 0, err
	}
	var h linux.CapUserHeader
	if err := copyInStruct(t, a[0], &h); err != nil {
		return 0, err
	}
	target := t.Proc
	switch {
	case h.Pid < 0:
		return 0, unix.EINVAL
	case h.Pid != 0 && int(h.Pid) != t.Gettid():
		o := t.FindTask(int(h.Pid))
		if o == nil {
			return 0, unix.ESRCH
		}
		target = o.Proc
	}
	c := target.Caps
	data := []linux.CapUserData{
		{Effective: uint32(c.Effective), Permitted: uint32(c.Permitted), Inheritable: uint32(c.Inheritable)},
		{Effective: uint32(c.Effective >> 32), Permitted: uint32(c.Permitted >> 32), Inheritable: uint32(c.Inheritable >> 32)},
	}
	return 0, copyOutStructs(t, a[1], data[:n])
}

// sysCapset implements capset(2) on the caller itself, with Linux's
// rules (cap_capset): no new permitted capability, the effective set
// within the permitted one, the inheritable one within the old
// inheritable and bounding sets, and within the old inheritable and
// permitted ones without CAP_SETPCAP.
func sysCapset(t *kernel.Task, a Args) (uint64, error) {
	n, err := capVersion(t, a[0])
	if err != nil {
		return 0, err
	}
	var h linux.CapUserHeader
	if err := copyInStruct(t, a[0], &h); err != nil {
		return 0, err
	}
	if h.Pid != 0 && int(h.Pid) != t.Gettid() {
		return 0, unix.EPERM
	}
	data := make([]linux.CapUserData, 2)
	if err := copyIn(t, a[1], linux.SliceAsBytes(data[:n])); err != nil {
		return 0, err
	}
	join := func(lo, hi uint32) uint64 { return (uint64(hi)<<32 | uint64(lo)) & kernel.CapAll }
	eff := join(data[0].Effective, data[1].Effective)
	perm := join(data[0].Permitted, data[1].Permitted)
	inh := join(data[0].Inheritable, data[1].Inheritable)
	old := t.Proc.Caps
	if old.Effective&(1<<kernel.CapSetPCap) == 0 && inh&^(old.Inheritable|old.Permitted) != 0 ||
		inh&^(old.Inheritable|old.Bounding) != 0 || perm&^old.Permitted != 0 || eff&^perm != 0 {
		return 0, unix.EPERM
	}
	t.Proc.Caps.Effective, t.Proc.Caps.Permitted, t.Proc.Caps.Inheritable = eff, perm, inh
	return 0, nil
}
