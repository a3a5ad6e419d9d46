package net

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

func TestSocketPair(t *testing.T) {
	a, b := SocketPair()
	if n, err := a.Write([]byte("ping")); n != 4 || err != nil {
		t.Fatalf("Write = %d %v", n, err)
	}
	if b.Readiness(unix.EPOLLIN) == 0 || a.Readiness(unix.EPOLLIN) != 0 {
		t.Fatal("readiness after a write")
	}
	buf := make([]byte, 16)
	if n, err := b.Read(buf); n != 4 || err != nil || string(buf[:4]) != "ping" {
		t.Fatalf("Read = %q %v", buf[:n], err)
	}
	if _, err := b.Read(buf); err != unix.EAGAIN {
		t.Fatalf("empty read: %v", err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		a.Write([]byte("late"))
		a.Close()
	}()
	waitReadable(t, b)
	if n, _ := b.Read(buf); string(buf[:n]) != "late" {
		t.Fatalf("read after the wake-up got %q", buf[:n])
	}
	if n, err := b.Read(buf); n != 0 || err != nil {
		t.Fatalf("read after peer close = %d %v, want end of stream", n, err)
	}
	if _, err := b.Write([]byte("x")); err != unix.EPIPE {
		t.Fatalf("write to closed peer: %v", err)
	}
	if b.Readiness(unix.EPOLLHUP) == 0 {
		t.Fatal("no HUP after peer close")
	}
}

// waitReadable waits, up to 10 s, until w is readable or hung up.
func waitReadable(t testing.TB, w fs.Waitable) {
	t.Helper()
	changed := make(chan struct{}, 1)
	cancel := w.Watch(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancel()
	deadline := time.After(10 * time.Second)
	for w.Readiness(unix.EPOLLIN|unix.EPOLLHUP) == 0 {
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("not readable after 10 s")
		}
	}
}
