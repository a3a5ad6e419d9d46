package keys

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// The operations of add_key(2), request_key(2) and keyctl(2), once their
// strings and payloads are in the kernel; each checks in Linux's order,
// so that a call wrong in several ways fails as it does on Linux.

// Add adds a key of a type and description with a payload to the keyring
// id names, or updates the key of that type and description the keyring
// already links (add_key(2)); its serial.
func (s *Set) Add(c *Cred, typeName, desc string, payload []byte, id int32) (int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ring, possessed, err := s.lookup(c, id, lookupCreate, permWrite)
	if err != nil {
		return 0, err
	}
	t, err := lookupType(typeName)
	if err != nil {
		return 0, unix.ENODEV
	}
	if ring.typ != typeKeyring {
		return 0, unix.ENOTDIR
	}
	if err := checkPayload(t, payload); err != nil {
		return 0, err
	}
	if desc == "" {
		return 0, unix.EINVAL
	}
	if t.updatable {
		if i := ring.find(t, desc); i >= 0 {
			if k := ring.links[i]; !k.revoked && !k.invalidated {
				if err := s.update(c, k, possessed, payload); err != nil {
					return 0, err
				}
				return k.serial, nil
			}
		}
	}
	if t.vetDesc != nil {
		if err := t.vetDesc(desc); err != nil {
			return 0, err
		}
	}
	k, err := s.alloc(t, desc, c.FSUID, c.FSGID, defaultPerm(t), inQuota)
	if err != nil {
		return 0, err
	}
	defer s.put(k)
	if t != typeKeyring {
		if err := s.setPayload(k, payload); err != nil {
			return 0, err
		}
	}
	if err := s.link(ring, k); err != nil {
		return 0, err
	}
	return k.serial, nil
}

// checkPayload is a type's check of a new payload (its preparse): a
// keyring takes none, a user or logon key one of 1 to 32767 bytes.
func checkPayload(t *keyType, p []byte) error {
	if t == typeKeyring {
		if len(p) != 0 {
			return unix.EINVAL
		}
		return nil
	}
	if len(p) == 0 || len(p) > t.maxPayload {
		return unix.EINVAL
	}
	return nil
}

// update replaces a key's payload; a negative key becomes positive, and
// its timeout goes.
func (s *Set) update(c *Cred, k *Key, possessed bool, payload []byte) error {
	if err := permission(c, k, possessed, permWrite); err != nil {
		return err
	}
	if !k.typ.updatable {
		return unix.EOPNOTSUPP
	}
	if err := checkPayload(k.typ, payload); err != nil {
		return err
	}
	if err := s.setPayload(k, payload); err != nil {
		return err
	}
	k.negative, k.expiry = false, 0
	return nil
}

// Request finds a key of a type and description in the caller's keyrings
// and links it into the keyring dest names, if not 0 (request_key(2)).
// Found nowhere, with callout information, Linux runs /sbin/request-key
// to make it: there is no such program here, so, as Linux when it is
// missing, the key is made negative (ENOKEY for a minute), linked into
// the destination, and the call fails with ENOENT.
func (s *Set) Request(c *Cred, typeName, desc string, callout bool, dest int32) (int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ring *Key
	if dest != 0 {
		var err error
		if ring, _, err = s.lookup(c, dest, lookupCreate, permWrite); err != nil {
			return 0, err
		}
	}
	t, err := lookupType(typeName)
	if err != nil {
		return 0, err
	}
	k, err := s.searchCred(&query{c: c, typ: t, desc: desc, stateCheck: true, skipExpired: true})
	if err == nil {
		if ring != nil {
			if err := permission(c, k, true, permLink); err != nil {
				return 0, err
			}
			if err := s.link(ring, k); err != nil {
				return 0, err
			}
		}
		return k.serial, nil
	}
	if err != errAgain {
		return 0, err
	}
	if !callout {
		return 0, unix.ENOKEY
	}
	if t == typeKeyring {
		return 0, unix.EPERM
	}
	if ring == nil {
		if ring, err = s.defaultDest(c); err != nil {
			return 0, err
		}
	}
	if t.vetDesc != nil {
		if err := t.vetDesc(desc); err != nil {
			return 0, err
		}
	}
	k, err = s.alloc(t, desc, c.FSUID, c.FSGID, defaultPerm(t), inQuota)
	if err != nil {
		return 0, err
	}
	defer s.put(k)
	if err := s.link(ring, k); err != nil {
		return 0, err
	}
	// The upcall's session starts from the user's keyrings.
	if _, _, err := s.userKeyrings(c); err != nil {
		return 0, err
	}
	k.negative, k.expiry = true, s.nowSec()+negativeExpiry
	return 0, unix.ENOENT
}

