package syscall

import (
	"errors"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/keys"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.AddKey, sysAddKey)
	register(sysno.RequestKey, sysRequestKey)
	register(sysno.Keyctl, sysKeyctl)
}

// copyInKeyString reads a string of at most max bytes, its NUL included,
// as Linux's strndup_user: EFAULT when it faults first, EINVAL when it is
// longer.
func copyInKeyString(t *kernel.Task, addr uint64, max int) (string, error) {
	t.Proc.Lock()
	defer t.Proc.Unlock()
	s, err := t.Proc.AS.CopyInString(uintptr(addr), max)
	if errors.Is(err, mm.ErrInvalid) {
		return "", unix.EINVAL
	}
	if err != nil {
		return "", unix.EFAULT
	}
	return s, nil
}

// copyInKeyType reads a key type's name: EINVAL for an empty or too long
// one, EPERM for one of the kernel's own, which start with '.'.
func copyInKeyType(t *kernel.Task, addr uint64) (string, error) {
	s, err := copyInKeyString(t, addr, keys.MaxTypeName)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", unix.EINVAL
	}
	if s[0] == '.' {
		return "", unix.EPERM
	}
	return s, nil
}

// copyInPayload reads a key's payload, charged to the kernel's budget
// while the call holds it: the returned function gives it back.
func copyInPayload(t *kernel.Task, addr, n uint64) ([]byte, func(), error) {
	if n == 0 {
		return nil, func() {}, nil
	}
	if mm.Charged.Charge(int(n)) != nil {
		return nil, nil, unix.ENOMEM
	}
	release := func() { mm.Charged.Uncharge(int(n)) }
	b := make([]byte, n)
	if err := copyIn(t, addr, b); err != nil {
		release()
		return nil, nil, err
	}
	return b, release, nil
}

// sysAddKey implements add_key(2).
func sysAddKey(t *kernel.Task, a Args) (uint64, error) {
	if a[3] > keys.MaxAddPayload {
		return 0, unix.EINVAL
	}
	typ, err := copyInKeyType(t, a[0])
	if err != nil {
		return 0, err
	}
	var desc string
	if a[1] != 0 {
		if desc, err = copyInKeyString(t, a[1], keys.MaxDesc); err != nil {
			return 0, err
		}
		// Keyrings named with a '.' are the kernel's.
		if strings.HasPrefix(desc, ".") && strings.HasPrefix(typ, "keyring") {
			return 0, unix.EPERM
		}
	}
	payload, release, err := copyInPayload(t, a[2], a[3])
	if err != nil {
		return 0, err
	}
	defer release()
	id, err := t.Kernel().Keys().Add(t.KeyCred(), typ, desc, payload, int32(a[4]))
	return uint64(id), err
}

// sysRequestKey implements request_key(2).
func sysRequestKey(t *kernel.Task, a Args) (uint64, error) {
	typ, err := copyInKeyType(t, a[0])
	if err != nil {
		return 0, err
	}
	desc, err := copyInKeyString(t, a[1], keys.MaxDesc)
	if err != nil {
		return 0, err
	}
	if a[2] != 0 {
		if _, err := copyInKeyString(t, a[2], mm.PageSize); err != nil {
			return 0, err
		}
	}
	id, err := t.Kernel().Keys().Request(t.KeyCred(), typ, desc, a[2] != 0, int32(a[3]))
	return uint64(id), err
}

// keyctl(2)'s operations (linux/keyctl.h).
const (
	keyctlGetKeyringID     = 0
	keyctlJoinSession      = 1
	keyctlUpdate           = 2
	keyctlRevoke           = 3
	keyctlChown            = 4
	keyctlSetPerm          = 5
	keyctlDescribe         = 6
	keyctlClear            = 7
	keyctlLink             = 8
	keyctlUnlink           = 9
	keyctlSearch           = 10
	keyctlRead             = 11
	keyctlInstantiate      = 12
	keyctlNegate           = 13
	keyctlSetReqKey        = 14
	keyctlSetTimeout       = 15
	keyctlAssumeAuthority  = 16
	keyctlGetSecurity      = 17
	keyctlReject           = 19
	keyctlInstantiateIov   = 20
	keyctlInvalidate       = 21
	keyctlCapabilities     = 31
	keyctlCaps0            = 0x01 | 0x20 // KEYCTL_CAPS0_CAPABILITIES, KEYCTL_CAPS0_INVALIDATE
	maxErrno               = 4095
	errRestartSys          = 512 // the kernel's restart codes, which KEYCTL_REJECT refuses
	errRestartNoHand       = 514
	errRestartRestartBlock = 516
)

