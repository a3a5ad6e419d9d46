package fs

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func write8(t *testing.T, f File, v uint64) {
	t.Helper()
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	if _, err := writeBytes(f, b); err != nil {
		t.Fatal(err)
	}
}

func TestEpollLevelAndEdge(t *testing.T) {
	ep := NewEpoll()
	lt, et := NewEventFD(0, false), NewEventFD(0, false)
	ltd, etd := NewDescription(lt, unix.O_RDWR), NewDescription(et, unix.O_RDWR)
	if err := ep.Ctl(unix.EPOLL_CTL_ADD, 3, ltd, unix.EPOLLIN, 30); err != nil {
		t.Fatal(err)
	}
	if err := ep.Ctl(unix.EPOLL_CTL_ADD, 4, etd, unix.EPOLLIN|unix.EPOLLET, 40); err != nil {
		t.Fatal(err)
	}
	if err := ep.Ctl(unix.EPOLL_CTL_ADD, 4, etd, unix.EPOLLIN, 40); err != unix.EEXIST {
		t.Fatalf("second ADD: %v", err)
	}
	if evs, _ := waitEvents(ep, 8, nil); len(evs) != 0 {
		t.Fatalf("nothing ready, got %v", evs)
	}
	write8(t, lt, 1)
	write8(t, et, 1)
	evs, _ := waitEvents(ep, 8, nil)
	if len(evs) != 2 || evs[0] != (Event{Events: unix.EPOLLIN, Data: 30}) || evs[1] != (Event{Events: unix.EPOLLIN, Data: 40}) {
		t.Fatalf("first wait: %v", evs)
	}
	evs, _ = waitEvents(ep, 8, nil)
	if len(evs) != 1 || evs[0].Data != 30 {
		t.Fatalf("level-triggered must repeat, edge-triggered must not: %v", evs)
	}
	write8(t, et, 1) // a new edge
	if evs, _ := waitEvents(ep, 8, nil); len(evs) != 2 {
		t.Fatalf("after a new write: %v", evs)
	}
	// A watch stays while another descriptor refers to the description
	// (as on Linux), and goes with the description's last reference.
	var tab FDTable
	tab.Open(ep, unix.O_RDWR, false)
	if fd, _ := tab.Install(ltd, false, 3); fd != 3 {
		t.Fatalf("installed at %d", fd)
	}
	if fd, _ := tab.Install(ltd, false, 0); fd != 1 {
		t.Fatalf("dup installed at %d", fd)
	}
	if err := tab.Close(3); err != nil {
		t.Fatal(err)
	}
	if evs, _ := waitEvents(ep, 8, nil); len(evs) != 1 || evs[0].Data != 30 {
		t.Fatalf("a description still open must stay watched: %v", evs)
	}
	if err := tab.Close(1); err != nil {
		t.Fatal(err)
	}
	if evs, _ := waitEvents(ep, 8, nil); len(evs) != 0 {
		t.Fatalf("closed description still reported: %v", evs)
	}
	if err := ep.Ctl(unix.EPOLL_CTL_ADD, 5, NewDescription(NewTree(NewDir(0o755)).OpenNode(&Node{Mode: 0o644}, "/f"), unix.O_RDONLY), unix.EPOLLIN, 0); err != unix.EPERM {
		t.Fatalf("regular file: %v", err)
	}
}

