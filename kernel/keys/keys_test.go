package keys

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// newSet is a Set on a clock the test moves and serials counted up.
func newSet() (*Set, *time.Time) {
	now := time.Unix(1000, 0)
	var next uint32
	return New(func() time.Time { return now }, func() uint32 { next += 2; return next }), &now
}

func newCred(uid uint32) *Cred {
	return &Cred{UID: uid, GID: uid, FSUID: uid, FSGID: uid, Thread: &ThreadRings{}, Process: &ProcessRings{}}
}

func want(t *testing.T, what string, err, wantErr error) {
	t.Helper()
	if !errors.Is(err, wantErr) && err != wantErr {
		t.Fatalf("%s: %v, want %v", what, err, wantErr)
	}
}

// TestQuotaCountsKeysAndFreesThem: a user past maxkeys gets EDQUOT, and
// the keys a process held count no more once it exits; the kernel-wide
// budget gets back what they took.
func TestQuotaCountsKeysAndFreesThem(t *testing.T) {
	s, _ := newSet()
	s.limits.MaxKeys = 5
	before := mm.Charged.Total()
	c := newCred(1000)
	var err error
	n := 0
	for ; n < 10; n++ {
		if _, err = s.Add(c, "user", string(rune('a'+n)), []byte("x"), SpecProcess); err != nil {
			break
		}
	}
	// The process keyring is one of the five.
	if n != 4 {
		t.Fatalf("added %d keys, want 4", n)
	}
	want(t, "past maxkeys", err, unix.EDQUOT)
	s.ExitProcess(c.Process)
	if u := s.users[1000]; u != nil {
		t.Fatalf("uid 1000 still holds %d keys, %d bytes", u.nkeys, u.nbytes)
	}
	if len(s.keys) != 0 {
		t.Fatalf("%d keys left", len(s.keys))
	}
	if got := mm.Charged.Total(); got != before {
		t.Fatalf("budget holds %d bytes, %d before", got, before)
	}
}

// TestMaxBytesCountsPayloadsAndLinks: the payload and a keyring's links
// count against maxbytes, an update past it fails and keeps the old one.
func TestMaxBytesCountsPayloadsAndLinks(t *testing.T) {
	s, _ := newSet()
	s.limits.MaxBytes = 100
	c := newCred(1000)
	_, err := s.Add(c, "user", "big", make([]byte, 200), SpecThread)
	want(t, "key past maxbytes", err, unix.EDQUOT)
	id, err := s.Add(c, "user", "k", []byte("0123456789"), SpecThread)
	want(t, "key within maxbytes", err, nil)
	want(t, "update past maxbytes", s.Update(c, id, make([]byte, 150)), unix.EDQUOT)
	data, n, err := s.Read(c, id, 64)
	if err != nil || n != 10 || string(data) != "0123456789" {
		t.Fatalf("read after failed update: %q %d %v", data, n, err)
	}
	// "_tid\0" 5, "k\0" 2 + 10, one link 4.
	if u := s.users[1000]; u.nbytes != 21 {
		t.Fatalf("uid 1000 holds %d bytes, want 21", u.nbytes)
	}
}

// TestPossessionAndPermissions: a key in the caller's keyrings is
// possessed and so readable without the owner's read bit; taking away
// its search bit takes away possession.
func TestPossessionAndPermissions(t *testing.T) {
	s, _ := newSet()
	c := newCred(0)
	id, _ := s.Add(c, "user", "k", []byte("v"), SpecThread)
	want(t, "setperm", s.SetPerm(c, id, posAll), nil)
	if _, _, err := s.Read(c, id, 8); err != nil {
		t.Fatalf("possessor's read: %v", err)
	}
	want(t, "setperm", s.SetPerm(c, id, posAll&^(permSearch<<24)), nil)
	_, _, err := s.Read(c, id, 8)
	want(t, "read, not possessed", err, unix.EACCES)
	other := newCred(0)
	_, err = s.Describe(other, id)
	want(t, "another process's describe", err, unix.EACCES)
}

// TestLinkCycles: a keyring cannot be linked below itself.
func TestLinkCycles(t *testing.T) {
	s, _ := newSet()
	c := newCred(0)
	a, _ := s.Add(c, "keyring", "a", nil, SpecThread)
	b, _ := s.Add(c, "keyring", "b", nil, a)
	want(t, "a into itself", s.Link(c, a, a), unix.EDEADLK)
	want(t, "a into b", s.Link(c, a, b), unix.EDEADLK)
	want(t, "thread keyring into b", s.Link(c, SpecThread, b), unix.EDEADLK)
	k, _ := s.Add(c, "user", "k", []byte("v"), b)
	found, err := s.Search(c, SpecThread, "user", "k", 0)
	if err != nil || found != k {
		t.Fatalf("search through a and b: %d %v, want %d", found, err, k)
	}
}

// TestExpiryAndNegativeKeys: a timed-out key reads EKEYEXPIRED; a key
// request_key could not make is negative (ENOKEY) for a minute.
func TestExpiryAndNegativeKeys(t *testing.T) {
	s, now := newSet()
	c := newCred(0)
	id, _ := s.Add(c, "user", "k", []byte("v"), SpecThread)
	want(t, "set timeout", s.SetTimeout(c, id, 5), nil)
	*now = now.Add(5 * time.Second)
	_, _, err := s.Read(c, id, 8)
	want(t, "read expired", err, unix.EKEYEXPIRED)
	_, err = s.Request(c, "user", "missing", true, 0)
	want(t, "request without an upcall", err, unix.ENOENT)
	_, err = s.Request(c, "user", "missing", true, 0)
	want(t, "request a negative key", err, unix.ENOKEY)
	_, err = s.Request(c, "keyring", "missing", true, 0)
	want(t, "request a keyring", err, unix.EPERM)
}

// TestForkExecExit: a child shares the session keyring, not the process
// keyring; exec drops the process keyring; exits release the rest.
func TestForkExecExit(t *testing.T) {
	s, _ := newSet()
	c := newCred(0)
	ses, _ := s.JoinSession(c, "", false)
	s.KeyringID(c, SpecProcess, true)
	child := &Cred{Thread: &ThreadRings{}, Process: s.Fork(c.Process)}
	if id, err := s.KeyringID(child, SpecSession, false); err != nil || id != ses {
		t.Fatalf("child's session %d %v, want %d", id, err, ses)
	}
	_, err := s.KeyringID(child, SpecProcess, false)
	want(t, "child's process keyring", err, unix.ENOKEY)
	s.Exec(c.Thread, c.Process)
	_, err = s.KeyringID(c, SpecProcess, false)
	want(t, "process keyring after exec", err, unix.ENOKEY)
	s.ExitProcess(c.Process)
	if s.keys[ses] == nil {
		t.Fatal("the session keyring went while the child held it")
	}
	s.ExitThread(child.Thread)
	s.ExitProcess(child.Process)
	if len(s.keys) != 0 {
		t.Fatalf("%d keys left after every process exited", len(s.keys))
	}
}
