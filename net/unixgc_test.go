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
	a.SendMsg([]byte("a"), nil, Control{Rights: []*fs.Description{da}}, nil)
	b.SendMsg([]byte("b"), nil, Control{Rights: []*fs.Description{db}}, nil)
	c, d := st.UnixStreamPair(true, Caller{})
	dc, dd := opened(c), opened(d)
	c.SendMsg([]byte("c"), nil, Control{Rights: []*fs.Description{dd}}, nil)
	d.SendMsg([]byte("d"), nil, Control{Rights: []*fs.Description{dc}}, nil)
	g, gPeer := st.UnixDgramPair(Caller{})
	dg := opened(g)
	gPeer.SendMsg([]byte("g"), nil, Control{Rights: []*fs.Description{dg}}, nil)

	// A live pair whose queue carries x, which carries y.
	live, liveOut := st.UnixStreamPair(false, Caller{})
	x, xPeer := st.UnixStreamPair(false, Caller{})
	y, _ := st.UnixStreamPair(false, Caller{})
	dx, dy := opened(x), opened(y)
	xPeer.SendMsg([]byte("y"), nil, Control{Rights: []*fs.Description{dy}}, nil)
	liveOut.SendMsg([]byte("x"), nil, Control{Rights: []*fs.Description{dx}}, nil)

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
