package fs

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func write8(t *testing.T, f File, v uint64) {
	t.Helper()
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func TestEpollLevelAndEdge(t *testing.T) {
	ep := NewEpoll()
	lt, et := NewEventFD(0, true, false), NewEventFD(0, true, false)
	if err := ep.Ctl(unix.EPOLL_CTL_ADD, 3, lt, unix.EPOLLIN, 30); err != nil {
		t.Fatal(err)
	}
	if err := ep.Ctl(unix.EPOLL_CTL_ADD, 4, et, unix.EPOLLIN|unix.EPOLLET, 40); err != nil {
		t.Fatal(err)
	}
	if err := ep.Ctl(unix.EPOLL_CTL_ADD, 4, et, unix.EPOLLIN, 40); err != unix.EEXIST {
		t.Fatalf("second ADD: %v", err)
	}
	if evs := ep.Wait(8, 0); len(evs) != 0 {
		t.Fatalf("nothing ready, got %v", evs)
	}
	write8(t, lt, 1)
	write8(t, et, 1)
	evs := ep.Wait(8, 0)
	if len(evs) != 2 || evs[0] != (Event{unix.EPOLLIN, 30}) || evs[1] != (Event{unix.EPOLLIN, 40}) {
		t.Fatalf("first wait: %v", evs)
	}
	evs = ep.Wait(8, 0)
	if len(evs) != 1 || evs[0].Data != 30 {
		t.Fatalf("level-triggered must repeat, edge-triggered must not: %v", evs)
	}
	write8(t, et, 1) // a new edge
	if evs := ep.Wait(8, 0); len(evs) != 2 {
		t.Fatalf("after a new write: %v", evs)
	}
	// Closing the descriptor removes the watch.
	var tab FDTable
	tab.Install(ep, false, 0)
	if fd, _ := tab.Install(lt, false, 3); fd != 3 {
		t.Fatalf("installed at %d", fd)
	}
	if err := tab.Close(3); err != nil {
		t.Fatal(err)
	}
	if evs := ep.Wait(8, 0); len(evs) != 0 {
		t.Fatalf("closed fd still reported: %v", evs)
	}
	if err := ep.Ctl(unix.EPOLL_CTL_ADD, 5, OpenNode(&Node{Mode: 0o644}), unix.EPOLLIN, 0); err != unix.EPERM {
		t.Fatalf("regular file: %v", err)
	}
}

func TestEpollWaitBlocksUntilEventOrTimeout(t *testing.T) {
	ep := NewEpoll()
	e := NewEventFD(0, false, false)
	ep.Ctl(unix.EPOLL_CTL_ADD, 3, e, unix.EPOLLIN|unix.EPOLLONESHOT, 7)
	start := time.Now()
	if evs := ep.Wait(1, 50*time.Millisecond); len(evs) != 0 || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("timeout: %v after %v", evs, time.Since(start))
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		write8(t, e, 5)
	}()
	evs := ep.Wait(1, -1)
	if len(evs) != 1 || evs[0].Data != 7 {
		t.Fatalf("blocking wait: %v", evs)
	}
	if evs := ep.Wait(1, 0); len(evs) != 0 {
		t.Fatalf("one-shot fired twice: %v", evs)
	}
	ep.Ctl(unix.EPOLL_CTL_MOD, 3, e, unix.EPOLLIN, 8)
	if evs := ep.Wait(1, 0); len(evs) != 1 || evs[0].Data != 8 {
		t.Fatalf("re-armed: %v", evs)
	}
}

func TestEventFDCounter(t *testing.T) {
	e := NewEventFD(3, true, true)
	b := make([]byte, 8)
	for i := 0; i < 3; i++ {
		if n, err := e.Read(b); n != 8 || err != nil || binary.LittleEndian.Uint64(b) != 1 {
			t.Fatalf("semaphore read %d: %d %v", i, n, err)
		}
	}
	if _, err := e.Read(b); err != unix.EAGAIN {
		t.Fatalf("empty non-blocking read: %v", err)
	}
	if _, err := e.Read(b[:4]); err != unix.EINVAL {
		t.Fatalf("short read: %v", err)
	}
	binary.LittleEndian.PutUint64(b, ^uint64(0))
	if _, err := e.Write(b); err != unix.EINVAL {
		t.Fatalf("write of 2^64-1: %v", err)
	}
}
