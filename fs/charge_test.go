package fs

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// limitCharge lets only n more bytes be charged for the rest of the test.
func limitCharge(t *testing.T, n int64) {
	mm.Charged.SetLimit(mm.Charged.Total() + n)
	t.Cleanup(func() { mm.Charged.SetLimit(0) })
}

// limitBufferCharge leaves n bytes of the budget to buffers
// (mm.Budget.ChargeBuffer), the object reserve above them.
func limitBufferCharge(t *testing.T, n int64) {
	want := mm.Charged.Total() + n
	limit := want * mm.ObjectReserve / (mm.ObjectReserve - 1)
	for limit-limit/mm.ObjectReserve > want {
		limit--
	}
	for limit-limit/mm.ObjectReserve < want {
		limit++
	}
	mm.Charged.SetLimit(limit)
	t.Cleanup(func() { mm.Charged.SetLimit(0) })
}

func TestPipePagesChargedUntilLastEndCloses(t *testing.T) {
	base := mm.Charged.Total()
	r, w := NewPipeLimits().NewPipe(0, true)
	if n, err := w.writeBytes(make([]byte, 3*pipePage)); n != 3*pipePage || err != nil {
		t.Fatalf("write of 3 pages: %d %v", n, err)
	}
	if got := mm.Charged.Total() - base; got != 3*pipePage {
		t.Fatalf("3 pages queued charge %d bytes", got)
	}
	w.Close()
	if got := mm.Charged.Total() - base; got != 3*pipePage {
		t.Fatalf("with the reader open, %d bytes charged, want the 3 unread pages", got)
	}
	r.Close()
	if got := mm.Charged.Total() - base; got != 0 {
		t.Fatalf("both ends closed, %d bytes still charged", got)
	}
}

func TestPipeWriteFailsWithENOMEMWhenBudgetSpent(t *testing.T) {
	r, w := NewPipeLimits().NewPipe(0, true)
	defer r.Close()
	defer w.Close()
	limitBufferCharge(t, pipePage)
	if n, err := w.writeBytes(make([]byte, 2*pipePage)); n != pipePage || err != nil {
		t.Fatalf("write of 2 pages with room for 1: %d %v, want %d nil", n, err, pipePage)
	}
	if n, err := w.writeBytes(make([]byte, pipePage)); n != 0 || err != unix.ENOMEM {
		t.Fatalf("write with the budget spent: %d %v, want ENOMEM", n, err)
	}
}

func TestEpollItemsChargedUntilRemoved(t *testing.T) {
	base := mm.Charged.Total()
	ep := NewEpoll()
	a := NewDescription(NewEventFD(0, false), unix.O_RDWR)
	b := NewDescription(NewEventFD(0, false), unix.O_RDWR)
	for fd, d := range map[int]*Description{3: a, 4: b} {
		if err := ep.Ctl(unix.EPOLL_CTL_ADD, fd, d, unix.EPOLLIN, 0); err != nil {
			t.Fatal(err)
		}
	}
	if got := mm.Charged.Total() - base; got != 2*epollItemCharge {
		t.Fatalf("2 items charge %d bytes", got)
	}
	ep.Ctl(unix.EPOLL_CTL_DEL, 3, a, 0, 0)
	if got := mm.Charged.Total() - base; got != epollItemCharge {
		t.Fatalf("after a DEL %d bytes charged", got)
	}
	limitCharge(t, 0)
	if err := ep.Ctl(unix.EPOLL_CTL_ADD, 3, a, unix.EPOLLIN, 0); err != unix.ENOMEM {
		t.Fatalf("ADD with the budget spent: %v, want ENOMEM", err)
	}
	ep.Close()
	if got := mm.Charged.Total() - base; got != 0 {
		t.Fatalf("epoll closed, %d bytes still charged", got)
	}
}
