package net

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

func TestUnixSendsChargedUntilReadOrClosed(t *testing.T) {
	base := mm.Charged.Total()
	a, b := loopbackStack(t).UnixStreamPair(false, Caller{})
	a.Write(make([]byte, 1000))
	a.Write(make([]byte, 500))
	if got := mm.Charged.Total() - base; got != 1500+2*unixSegmentOverhead {
		t.Fatalf("2 sends of 1500 bytes charge %d", got)
	}
	b.Read(make([]byte, 1200)) // takes the first segment and part of the second
	if got := mm.Charged.Total() - base; got != 500+unixSegmentOverhead {
		t.Fatalf("after the first segment is read, %d charged", got)
	}
	a.Close()
	if got := mm.Charged.Total() - base; got != 500+unixSegmentOverhead {
		t.Fatalf("the sender's close dropped what the peer has not read: %d charged", got)
	}
	b.Close()
	if got := mm.Charged.Total() - base; got != 0 {
		t.Fatalf("both ends closed, %d still charged", got)
	}
}

func TestUnixSendStopsAtSndbufThenBudget(t *testing.T) {
	a, b := loopbackStack(t).UnixStreamPair(false, Caller{})
	defer a.Close()
	defer b.Close()
	a.SetIntOption(unix.SOL_SOCKET, unix.SO_SNDBUF, 5000) // doubled: 10000
	if n, err := a.Write(make([]byte, 20000)); n != 10000-unixSegmentOverhead || err != nil {
		t.Fatalf("write of 20000 with SO_SNDBUF 10000: %d %v", n, err)
	}
	if _, err := a.Write([]byte("x")); err != unix.EAGAIN {
		t.Fatalf("write to a full SO_SNDBUF: %v, want EAGAIN", err)
	}
	mm.Charged.SetLimit(mm.Charged.Total() + 100)
	defer mm.Charged.SetLimit(0)
	if _, err := b.Write(make([]byte, 1000)); err != unix.ENOBUFS {
		t.Fatalf("write with the budget spent: %v, want ENOBUFS", err)
	}
}
