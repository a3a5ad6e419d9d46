// Package keys is Linux's key retention service (security/keys): keys of
// the types "user", "logon" and "keyring" that programs add, link into
// keyrings, search, read, update, revoke and time out through add_key(2),
// request_key(2) and keyctl(2), with Linux's permissions, possession,
// special keyrings (thread, process, session, user, user session) and
// per-user quotas.
//
// Every key is kernel memory a program caused: it is charged to
// mm.Charged as well as to its owner's quota, so that neither a user nor
// all of them together can exhaust the kernel heap with keys.
package keys

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// Permission bits of a key (linux/keyctl.h): four sets of six, for the
// possessor, the owner, the group and others.
const (
	permView    = 0x01
	permRead    = 0x02
	permWrite   = 0x04
	permSearch  = 0x08
	permLink    = 0x10
	permSetattr = 0x20
	permAll     = 0x3f

	posAll  = permAll << 24
	usrView = permView << 16
	usrRead = permRead << 16
	usrLink = permLink << 16
	usrAll  = permAll << 16
	// userKeyringPerm is a user's keyrings': all but setattr to their
	// possessor, all to their owner.
	userKeyringPerm = posAll&^(permSetattr<<24) | usrAll
	grpAll          = permAll << 8

	// validPerm is every bit KEYCTL_SETPERM accepts.
	validPerm = posAll | usrAll | grpAll | permAll
)

// need is what an operation needs of a key: one of the permission bits,
// or needUnlink and needDefer, which skip the check (Linux's
// KEY_NEED_UNLINK and KEY_DEFER_PERM_CHECK: KEYCTL_UNLINK needs only the
// keyring's, KEYCTL_READ checks after the key's state).
type need uint32

const (
	needUnlink need = 0x100
	needDefer  need = 0x200
)

// Flags of lookup: create the special keyring a negative id names
// (KEY_LOOKUP_CREATE), accept a key whatever its state of construction
// (KEY_LOOKUP_PARTIAL).
const (
	lookupCreate  = 1
	lookupPartial = 2
)

// Special key ids (KEY_SPEC_*).
const (
	SpecThread      = -1
	SpecProcess     = -2
	SpecSession     = -3
	SpecUser        = -4
	SpecUserSession = -5
	SpecGroup       = -6
	SpecReqkeyAuth  = -7
	SpecRequestor   = -8
)

// Limits of descriptions and payloads, as Linux's.
const (
	MaxDesc        = 4096      // KEY_MAX_DESC_SIZE, the NUL included
	MaxTypeName    = 32        // a type's name, the NUL included
	MaxAddPayload  = 1<<20 - 1 // add_key's payload
	MaxUpdate      = 4096      // KEYCTL_UPDATE's payload (PAGE_SIZE)
	userMaxPayload = 32767     // a user or logon key's payload
	linkQuota      = 4         // quota bytes a keyring's link costs (KEYQUOTA_LINK_BYTES)
	negativeExpiry = 60        // seconds a key request_key negated lives (key_negative_timeout)
	maxSearchDepth = 6         // keyrings nested below the searched one (KEYRING_SEARCH_MAX_DEPTH)
)

// What keys cost the kernel-wide budget besides their description and
// payload: the Key, and a keyring's slot for each link.
const (
	keyCost  = 256
	linkCost = 16
)

// errAgain is a search that found nothing (Linux's -EAGAIN).
var errAgain = unix.EAGAIN

// keyType is a key type: what payload it takes and what it lets be done.
type keyType struct {
	name       string
	readable   bool                    // has a read method (user: the payload; keyring: the links)
	updatable  bool                    // has an update method
	vetDesc    func(desc string) error // nil: any description
	maxPayload int
}

var (
	typeKeyring = &keyType{name: "keyring", readable: true}
	typeUser    = &keyType{name: "user", readable: true, updatable: true, maxPayload: userMaxPayload}
	// A logon key's payload only the kernel reads; its description names
	// a service: "service:name".
	typeLogon = &keyType{name: "logon", updatable: true, maxPayload: userMaxPayload, vetDesc: func(d string) error {
		for i := 0; i < len(d); i++ {
			if d[i] == ':' {
				if i == 0 {
					return unix.EINVAL
				}
				return nil
			}
		}
		return unix.EINVAL
	}}
)

// lookupType finds a type by name: ENOKEY for one the kernel lacks
// (add_key says ENODEV).
func lookupType(name string) (*keyType, error) {
	for _, t := range []*keyType{typeKeyring, typeUser, typeLogon} {
		if t.name == name {
			return t, nil
		}
	}
	return nil, unix.ENOKEY
}

