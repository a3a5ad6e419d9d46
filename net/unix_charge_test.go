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

func TestUnixDatagramsChargedToTheirSender(t *testing.T) {
	base := mm.Charged.Total()
	st := loopbackStack(t)
	ns := treeNames{}
	r, a, b := st.NewUnixDgram(), st.NewUnixDgram(), st.NewUnixDgram()
	at := Addr{Family: unix.AF_UNIX, Path: "/log"}
	if err := r.Bind(at, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SendMsg(make([]byte, 1000), &at, Control{}, ns); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SendMsg(make([]byte, 300), &at, Control{}, ns); err != nil {
		t.Fatal(err)
	}
	if got := mm.Charged.Total() - base; got != 1300+2*unixSegmentOverhead {
		t.Fatalf("2 datagrams of 1300 bytes charge %d", got)
	}
	if a.wmem.Load() != 1000+unixSegmentOverhead || b.wmem.Load() != 300+unixSegmentOverhead {
		t.Fatalf("senders' SO_SNDBUF charge: %d %d", a.wmem.Load(), b.wmem.Load())
	}
	if n, rcv, err := r.RecvMsg(make([]byte, 10), false); n != 10 || rcv.Total != 1000 || err != nil {
		t.Fatalf("RecvMsg = %d %+v %v, want 10 of 1000", n, rcv, err)
	}
	if a.wmem.Load() != 0 || mm.Charged.Total()-base != 300+unixSegmentOverhead {
		t.Fatalf("after the first is received: sender %d, %d charged", a.wmem.Load(), mm.Charged.Total()-base)
	}
	r.Close()
	if b.wmem.Load() != 0 || mm.Charged.Total() != base {
		t.Fatalf("the receiver closed: sender %d, %d charged", b.wmem.Load(), mm.Charged.Total()-base)
	}
	if _, err := b.SendMsg([]byte("x"), &at, Control{}, ns); err != unix.ECONNREFUSED {
		t.Fatalf("send to a closed receiver: %v, want ECONNREFUSED", err)
	}
}

func TestUnixDatagramSendStopsAtSndbufThenBudget(t *testing.T) {
	a, b := loopbackStack(t).UnixDgramPair(Caller{})
	defer a.Close()
	defer b.Close()
	a.SetIntOption(unix.SOL_SOCKET, unix.SO_SNDBUF, 2500) // doubled: 5000
	sent := 0
	for ; sent < 100; sent++ {
		if _, err := a.Write(make([]byte, 1000)); err != nil {
			if err != unix.EAGAIN {
				t.Fatalf("send to a full SO_SNDBUF: %v, want EAGAIN", err)
			}
			break
		}
	}
	if sent != 5 { // sent while less than SO_SNDBUF was charged, as Linux's sock_alloc_send_pskb
		t.Fatalf("%d datagrams of 1000 bytes sent with SO_SNDBUF 5000", sent)
	}
	if a.Readiness(unix.EPOLLOUT) != 0 {
		t.Fatal("writable with SO_SNDBUF full")
	}
	mm.Charged.SetLimit(mm.Charged.Total() + 100)
	defer mm.Charged.SetLimit(0)
	if _, err := b.Write(make([]byte, 1000)); err != unix.ENOBUFS {
		t.Fatalf("send with the budget spent: %v, want ENOBUFS", err)
	}
}