// Request-key default destinations (KEY_REQKEY_DEFL_*).
const (
	reqKeyNoChange    = -1
	reqKeyThread      = 1
	reqKeyProcess     = 2
	reqKeySession     = 3
	reqKeyUser        = 4
	reqKeyUserSession = 5
	reqKeyRequestor   = 7
)

// defaultDest is where request_key puts a key it makes without a
// destination: the keyring KEYCTL_SET_REQKEY_KEYRING chose, or the next
// of thread, process, session and user session keyrings that exists. It
// must grant write.
func (s *Set) defaultDest(c *Cred) (*Key, error) {
	var ring *Key
	var err error
	if c.Process.reqKey == reqKeyUser {
		ring, _, err = s.userKeyrings(c)
	} else {
		start := map[int32]int{reqKeyProcess: 1, reqKeySession: 2, reqKeyUserSession: 3}[c.Process.reqKey]
		for _, r := range []*Key{c.Thread.thread, c.Process.process, c.Process.session}[min(start, 3):] {
			if r != nil {
				ring = r
				break
			}
		}
		if ring == nil {
			_, ring, err = s.userKeyrings(c)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := permission(c, ring, true, permWrite); err != nil {
		return nil, err
	}
	return ring, nil
}

// Keyctl operations (linux/keyctl.h).

// KeyringID is KEYCTL_GET_KEYRING_ID: the serial of the key id names,
// the special keyring made if create.
func (s *Set) KeyringID(c *Cred, id int32, create bool) (int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	flags := 0
	if create {
		flags = lookupCreate
	}
	k, _, err := s.lookup(c, id, flags, permSearch)
	if err != nil {
		return 0, err
	}
	return k.serial, nil
}

// JoinSession is KEYCTL_JOIN_SESSION_KEYRING: a new anonymous session
// keyring (named false), or the keyring of that name the caller may
// search, made if there is none; its serial, or 0 when it already was
// the session keyring. A name starting with '.' is the kernel's: EPERM.
func (s *Set) JoinSession(c *Cred, name string, named bool) (int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !named {
		k, err := s.joinAnonymous(c)
		if err != nil {
			return 0, err
		}
		return k.serial, nil
	}
	if name != "" && name[0] == '.' {
		return 0, unix.EPERM
	}
	for _, k := range s.named {
		if k.revoked || k.uidKeyring || k.desc != name || !permits(c, k, false, permSearch) {
			continue
		}
		if k == c.Process.session {
			return 0, nil
		}
		s.installSession(c, s.get(k))
		return k.serial, nil
	}
	k, err := s.newKeyring(c, name, posAll|usrView|usrRead|usrLink, inQuota)
	if err != nil {
		return 0, err
	}
	s.installSession(c, k)
	return k.serial, nil
}

// Update is KEYCTL_UPDATE.
func (s *Set) Update(c *Cred, id int32, payload []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, possessed, err := s.lookup(c, id, 0, permWrite)
	if err != nil {
		return err
	}
	return s.update(c, k, possessed, payload)
}

// Revoke is KEYCTL_REVOKE: the key reads as EKEYREVOKED from now on; a
// user key's payload and a keyring's links go at once. Write or setattr
// permission does.
func (s *Set) Revoke(c *Cred, id int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, _, err := s.lookup(c, id, 0, permWrite)
	if err == unix.EACCES {
		k, _, err = s.lookup(c, id, 0, permSetattr)
	}
	if err != nil {
		return err
	}
	k.revoked = true
	if k.typ == typeKeyring {
		return s.clear(k)
	}
	return s.setPayload(k, nil)
}

// Chown is KEYCTL_CHOWN: only CAP_SYS_ADMIN gives a key to another user
// or to a group the caller is not in; the key's quota moves to its new
// owner, EDQUOT when that is past the new owner's.
func (s *Set) Chown(c *Cred, id int32, uid, gid uint32) error {
	const keep = ^uint32(0)
	if uid == keep && gid == keep {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, _, err := s.lookup(c, id, lookupCreate|lookupPartial, permSetattr)
	if err != nil {
		return err
	}
	privileged := uid != keep && uid != k.uid || gid != keep && gid != k.gid && !inGroup(c, gid)
	if privileged && !c.SysAdmin {
		return unix.EACCES
	}
	if uid != keep && uid != k.uid {
		to := s.user(uid)
		maxKeys, maxBytes := s.quota(uid)
		if to.nkeys+1 > maxKeys || to.nbytes+k.quotaLen > maxBytes {
			s.forgetUser(uid)
			return unix.EDQUOT
		}
		to.nkeys++
		to.nbytes += k.quotaLen
		from := s.users[k.uid]
		from.nkeys--
		from.nbytes -= k.quotaLen
		old := k.uid
		k.uid = uid
		s.forgetUser(old)
	}
	if gid != keep {
		k.gid = gid
	}
	return nil
}

// SetPerm is KEYCTL_SETPERM: the owner or CAP_SYS_ADMIN sets the bits.
func (s *Set) SetPerm(c *Cred, id int32, perm uint32) error {
	if perm&^validPerm != 0 {
		return unix.EINVAL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, _, err := s.lookup(c, id, lookupCreate|lookupPartial, permSetattr)
	if err != nil {
		return err
	}
	if k.uid != c.FSUID && !c.SysAdmin {
		return unix.EACCES
	}
	k.perm = perm
	return nil
}

// Describe is KEYCTL_DESCRIBE: "type;uid;gid;perm;description".
func (s *Set) Describe(c *Cred, id int32) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, _, err := s.lookup(c, id, lookupPartial, permView)
	if err != nil {
		return "", err
	}
	// An id with no mapping shows as the overflow id, 65534.
	gid := int64(k.gid)
	if k.gid == noGID {
		gid = 65534
	}
	return fmt.Sprintf("%s;%d;%d;%08x;%s", k.typ.name, k.uid, gid, k.perm, k.desc), nil
}

// Clear is KEYCTL_CLEAR.
func (s *Set) Clear(c *Cred, id int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, _, err := s.lookup(c, id, lookupCreate, permWrite)
	if err != nil {
		return err
	}
	return s.clear(k)
}

// Link is KEYCTL_LINK: write to the keyring, link to the key.
func (s *Set) Link(c *Cred, id, ringID int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ring, _, err := s.lookup(c, ringID, lookupCreate, permWrite)
	if err != nil {
		return err
	}
	k, _, err := s.lookup(c, id, lookupCreate, permLink)
	if err != nil {
		return err
	}
	return s.link(ring, k)
}

// Unlink is KEYCTL_UNLINK: only the keyring needs granting write; the
// key may be in any state.
func (s *Set) Unlink(c *Cred, id, ringID int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ring, _, err := s.lookup(c, ringID, 0, permWrite)
	if err != nil {
		return err
	}
	k, _, err := s.lookup(c, id, lookupPartial, needUnlink)
	if err != nil {
		return err
	}
	return s.unlink(ring, k)
}

// Search is KEYCTL_SEARCH: a key of a type and description in the tree
// of a keyring, linked into dest's keyring if not 0.
func (s *Set) Search(c *Cred, ringID int32, typeName, desc string, dest int32) (int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ring, possessed, err := s.lookup(c, ringID, 0, permSearch)
	if err != nil {
		return 0, err
	}
	var to *Key
	if dest != 0 {
		if to, _, err = s.lookup(c, dest, lookupCreate, permWrite); err != nil {
			return 0, err
		}
	}
	t, err := lookupType(typeName)
	if err != nil {
		return 0, err
	}
	q := &query{c: c, typ: t, desc: desc, stateCheck: true}
	k, err := s.searchKeyring(ring, possessed, q)
	if err == errAgain {
		err = unix.ENOKEY
	}
	if err != nil {
		return 0, err
	}
	if to != nil {
		if err := permission(c, k, q.possessed, permLink); err != nil {
			return 0, err
		}
		if err := s.link(to, k); err != nil {
			return 0, err
		}
	}
	return k.serial, nil
}

// Read is KEYCTL_READ: a user key's payload or a keyring's serials, and
// their length. The data comes only when it fits in size bytes: a
// smaller buffer gets nothing, and the call says how much it needs.
// Possessing a key is enough to read it.
func (s *Set) Read(c *Cred, id int32, size int) ([]byte, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, possessed, err := s.lookup(c, id, 0, needDefer)
	if err != nil {
		return nil, 0, unix.ENOKEY
	}
	if k.negative {
		return nil, 0, unix.ENOKEY
	}
	if !permits(c, k, possessed, permRead) && !possessed {
		return nil, 0, unix.EACCES
	}
	if !k.typ.readable {
		return nil, 0, unix.EOPNOTSUPP
	}
	if err := s.validate(k); err != nil {
		return nil, 0, err
	}
	n := len(k.payload)
	if k.typ == typeKeyring {
		n = 4 * len(k.links)
	}
	if n > size {
		return nil, n, nil
	}
	if k.typ != typeKeyring {
		return append([]byte(nil), k.payload...), n, nil
	}
	b := make([]byte, 0, n)
	for _, l := range k.links {
		b = binary.LittleEndian.AppendUint32(b, uint32(l.serial))
	}
	return b, n, nil
}

// SetReqKey is KEYCTL_SET_REQKEY_KEYRING: where request_key puts keys it
// makes; the thread or process keyring is made if it has to be (never
// replaced). The old setting.
func (s *Set) SetReqKey(c *Cred, to int32) (int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := c.Process.reqKey
	switch to {
	case reqKeyNoChange:
		return old, nil
	case reqKeyThread:
		if _, err := s.threadKeyring(c, true); err != nil {
			return 0, err
		}
	case reqKeyProcess:
		if _, err := s.processKeyring(c, true); err != nil {
			return 0, err
		}
	case 0, reqKeySession, reqKeyUser, reqKeyUserSession, reqKeyRequestor: // 0: the default
	default:
		return 0, unix.EINVAL
	}
	c.Process.reqKey = to
	return old, nil
}

// SetTimeout is KEYCTL_SET_TIMEOUT: the key expires secs seconds from
// now, or never for 0.
func (s *Set) SetTimeout(c *Cred, id int32, secs uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, _, err := s.lookup(c, id, lookupCreate|lookupPartial, permSetattr)
	if err != nil {
		return err
	}
	k.expiry = 0
	if secs > 0 {
		k.expiry = s.nowSec() + int64(secs)
	}
	return nil
}

// Invalidate is KEYCTL_INVALIDATE: the key reads as ENOKEY and leaves
// every keyring at once (Linux's garbage collector does so soon after).
func (s *Set) Invalidate(c *Cred, id int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, _, err := s.lookup(c, id, 0, permSearch)
	if err != nil {
		return err
	}
	k.invalidated = true
	var rings []*Key
	for _, r := range s.keys {
		if r.typ == typeKeyring && indexOf(r.links, k) >= 0 {
			rings = append(rings, r)
		}
	}
	for _, r := range rings {
		s.unlink(r, k)
	}
	return nil
}

// Security is KEYCTL_GET_SECURITY: no security module labels keys, so
// every key's label is empty.
func (s *Set) Security(c *Cred, id int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, err := s.lookup(c, id, lookupPartial, permView)
	return err
}
