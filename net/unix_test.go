package net

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestSocketPair(t *testing.T) {
	a, b := SocketPair(false)
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
	b.SetNonblock(true)
	if _, err := b.Read(buf); err != unix.EAGAIN {
		t.Fatalf("empty non-blocking read: %v", err)
	}
	b.SetNonblock(false)
	go func() {
		time.Sleep(20 * time.Millisecond)
		a.Write([]byte("late"))
		a.Close()
	}()
	if n, _ := b.Read(buf); string(buf[:n]) != "late" {
		t.Fatalf("blocking read got %q", buf[:n])
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