// sysKeyctl implements keyctl(2). Instantiating a key needs the
// authorisation a request_key upcall holds, and none runs here: EPERM,
// as Linux says to a caller without one.
func sysKeyctl(t *kernel.Task, a Args) (uint64, error) {
	set, c := t.Kernel().Keys(), t.KeyCred()
	id := int32(a[1])
	ret := func(v int32, err error) (uint64, error) { return uint64(v), err }
	switch int32(a[0]) {
	case keyctlGetKeyringID:
		return ret(set.KeyringID(c, id, a[2] != 0))
	case keyctlJoinSession:
		if a[1] == 0 {
			return ret(set.JoinSession(c, "", false))
		}
		name, err := copyInKeyString(t, a[1], keys.MaxDesc)
		if err != nil {
			return 0, err
		}
		return ret(set.JoinSession(c, name, true))
	case keyctlUpdate:
		if a[3] > keys.MaxUpdate {
			return 0, unix.EINVAL
		}
		payload, release, err := copyInPayload(t, a[2], a[3])
		if err != nil {
			return 0, err
		}
		defer release()
		return 0, set.Update(c, id, payload)
	case keyctlRevoke:
		return 0, set.Revoke(c, id)
	case keyctlChown:
		return 0, set.Chown(c, id, uint32(a[2]), uint32(a[3]))
	case keyctlSetPerm:
		return 0, set.SetPerm(c, id, uint32(a[2]))
	case keyctlDescribe:
		d, err := set.Describe(c, id)
		if err != nil {
			return 0, err
		}
		return copyOutIfFits(t, a[2], a[3], append([]byte(d), 0))
	case keyctlClear:
		return 0, set.Clear(c, id)
	case keyctlLink:
		return 0, set.Link(c, id, int32(a[2]))
	case keyctlUnlink:
		return 0, set.Unlink(c, id, int32(a[2]))
	case keyctlSearch:
		typ, err := copyInKeyType(t, a[2])
		if err != nil {
			return 0, err
		}
		desc, err := copyInKeyString(t, a[3], keys.MaxDesc)
		if err != nil {
			return 0, err
		}
		return ret(set.Search(c, id, typ, desc, int32(a[4])))
	case keyctlRead:
		size := 0
		if a[2] != 0 {
			size = int(min(a[3], 1<<31-1))
		}
		data, n, err := set.Read(c, id, size)
		if err != nil {
			return 0, err
		}
		if data != nil {
			if err := copyOut(t, a[2], data); err != nil {
				return 0, err
			}
		}
		return uint64(n), nil
	case keyctlInstantiate:
		if a[3] > keys.MaxAddPayload {
			return 0, unix.EINVAL
		}
		return 0, unix.EPERM
	case keyctlReject:
		switch e := a[3]; {
		case e == 0 || e >= maxErrno, e == errRestartSys, e == errRestartNoHand, e == errRestartRestartBlock:
			return 0, unix.EINVAL
		}
		return 0, unix.EPERM
	case keyctlNegate, keyctlInstantiateIov:
		return 0, unix.EPERM
	case keyctlSetReqKey:
		return ret(set.SetReqKey(c, id))
	case keyctlSetTimeout:
		return 0, set.SetTimeout(c, id, uint32(a[2]))
	case keyctlAssumeAuthority:
		// No upcall holds an authorisation key to assume; 0 drops none.
		switch {
		case id < 0:
			return 0, unix.EINVAL
		case id > 0:
			return 0, unix.ENOKEY
		}
		return 0, nil
	case keyctlGetSecurity:
		if err := set.Security(c, id); err != nil {
			return 0, err
		}
		if a[2] != 0 && a[3] > 0 {
			if err := copyOut(t, a[2], []byte{0}); err != nil {
				return 0, err
			}
		}
		return 1, nil
	case keyctlInvalidate:
		return 0, set.Invalidate(c, id)
	case keyctlCapabilities:
		caps := []byte{keyctlCaps0, 0}
		if a[1] != 0 {
			if err := copyOut(t, a[1], caps[:min(a[2], 2)]); err != nil {
				return 0, err
			}
		}
		return uint64(len(caps)), nil
	}
	return 0, unix.EOPNOTSUPP
}

// copyOutIfFits copies b to the buffer at addr when it fits in size
// bytes, and returns b's length either way, as keyctl's describing calls.
func copyOutIfFits(t *kernel.Task, addr, size uint64, b []byte) (uint64, error) {
	if addr != 0 && size >= uint64(len(b)) {
		if err := copyOut(t, addr, b); err != nil {
			return 0, err
		}
	}
	return uint64(len(b)), nil
}
