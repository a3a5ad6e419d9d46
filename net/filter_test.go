package net

import (
	"testing"

	"golang.org/x/sys/unix"
)

// keepFilter keeps keep bytes of each datagram and counts its
// references.
type keepFilter struct {
	keep uint32
	refs int
}

func (f *keepFilter) Filter([]byte) uint32 { return f.keep }
func (f *keepFilter) DecRef()              { f.refs-- }

// A receiver's filter drops a datagram (the send still succeeds) or
// truncates it; detaching and closing give its reference back.
func TestUnixDgramFilter(t *testing.T) {
	a, b := loopbackStack(t).UnixDgramPair(Caller{})
	drop, trim := &keepFilter{keep: 0, refs: 1}, &keepFilter{keep: 3, refs: 1}
	b.AttachFilter(drop)
	if n, err := a.Write([]byte("hello")); n != 5 || err != nil {
		t.Fatalf("send dropped: %d %v", n, err)
	}
	if _, _, err := b.RecvMsg(make([]byte, 8), false); err != unix.EAGAIN {
		t.Errorf("dropped datagram received: %v", err)
	}
	b.AttachFilter(trim)
	if drop.refs != 0 {
		t.Errorf("replaced filter holds %d references", drop.refs)
	}
	a.Write([]byte("hello"))
	buf := make([]byte, 8)
	if n, r, err := b.RecvMsg(buf, false); n != 3 || r.Total != 3 || string(buf[:n]) != "hel" || err != nil {
		t.Errorf("truncated datagram: %q total %d %v", buf[:n], r.Total, err)
	}
	if err := b.DetachFilter(); err != nil || trim.refs != 0 {
		t.Errorf("detach: %v, %d references", err, trim.refs)
	}
	if err := b.DetachFilter(); err != unix.ENOENT {
		t.Errorf("detach again: %v", err)
	}
	last := &keepFilter{keep: 1, refs: 1}
	b.AttachFilter(last)
	b.Close()
	if last.refs != 0 {
		t.Errorf("closed socket's filter holds %d references", last.refs)
	}
}
