package linux

// LandlockRulesetAttr is struct landlock_ruleset_attr of ABI 6; older
// callers pass a prefix of it (handled_access_fs at least).
type LandlockRulesetAttr struct {
	HandledAccessFS, HandledAccessNet, Scoped uint64
}

// LandlockPathBeneathAttr is struct landlock_path_beneath_attr, which is
// packed: allowed_access, a __u64, at offset 0 and parent_fd at 8, 12
// bytes in all, so the access is two words here.
type LandlockPathBeneathAttr struct {
	Allowed  [2]uint32
	ParentFd int32
}

// AllowedAccess is allowed_access.
func (a *LandlockPathBeneathAttr) AllowedAccess() uint64 {
	return uint64(a.Allowed[0]) | uint64(a.Allowed[1])<<32
}

// LandlockNetPortAttr is struct landlock_net_port_attr.
type LandlockNetPortAttr struct {
	AllowedAccess, Port uint64
}
