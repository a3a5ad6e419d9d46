package sysno

import "testing"

func TestName(t *testing.T) {
	for nr, want := range map[uint64]string{
		56: "openat", 63: "read", 64: "write", 93: "exit", 94: "exit_group",
		98: "futex", 167: "prctl", 220: "clone", 222: "mmap", 242: "accept4",
		260: "wait4", 278: "getrandom", 20: "epoll_create1", 71: "sendfile",
	} {
		if got := Name(nr); got != want {
			t.Errorf("Name(%d) = %q, want %q", nr, got, want)
		}
	}
	if got := Name(100000); got != "unknown" {
		t.Errorf("Name(100000) = %q", got)
	}
}
