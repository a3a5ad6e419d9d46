package net

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// opened is f as a descriptor would hold it: a description with one
// reference.
func opened(f fs.File) *fs.Description {
	d := fs.NewDescription(f, unix.O_RDWR)
	d.IncRef()
	return d
}

// TestUnixCyclesCollected: sockets sent over themselves and over each
// other, then closed, are collected with what they held; a socket in
// flight that a live socket's queue carries, and what it carries, are
// not.
func TestUnixCyclesCollected(t *testing.T) {
	st := loopbackStack(t)
	base := mm.Charged.Total()

	// A pair, each end sent over itself; a seqpacket pair sent over each
	// other; a datagram socket sent to itself by its peer.
	a, b := st.UnixStreamPair(false, Caller{})
	da, db := opened(a), opened(b)
	a.SendMsg([]byte("a"), nil, Control{Rights: []*fs.Description{da}}, treeNames{})
	b.SendMsg([]byte("b"), nil, Control{Rights: []*fs.Description{db}}, treeNames{})
	c, d := st.UnixStreamPair(true, Caller{})
	dc, dd := opened(c), opened(d)
	c.SendMsg([]byte("c"), nil, Control{Rights: []*fs.Description{dd}}, treeNames{})
	d.SendMsg([]byte("d"), nil, Control{Rights: []*fs.Description{dc}}, treeNames{})
	g, gPeer := st.UnixDgramPair(Caller{})
	dg := opened(g)
	gPeer.SendMsg([]byte("g"), nil, Control{Rights: []*fs.Description{dg}}, treeNames{})

	// A live pair whose queue carries x, which carries y.
	live, liveOut := st.UnixStreamPair(false, Caller{})
	x, xPeer := st.UnixStreamPair(false, Caller{})
	y, _ := st.UnixStreamPair(false, Caller{})
	dx, dy := opened(x), opened(y)
	xPeer.SendMsg([]byte("y"), nil, Control{Rights: []*fs.Description{dy}}, treeNames{})
	liveOut.SendMsg([]byte("x"), nil, Control{Rights: []*fs.Description{dx}}, treeNames{})

	for _, desc := range []*fs.Description{da, db, dc, dd, dg, dx, dy} {
		desc.DecRef() // the descriptors closed: only messages hold them
	}
	if mm.Charged.Total() == base {
		t.Fatal("nothing charged for the messages in flight")
	}
	if n := st.CollectUnixCycles(); n != 5 {
		t.Fatalf("collected %d sockets, want the 5 in cycles", n)
	}
	if n := st.CollectUnixCycles(); n != 0 {
		t.Fatalf("a second collection found %d", n)
	}
	if dx.Refs() != 1 || dy.Refs() != 1 {
		t.Fatalf("the reachable sockets' references: %d and %d, want 1 each", dx.Refs(), dy.Refs())
	}
	// The live socket still delivers x, and x still delivers y.
	buf := make([]byte, 8)
	n, r, err := live.RecvMsg(buf, false)
	if err != nil || n != 1 || len(r.Rights) != 1 || r.Rights[0] != dx {
		t.Fatalf("recv from the live socket: %d %v %v", n, r.Rights, err)
	}
	n, r, err = x.RecvMsg(buf, false)
	if err != nil || n != 1 || len(r.Rights) != 1 || r.Rights[0] != dy {
		t.Fatalf("recv from x: %d %v %v", n, r.Rights, err)
	}
	dropRights([]*fs.Description{dx, dy})
	for _, s := range []*UnixSocket{live, liveOut, xPeer} {
		s.Close()
	}
	gPeer.Close()
	if got := mm.Charged.Total() - base; got != 0 {
		t.Fatalf("%d bytes still charged after every socket is gone", got)
	}
	if n := len(st.inflight.count); n != 0 {
		t.Fatalf("%d descriptions still counted in flight", n)
	}
}

// userNames is a Namespace whose caller is user uid, with limit
// descriptions in flight.
type userNames struct {
	treeNames
	uid   uint32
	limit uint64
}

func (ns userNames) Caller() Caller {
	return Caller{PID: 1, UID: ns.uid, GID: ns.uid, EUID: ns.uid, EGID: ns.uid, InflightLimit: ns.limit}
}

// TestUnixInflightPerUser: a user's sends pass descriptions while it has
// no more than its limit in flight (ETOOMANYREFS after), on stream and
// datagram sockets alike and whatever the socket; receiving, closing the
// receiver and collecting a closed cycle give the count back, to the
// sender whoever receives; another user has its own count.
func TestUnixInflightPerUser(t *testing.T) {
	st := loopbackStack(t)
	user, other := userNames{uid: 1000, limit: 2}, userNames{uid: 1001, limit: 2}
	pipe := opened(st.NewUnixStream(false, Caller{}))
	defer pipe.DecRef()
	pass := func(s Socket, ns Namespace) error {
		_, err := s.SendMsg([]byte("x"), nil, Control{Rights: []*fs.Description{pipe}}, ns)
		return err
	}
	a, b := st.UnixStreamPair(false, Caller{})
	for i := range 3 {
		if err := pass(a, user); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	g, gPeer := st.UnixDgramPair(Caller{})
	if err := pass(g, user); err != unix.ETOOMANYREFS {
		t.Fatalf("send past the limit: %v, want ETOOMANYREFS", err)
	}
	if _, err := a.SendMsg([]byte("x"), nil, Control{}, user); err != nil {
		t.Fatalf("send without descriptions: %v", err)
	}
	if err := pass(g, other); err != nil {
		t.Fatalf("another user's send: %v", err)
	}
	if err := pass(g, userNames{uid: 1000, limit: 3}); err != nil {
		t.Fatalf("a send of the user's with a higher limit: %v", err)
	}
	_, r, err := b.RecvMsg(make([]byte, 1), false)
	if err != nil || len(r.Rights) != 1 {
		t.Fatalf("recv: %v %v", r.Rights, err)
	}
	dropRights(r.Rights)
	if err := pass(a, user); err == nil {
		t.Fatal("a send with 3 of the user's in flight went")
	}
	for range 2 { // the other user's datagram, then the user's
		if _, r, _ = gPeer.RecvMsg(make([]byte, 1), false); len(r.Rights) != 1 {
			t.Fatalf("recv from the datagram socket: %v", r.Rights)
		}
		dropRights(r.Rights)
	}
	if err := pass(a, user); err != nil {
		t.Fatalf("send after two were received: %v", err)
	}
	b.Close()
	if got := st.inflight.byUser[1000]; got != 0 {
		t.Fatalf("user 1000 has %d in flight after its receiver closed", got)
	}

	// A cycle the user made and closed is collected when its next send
	// finds it over its limit.
	for range 3 {
		c, d := st.UnixStreamPair(false, Caller{})
		dd := opened(d)
		if _, err := c.SendMsg([]byte("x"), nil, Control{Rights: []*fs.Description{dd}}, user); err != nil {
			t.Fatalf("send of a socket over itself: %v", err)
		}
		dd.DecRef()
		c.Close()
	}
	if err := pass(g, user); err != nil {
		t.Fatalf("send with closed cycles in flight: %v", err)
	}
	a.Close()
	g.Close()
	gPeer.Close()
	if n := len(st.inflight.byUser); n != 0 {
		t.Fatalf("counts left: %v", st.inflight.byUser)
	}
}
