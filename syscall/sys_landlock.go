package syscall

import (
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.LandlockCreateRuleset, sysLandlockCreateRuleset)
	register(sysno.LandlockAddRule, sysLandlockAddRule)
	register(sysno.LandlockRestrictSelf, sysLandlockRestrictSelf)
}

// Landlock's rule types and create_ruleset's flag.
const (
	landlockRulePathBeneath   = 1
	landlockRuleNetPort       = 2
	landlockCreateRulesetVers = 1 // LANDLOCK_CREATE_RULESET_VERSION
)

// landlockAttrMin is the oldest landlock_ruleset_attr: handled_access_fs.
const landlockAttrMin = 8

// sysLandlockCreateRuleset implements landlock_create_ruleset(2): the ABI
// version for LANDLOCK_CREATE_RULESET_VERSION with no attributes, else a
// new ruleset open close-on-exec. The attributes are read as Linux's
// copy_min_struct_from_user: EFAULT for none, EINVAL when shorter than
// the first version's, E2BIG past a page or for a non-zero unknown tail.
func sysLandlockCreateRuleset(t *kernel.Task, a Args) (uint64, error) {
	addr, size, flags := a[0], a[1], a[2]
	if flags != 0 {
		if flags == landlockCreateRulesetVers && addr == 0 && size == 0 {
			return fs.LandlockABI, nil
		}
		return 0, unix.EINVAL
	}
	var attr linux.LandlockRulesetAttr
	known := uint64(unsafe.Sizeof(attr))
	switch {
	case addr == 0:
		return 0, unix.EFAULT
	case size < landlockAttrMin:
		return 0, unix.EINVAL
	case size > mm.PageSize:
		return 0, unix.E2BIG
	case size > known:
		tail := make([]byte, size-known)
		if err := copyIn(t, addr+known, tail); err != nil {
			return 0, err
		}
		if slices.ContainsFunc(tail, func(b byte) bool { return b != 0 }) {
			return 0, unix.E2BIG
		}
	}
	if err := copyIn(t, addr, linux.AsBytes(&attr)[:min(size, known)]); err != nil {
		return 0, err
	}
	if attr.HandledAccessFS&^fs.LandlockFSAll != 0 || attr.HandledAccessNet&^fs.LandlockNetAll != 0 ||
		attr.Scoped&^fs.LandlockScopeAll != 0 {
		return 0, unix.EINVAL
	}
	r, err := fs.NewLandlockRuleset(attr.HandledAccessFS, attr.HandledAccessNet, attr.Scoped)
	if err != nil {
		return 0, err
	}
	fd, err := t.Proc.Files.Open(r, unix.O_RDWR, true)
	return uint64(fd), err
}

// rulesetOf returns the ruleset open on fd and its description, with the
// reference the caller drops: EBADFD for any other file.
func rulesetOf(t *kernel.Task, fd uint64) (*fs.LandlockRuleset, *fs.Description, error) {
	return fileOf[*fs.LandlockRuleset](t, fd, unix.EBADFD)
}

// sysLandlockAddRule implements landlock_add_rule(2): a path-beneath rule
// names a file or directory by a descriptor (O_PATH will do; EBADFD for
// one that names no node), a port rule a TCP port.
func sysLandlockAddRule(t *kernel.Task, a Args) (uint64, error) {
	if a[3] != 0 {
		return 0, unix.EINVAL
	}
	r, d, err := rulesetOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	switch a[1] {
	case landlockRulePathBeneath:
		var attr linux.LandlockPathBeneathAttr
		if err := copyInStruct(t, a[2], &attr); err != nil {
			return 0, err
		}
		access := attr.AllowedAccess()
		if access == 0 {
			return 0, unix.ENOMSG
		}
		if access&^r.HandledFS != 0 {
			return 0, unix.EINVAL
		}
		pd, err := t.Proc.Files.Get(int(attr.ParentFd))
		if err != nil {
			return 0, err
		}
		defer pd.DecRef()
		n := pd.Node()
		if n == nil {
			return 0, unix.EBADFD
		}
		return 0, r.AddPathRule(n, access)
	case landlockRuleNetPort:
		var attr linux.LandlockNetPortAttr
		if err := copyInStruct(t, a[2], &attr); err != nil {
			return 0, err
		}
		return 0, r.AddPortRule(attr.Port, attr.AllowedAccess)
	}
	return 0, unix.EINVAL
}

// sysLandlockRestrictSelf implements landlock_restrict_self(2).
func sysLandlockRestrictSelf(t *kernel.Task, a Args) (uint64, error) {
	if err := t.LandlockMayRestrict(); err != nil {
		return 0, err
	}
	if a[1] != 0 {
		return 0, unix.EINVAL
	}
	r, d, err := rulesetOf(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return 0, t.LandlockRestrict(r)
}
