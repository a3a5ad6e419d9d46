package ipc

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// A queue's messages stay charged to the kernel-wide budget until
// received, or until the queue is both unlinked and closed; its
// RLIMIT_MSGQUEUE bytes come back then too, and the queue no longer
// counts against queues_max.
func TestMQueueChargesComeBack(t *testing.T) {
	ns := NewNamespace(nil, time.Now)
	before := mm.Charged.Total()
	open := MQOpen{Name: "q", Flags: unix.O_RDWR | unix.O_CREAT, Mode: 0o600, Limit: 1 << 20}
	f, err := ns.MQOpen(open, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two", "three"} {
		if err := ChargeMessage(len(text)); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Send([]byte(text), 1, true, root, 0); err != nil {
			t.Fatal(err)
		}
	}
	waiting := false
	text, _, _, err := f.Receive(8192, true, &waiting)
	if err != nil || string(text) != "one" {
		t.Fatalf("received %q, %v", text, err)
	}
	UnchargeMessage(len(text))
	if got, want := mm.Charged.Total()-before, int64(mqQueueCharge+2*msgHeader+len("twothree")); got != want {
		t.Errorf("charged %d with two messages queued, want %d", got, want)
	}
	if got := ns.mq.userBytes[0]; got != 10*msgHeader+10*mqNodeSize+10*8192 {
		t.Errorf("RLIMIT_MSGQUEUE counts %d for a default queue", got)
	}
	if err := ns.MQUnlink("q", root); err != nil {
		t.Fatal(err)
	}
	if ns.mq.count != 1 || mm.Charged.Total() == before {
		t.Errorf("an unlinked queue still open was freed (count %d)", ns.mq.count)
	}
	f.Close()
	if got := mm.Charged.Total() - before; got != 0 || ns.mq.count != 0 || len(ns.mq.userBytes) != 0 {
		t.Errorf("after unlink and close: charged %d, count %d, user bytes %v", got, ns.mq.count, ns.mq.userBytes)
	}
}