func TestEpollWaitBlocksUntilEventOrError(t *testing.T) {
	ep := NewEpoll()
	e := NewEventFD(0, false)
	d := NewDescription(e, unix.O_RDWR)
	ep.Ctl(unix.EPOLL_CTL_ADD, 3, d, unix.EPOLLIN|unix.EPOLLONESHOT, 7)
	timeout := func(ready <-chan struct{}) error {
		select {
		case <-ready:
			return nil
		case <-time.After(50 * time.Millisecond):
			return unix.ETIMEDOUT
		}
	}
	if evs, err := waitEvents(ep, 1, timeout); len(evs) != 0 || err != unix.ETIMEDOUT {
		t.Fatalf("timeout: %v %v", evs, err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		write8(t, e, 5)
	}()
	evs, err := waitEvents(ep, 1, func(ready <-chan struct{}) error { <-ready; return nil })
	if len(evs) != 1 || evs[0].Data != 7 || err != nil {
		t.Fatalf("blocking wait: %v %v", evs, err)
	}
	if evs, _ := waitEvents(ep, 1, nil); len(evs) != 0 {
		t.Fatalf("one-shot fired twice: %v", evs)
	}
	ep.Ctl(unix.EPOLL_CTL_MOD, 3, d, unix.EPOLLIN, 8)
	if evs, _ := waitEvents(ep, 1, nil); len(evs) != 1 || evs[0].Data != 8 {
		t.Fatalf("re-armed: %v", evs)
	}
}

func TestEventFDCounter(t *testing.T) {
	e := NewEventFD(3, true)
	b := make([]byte, 8)
	for i := 0; i < 3; i++ {
		if n, err := readBytes(e, b); n != 8 || err != nil || binary.LittleEndian.Uint64(b) != 1 {
			t.Fatalf("semaphore read %d: %d %v", i, n, err)
		}
	}
	if _, err := readBytes(e, b); err != unix.EAGAIN {
		t.Fatalf("empty non-blocking read: %v", err)
	}
	if _, err := readBytes(e, b[:4]); err != unix.EINVAL {
		t.Fatalf("short read: %v", err)
	}
	binary.LittleEndian.PutUint64(b, ^uint64(0))
	if _, err := writeBytes(e, b); err != unix.EINVAL {
		t.Fatalf("write of 2^64-1: %v", err)
	}
}

// queueFile is a Waitable that calls its watchers while it holds its own
// lock, as netstack's waiter queues do.
type queueFile struct {
	File // an eventfd, for the rest of the interface
	mu   sync.RWMutex
	fns  map[int]func()
	last int
}

func (q *queueFile) Readiness(mask uint32) uint32 { return mask & unix.EPOLLIN }

func (q *queueFile) Watch(notify func()) func() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.last++
	id := q.last
	q.fns[id] = notify
	return func() {
		q.mu.Lock()
		delete(q.fns, id)
		q.mu.Unlock()
	}
}

func (q *queueFile) notify() {
	q.mu.RLock()
	defer q.mu.RUnlock()
	for _, fn := range q.fns {
		fn()
	}
}

// TestEpollCtlWhileTheFileNotifies adds and removes a watch while the
// file notifies from another goroutine under its own lock: epoll_ctl holds
// the instance's lock while it takes the file's, so a notification must
// not take the instance's lock (nginx's workers on several harts stopped
// for good on exactly this).
func TestEpollCtlWhileTheFileNotifies(t *testing.T) {
	q := &queueFile{File: NewEventFD(0, false), fns: map[int]func(){}}
	d := NewDescription(q, unix.O_RDWR)
	ep := NewEpoll()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				q.notify()
			}
		}
	}()
	done := make(chan error, 1)
	go func() {
		for range 20000 {
			if err := ep.Ctl(unix.EPOLL_CTL_ADD, 3, d, unix.EPOLLIN|unix.EPOLLET, 3); err != nil {
				done <- err
				return
			}
			if evs, _ := waitEvents(ep, 1, nil); len(evs) != 1 {
				done <- fmt.Errorf("a new edge-triggered watch of a ready file reported %v", evs)
				return
			}
			if err := ep.Ctl(unix.EPOLL_CTL_DEL, 3, d, 0, 0); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("epoll_ctl and the file's notification deadlocked")
	}
}

// waitEvents is ep.Wait with a Waiting of its own: the events, or the error.
func waitEvents(ep *Epoll, max int, block func(<-chan struct{}) error) ([]Event, error) {
	var w Waiting
	err := ep.Wait(max, block, &w)
	return w.Events, err
}

// BenchmarkEpollWaitAmongIdle: one ready item among n idle ones. A wait
// looks at the ready list only, so its cost does not grow with n.
func BenchmarkEpollWaitAmongIdle(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ep := NewEpoll()
			for fd := range n {
				if err := ep.Ctl(unix.EPOLL_CTL_ADD, fd, NewDescription(NewEventFD(0, false), unix.O_RDWR), unix.EPOLLIN, uint64(fd)); err != nil {
					b.Fatal(err)
				}
			}
			ready := NewEventFD(1, false)
			if err := ep.Ctl(unix.EPOLL_CTL_ADD, n, NewDescription(ready, unix.O_RDWR), unix.EPOLLIN, uint64(n)); err != nil {
				b.Fatal(err)
			}
			var w Waiting
			b.ReportAllocs()
			for b.Loop() {
				if err := ep.Wait(8, nil, &w); err != nil || len(w.Events) != 1 {
					b.Fatalf("%v, %v", w.Events, err)
				}
			}
		})
	}
}
