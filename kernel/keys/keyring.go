package keys

import (
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// Keyrings: the special ones a thread's credentials name, looking a key
// up by id, searching keyring trees, and links.

// find is the link of a keyring with a type and description, -1 for none:
// a keyring holds one key of each (Linux's index key).
func (k *Key) find(t *keyType, desc string) int {
	for i, l := range k.links {
		if l.typ == t && l.desc == desc {
			return i
		}
	}
	return -1
}

// newKeyring makes an empty keyring owned by c's real ids.
func (s *Set) newKeyring(c *Cred, desc string, perm uint32, mode int) (*Key, error) {
	return s.alloc(typeKeyring, desc, c.UID, c.GID, perm, mode)
}

// userKeyrings are c's user keyring and user session keyring, made on
// first use with the second linking the first (look_up_user_keyrings).
// Nobody else can make them: they are found by uid, never by name.
func (s *Set) userKeyrings(c *Cred) (keyring, session *Key, err error) {
	u := s.user(c.UID)
	if u.keyring != nil {
		return u.keyring, u.session, nil
	}
	perm := uint32(userKeyringPerm)
	id := strconv.FormatUint(uint64(c.UID), 10)
	ring, err := s.alloc(typeKeyring, "_uid."+id, c.UID, noGID, perm, inQuota)
	if err != nil {
		return nil, nil, err
	}
	ses, err := s.alloc(typeKeyring, "_uid_ses."+id, c.UID, noGID, perm, inQuota)
	if err != nil {
		s.put(ring)
		return nil, nil, err
	}
	if err := s.link(ses, ring); err != nil {
		s.put(ses)
		s.put(ring)
		return nil, nil, err
	}
	ring.uidKeyring, ses.uidKeyring = true, true
	u = s.user(c.UID)
	u.keyring, u.session = ring, ses
	return ring, ses, nil
}

// threadKeyring is c's thread keyring, made when create asks and there
// is none.
func (s *Set) threadKeyring(c *Cred, create bool) (*Key, error) {
	if c.Thread.thread == nil {
		if !create {
			return nil, unix.ENOKEY
		}
		k, err := s.newKeyring(c, "_tid", posAll|usrView, quotaOverrun)
		if err != nil {
			return nil, err
		}
		c.Thread.thread = k
	}
	return c.Thread.thread, nil
}

func (s *Set) processKeyring(c *Cred, create bool) (*Key, error) {
	if c.Process.process == nil {
		if !create {
			return nil, unix.ENOKEY
		}
		k, err := s.newKeyring(c, "_pid", posAll|usrView, quotaOverrun)
		if err != nil {
			return nil, err
		}
		c.Process.process = k
	}
	return c.Process.process, nil
}

// sessionKeyring is c's session keyring. A process without one is given
// its user session keyring, or when create asks (and in place of the
// user session keyring) a new anonymous one, as Linux's lookup_user_key.
func (s *Set) sessionKeyring(c *Cred, create bool) (*Key, error) {
	ses := c.Process.session
	if ses == nil || ses.uidKeyring && create {
		_, userSes, err := s.userKeyrings(c)
		if err != nil {
			return nil, err
		}
		if create || ses != nil {
			if _, err := s.joinAnonymous(c); err != nil {
				return nil, err
			}
		} else {
			c.Process.session = s.get(userSes)
		}
	}
	return c.Process.session, nil
}

// joinAnonymous gives c a new empty session keyring: it counts against
// the quota unless it is the process's first.
func (s *Set) joinAnonymous(c *Cred) (*Key, error) {
	mode := quotaOverrun
	if c.Process.session != nil {
		mode = inQuota
	}
	k, err := s.newKeyring(c, "_ses", posAll|usrView|usrRead, mode)
	if err != nil {
		return nil, err
	}
	s.installSession(c, k)
	return k, nil
}

// installSession makes k (whose reference it takes) c's session keyring.
func (s *Set) installSession(c *Cred, k *Key) {
	if old := c.Process.session; old != nil {
		s.put(old)
	}
	c.Process.session = k
}

// lookup finds the key an id names, with whether c possesses it, and
// checks its state (unless partial) and that it grants n (Linux's
// lookup_user_key).
func (s *Set) lookup(c *Cred, id int32, flags int, n need) (*Key, bool, error) {
	create := flags&lookupCreate != 0
	var k *Key
	var err error
	possessed := true
	switch id {
	case SpecThread:
		k, err = s.threadKeyring(c, create)
	case SpecProcess:
		k, err = s.processKeyring(c, create)
	// Failing to make the session or a user keyring (EDQUOT, ENOMEM)
	// reads as there being none, as on Linux.
	case SpecSession:
		if k, err = s.sessionKeyring(c, create); err != nil {
			err = unix.ENOKEY
		}
	case SpecUser:
		if k, _, err = s.userKeyrings(c); err != nil {
			err = unix.ENOKEY
		}
	case SpecUserSession:
		if _, k, err = s.userKeyrings(c); err != nil {
			err = unix.ENOKEY
		}
	case SpecGroup:
		err = unix.EINVAL
	case SpecReqkeyAuth, SpecRequestor:
		// No request_key upcall runs, so nothing holds an authorisation.
		err = unix.ENOKEY
	default:
		if id < 1 {
			return nil, false, unix.EINVAL
		}
		if k = s.keys[id]; k == nil {
			return nil, false, unix.ENOKEY
		}
		possessed = s.possessed(c, k)
	}
	if err != nil {
		return nil, false, err
	}
	if n != needUnlink {
		var state error
		if flags&lookupPartial == 0 {
			state = s.constructed(k)
		} else {
			state = s.validate(k)
		}
		if state != nil && n != needDefer {
			return nil, false, state
		}
	}
	if err := permission(c, k, possessed, n); err != nil {
		return nil, false, err
	}
	return k, possessed, nil
}

// query is what a search looks for: a key of a type and description (or
// that very key, target), with the state checks asked for.
type query struct {
	c           *Cred
	typ         *keyType
	desc        string
	target      *Key // possession: this key, whatever its state
	stateCheck  bool // revoked, expired and negative keys end in their errors
	skipExpired bool // ...but expired ones are passed over silently
	now         int64

	possessed bool
	err       error // what the search found instead, errAgain at first
}

// Results of visiting a candidate, as Linux's keyring_search_iterator.
const (
	visitNo = iota
	visitFound
	visitSkipped
)

func (q *query) visit(k *Key) int {
	if k.typ != q.typ {
		return visitNo
	}
	if q.stateCheck {
		if k.invalidated || k.revoked {
			q.err = unix.EKEYREVOKED
			return visitSkipped
		}
		if k.expiry != 0 && q.now >= k.expiry {
			if !q.skipExpired {
				q.err = unix.EKEYEXPIRED
			}
			return visitSkipped
		}
	}
	if k.desc != q.desc || q.target != nil && k != q.target {
		return visitNo
	}
	if !permits(q.c, k, q.possessed, permSearch) {
		q.err = unix.EACCES
		return visitSkipped
	}
	if q.stateCheck && k.negative {
		q.err = unix.ENOKEY
		return visitSkipped
	}
	return visitFound
}

// searchKeyring searches a keyring and the keyrings below it that grant
// search, depth first to maxSearchDepth (Linux's keyring_search_rcu):
// the key, or errAgain for none, or the error of one passed over.
func (s *Set) searchKeyring(ring *Key, possessed bool, q *query) (*Key, error) {
	if ring.typ != typeKeyring {
		return nil, unix.ENOTDIR
	}
	if err := permission(q.c, ring, possessed, permSearch); err != nil {
		return nil, err
	}
	q.possessed, q.err, q.now = possessed, errAgain, s.nowSec()
	// The keyring itself is the first candidate; passed over, it ends
	// the search.
	if ring.typ == q.typ && ring.desc == q.desc {
		switch q.visit(ring) {
		case visitFound:
			return ring, nil
		case visitSkipped:
			return nil, q.err
		}
	}
	if k := s.searchNested(ring, 0, q); k != nil {
		return k, nil
	}
	return nil, q.err
}

func (s *Set) searchNested(ring *Key, depth int, q *query) *Key {
	if i := ring.find(q.typ, q.desc); i >= 0 && q.visit(ring.links[i]) == visitFound {
		return ring.links[i]
	}
	if depth >= maxSearchDepth {
		return nil
	}
	for _, l := range ring.links {
		if l.typ != typeKeyring || !permits(q.c, l, q.possessed, permSearch) {
			continue
		}
		if k := s.searchNested(l, depth+1, q); k != nil {
			return k
		}
	}
	return nil
}

// searchCred searches c's thread, process and session keyrings (the user
// session keyring without a session), in that order: the first key
// found; else ENOKEY (a negative key) or errAgain when some keyring was
// searched, else the error of the last one (Linux's
// search_cred_keyrings_rcu).
func (s *Set) searchCred(q *query) (*Key, error) {
	c := q.c
	ses := c.Process.session
	if ses == nil {
		if u := s.users[c.UID]; u != nil {
			ses = u.session
		}
	}
	var found, other error = nil, errAgain
	for _, ring := range []*Key{c.Thread.thread, c.Process.process, ses} {
		if ring == nil {
			continue
		}
		k, err := s.searchKeyring(ring, true, q)
		switch err {
		case nil:
			return k, nil
		case errAgain:
			if found == nil {
				found = err
			}
		case unix.ENOKEY:
			found = err
		default:
			other = err
		}
	}
	if found != nil {
		return nil, found
	}
	return nil, other
}

// possessed reports whether c possesses k: k is found, granting search,
// in the keyrings c's credentials name.
func (s *Set) possessed(c *Cred, k *Key) bool {
	found, err := s.searchCred(&query{c: c, typ: k.typ, desc: k.desc, target: k})
	return err == nil && found == k
}

// link links k into ring, replacing its key of the same type and
// description (Linux's key_link): ENOTDIR, EKEYREVOKED for a revoked
// keyring, EDQUOT when a new link is past the owner's quota, EDEADLK or
// ELOOP when a keyring would end up inside itself.
func (s *Set) link(ring, k *Key) error {
	if ring.typ != typeKeyring {
		return unix.ENOTDIR
	}
	if ring.revoked {
		return unix.EKEYREVOKED
	}
	i := ring.find(k.typ, k.desc)
	if i < 0 {
		if err := s.reserve(ring, (len(ring.links)+1)*linkQuota); err != nil {
			return err
		}
	}
	if k.typ == typeKeyring {
		if err := s.cycle(ring, k); err != nil {
			if i < 0 {
				s.reserve(ring, len(ring.links)*linkQuota)
			}
			return err
		}
	}
	if i >= 0 {
		old := ring.links[i]
		ring.links[i] = s.get(k)
		s.put(old)
		return nil
	}
	if mm.Charged.Charge(linkCost) != nil {
		s.reserve(ring, len(ring.links)*linkQuota)
		return unix.ENOMEM
	}
	ring.links = append(ring.links, s.get(k))
	return nil
}

// cycle reports whether linking k into ring would put ring below itself:
// EDEADLK, or ELOOP when k's tree is too deep to tell.
func (s *Set) cycle(ring, k *Key) error {
	var walk func(r *Key, depth int) error
	walk = func(r *Key, depth int) error {
		if r == ring {
			return unix.EDEADLK
		}
		for _, l := range r.links {
			if l.typ != typeKeyring {
				continue
			}
			if depth >= maxSearchDepth {
				return unix.ELOOP
			}
			if err := walk(l, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(k, 0)
}

// unlink removes k's link from ring: ENOENT when it has none.
func (s *Set) unlink(ring, k *Key) error {
	if ring.typ != typeKeyring {
		return unix.ENOTDIR
	}
	i := indexOf(ring.links, k)
	if i < 0 {
		return unix.ENOENT
	}
	ring.links = append(ring.links[:i], ring.links[i+1:]...)
	s.reserve(ring, len(ring.links)*linkQuota)
	mm.Charged.Uncharge(linkCost)
	s.put(k)
	return nil
}

// clear unlinks everything from a keyring.
func (s *Set) clear(ring *Key) error {
	if ring.typ != typeKeyring {
		return unix.ENOTDIR
	}
	links := ring.links
	ring.links = nil
	s.reserve(ring, 0)
	mm.Charged.Uncharge(linkCost * len(links))
	for _, l := range links {
		s.put(l)
	}
	return nil
}