// Key is a key or a keyring.
type Key struct {
	serial   int32
	typ      *keyType
	desc     string
	uid, gid uint32
	perm     uint32
	payload  []byte // a user or logon key's
	links    []*Key // a keyring's, one per type and description
	expiry   int64  // when it expires, in Unix seconds; 0: never

	negative    bool // request_key found no way to make it: ENOKEY
	revoked     bool
	invalidated bool
	uidKeyring  bool // a user's keyring or user session keyring

	// refs counts what holds the key: keyrings linking it, credentials
	// naming it as a special keyring, a user's record of its keyrings.
	// The key is destroyed when it drops to 0.
	refs int
	// quotaLen is the bytes the key takes of its owner's quota; charge,
	// what it took of mm.Charged.
	quotaLen int
	charge   int
}

// user is what Linux's struct key_user counts for one uid: its keys and
// their bytes against the quota, and its user and user session keyrings.
type user struct {
	nkeys, nbytes    int
	keyring, session *Key
}

// Limits are the quotas of /proc/sys/kernel/keys and the garbage
// collector's delay.
type Limits struct {
	MaxKeys, MaxBytes         int // a user's keys and bytes
	RootMaxKeys, RootMaxBytes int // root's
	GCDelay                   int // seconds
}

// Set is the kernel's keys: every key by serial, every user's quota.
type Set struct {
	mu     sync.Mutex
	keys   map[int32]*Key
	users  map[uint32]*user
	named  []*Key // keyrings by creation, which JOIN_SESSION_KEYRING finds by name
	limits Limits
	now    func() time.Time
	random func() uint32
}

// New makes an empty set; now is the wall clock expiry is measured by,
// random the source of serial numbers.
func New(now func() time.Time, random func() uint32) *Set {
	return &Set{
		keys: map[int32]*Key{}, users: map[uint32]*user{}, now: now, random: random,
		limits: Limits{MaxKeys: 200, MaxBytes: 20000, RootMaxKeys: 1000000, RootMaxBytes: 25000000, GCDelay: 300},
	}
}

// Cred is who asks: Linux's cred, with the keyrings it holds.
type Cred struct {
	UID, GID     uint32 // real ids: the owner of keyrings the kernel makes for it
	FSUID, FSGID uint32 // the owner of keys it adds; permissions are checked with them
	Groups       []uint32
	SysAdmin     bool // CAP_SYS_ADMIN
	Thread       *ThreadRings
	Process      *ProcessRings
}

// ThreadRings is what a thread's credentials hold of keys: its thread
// keyring. Guarded by the Set's lock.
type ThreadRings struct{ thread *Key }

// ProcessRings is what a process's threads share: the process and
// session keyrings and request_key's default destination
// (KEYCTL_SET_REQKEY_KEYRING). Guarded by the Set's lock.
type ProcessRings struct {
	process, session *Key
	reqKey           int32
}

func (s *Set) nowSec() int64 { return s.now().Unix() }

// quota is what uid may hold: root's limits or everyone else's.
func (s *Set) quota(uid uint32) (keys, bytes int) {
	if uid == 0 {
		return s.limits.RootMaxKeys, s.limits.RootMaxBytes
	}
	return s.limits.MaxKeys, s.limits.MaxBytes
}

func (s *Set) user(uid uint32) *user {
	u := s.users[uid]
	if u == nil {
		u = &user{}
		s.users[uid] = u
	}
	return u
}

// forgetUser drops the record of a user with nothing left to count.
func (s *Set) forgetUser(uid uint32) {
	if u := s.users[uid]; u != nil && u.nkeys == 0 && u.keyring == nil {
		delete(s.users, uid)
	}
}

// How a new key counts against its owner's quota (KEY_ALLOC_IN_QUOTA,
// KEY_ALLOC_QUOTA_OVERRUN): the keyrings the kernel makes for a thread,
// a process or a session count but may go over.
const (
	inQuota = iota
	quotaOverrun
)

// alloc makes a key with one reference, its owner's: EDQUOT past the
// owner's quota, ENOMEM past the kernel's budget.
func (s *Set) alloc(typ *keyType, desc string, uid, gid, perm uint32, mode int) (*Key, error) {
	qlen := len(desc) + 1
	u := s.user(uid)
	maxKeys, maxBytes := s.quota(uid)
	if mode == inQuota && (u.nkeys+1 > maxKeys || u.nbytes+qlen > maxBytes) {
		s.forgetUser(uid)
		return nil, unix.EDQUOT
	}
	charge := keyCost + len(desc)
	if mm.Charged.Charge(charge) != nil {
		s.forgetUser(uid)
		return nil, unix.ENOMEM
	}
	u.nkeys++
	u.nbytes += qlen
	k := &Key{serial: s.newSerial(), typ: typ, desc: desc, uid: uid, gid: gid, perm: perm,
		refs: 1, quotaLen: qlen, charge: charge}
	s.keys[k.serial] = k
	if typ == typeKeyring && desc != "" && desc[0] != '.' {
		s.named = append(s.named, k)
	}
	return k, nil
}

// newSerial picks an unused serial number at random, as Linux does, from
// 3 up: programs cannot guess another's keys.
func (s *Set) newSerial() int32 {
	id := int32(s.random() >> 1)
	for {
		if id < 3 {
			id = 3
		}
		if s.keys[id] == nil {
			return id
		}
		id++
	}
}

// reserve sets the bytes a key's payload (or a keyring's links) takes of
// its owner's quota to n: EDQUOT when that would go past it.
func (s *Set) reserve(k *Key, n int) error {
	delta := n - (k.quotaLen - len(k.desc) - 1)
	if delta == 0 {
		return nil
	}
	u := s.user(k.uid)
	_, maxBytes := s.quota(k.uid)
	if delta > 0 && u.nbytes+delta > maxBytes {
		return unix.EDQUOT
	}
	u.nbytes += delta
	k.quotaLen += delta
	return nil
}

// setPayload replaces a user key's payload, charging it to the quota and
// the budget.
func (s *Set) setPayload(k *Key, p []byte) error {
	if err := s.reserve(k, len(p)); err != nil {
		return err
	}
	delta := len(p) - len(k.payload)
	if delta > 0 && mm.Charged.Charge(delta) != nil {
		s.reserve(k, len(k.payload))
		return unix.ENOMEM
	}
	if delta < 0 {
		mm.Charged.Uncharge(-delta)
	}
	k.charge += delta
	k.payload = p
	return nil
}

func (s *Set) get(k *Key) *Key {
	k.refs++
	return k
}

// put drops a reference; the last destroys the key, and with it the
// references of its links.
func (s *Set) put(k *Key) {
	dead := []*Key{k}
	for len(dead) > 0 {
		k := dead[len(dead)-1]
		dead = dead[:len(dead)-1]
		if k == nil {
			continue
		}
		if k.refs--; k.refs > 0 {
			continue
		}
		delete(s.keys, k.serial)
		if i := indexOf(s.named, k); i >= 0 {
			s.named = append(s.named[:i], s.named[i+1:]...)
		}
		if u := s.users[k.uid]; u != nil {
			u.nkeys--
			u.nbytes -= k.quotaLen
			s.forgetUser(k.uid)
		}
		mm.Charged.Uncharge(k.charge + linkCost*len(k.links))
		dead = append(dead, k.links...)
		k.links, k.payload = nil, nil
	}
}

func indexOf(ks []*Key, k *Key) int {
	for i, x := range ks {
		if x == k {
			return i
		}
	}
	return -1
}

// validate is a key's state as an error: invalidated, revoked or expired
// (Linux's key_validate).
func (s *Set) validate(k *Key) error {
	switch {
	case k.invalidated:
		return unix.ENOKEY
	case k.revoked:
		return unix.EKEYREVOKED
	case k.expiry != 0 && s.nowSec() >= k.expiry:
		return unix.EKEYEXPIRED
	}
	return nil
}

// constructed is validate for a key that may be negative: a key
// request_key negated reads as ENOKEY.
func (s *Set) constructed(k *Key) error {
	if k.negative {
		return unix.ENOKEY
	}
	return s.validate(k)
}

// permits reports whether c may do what n needs of k: the owner's,
// group's or others' bits, plus the possessor's when c possesses it.
// Root has no way around them, as on Linux.
func permits(c *Cred, k *Key, possessed bool, n need) bool {
	if n == needUnlink || n == needDefer {
		return true
	}
	var kperm uint32
	switch {
	case k.uid == c.FSUID:
		kperm = k.perm >> 16
	case k.gid != noGID && k.perm&grpAll != 0 && inGroup(c, k.gid):
		kperm = k.perm >> 8
	default:
		kperm = k.perm
	}
	if possessed {
		kperm |= k.perm >> 24
	}
	return kperm&uint32(n) == uint32(n)
}

// noGID is the group of a user's keyrings: none (INVALID_GID).
const noGID = ^uint32(0)

func inGroup(c *Cred, gid uint32) bool {
	if c.FSGID == gid {
		return true
	}
	for _, g := range c.Groups {
		if g == gid {
			return true
		}
	}
	return false
}

func permission(c *Cred, k *Key, possessed bool, n need) error {
	if !permits(c, k, possessed, n) {
		return unix.EACCES
	}
	return nil
}

// defaultPerm is what add_key and request_key give a new key: all to
// its possessor but what the type cannot do, view to its owner.
func defaultPerm(t *keyType) uint32 {
	perm := uint32(permView|permSearch|permLink|permSetattr)<<24 | usrView
	if t.readable {
		perm |= permRead << 24
	}
	if t == typeKeyring || t.updatable {
		perm |= permWrite << 24
	}
	return perm
}
