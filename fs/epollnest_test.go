package fs

import (
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// nestedEpolls returns n instances with their descriptions.
func nestedEpolls(n int) ([]*Epoll, []*Description) {
	eps := make([]*Epoll, n)
	ds := make([]*Description, n)
	for i := range eps {
		eps[i] = NewEpoll()
		ds[i] = NewDescription(eps[i], unix.O_RDWR)
	}
	return eps, ds
}

func TestEpollNestRefusesLoopsAndDeepChains(t *testing.T) {
	eps, ds := nestedEpolls(7)
	add := func(parent, child int) error {
		return eps[parent].Ctl(unix.EPOLL_CTL_ADD, 10+child, ds[child], unix.EPOLLIN, 0)
	}
	// A chain 0 <- 1 <- 2 <- 3 <- 4 (each watches the one before): four
	// instances below the top, EP_MAX_NESTS.
	for i := 1; i <= 4; i++ {
		if err := add(i, i-1); err != nil {
			t.Fatalf("chain link %d: %v", i, err)
		}
	}
	if err := add(5, 4); err != unix.ELOOP {
		t.Fatalf("a fifth level below the top: %v, want ELOOP", err)
	}
	if err := add(0, 4); err != unix.ELOOP {
		t.Fatalf("closing the loop: %v, want ELOOP", err)
	}
	if err := add(2, 0); err != nil {
		t.Fatalf("a second path to a lower level (a diamond, no deeper): %v", err)
	}
	// A refused add leaves no link behind: removing the top frees a level.
	if err := eps[4].Ctl(unix.EPOLL_CTL_DEL, 13, ds[3], 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := add(5, 3); err != nil {
		t.Fatalf("after the top was cut off: %v", err)
	}
	// Closing an instance drops its links.
	eps[5].Close()
	if err := add(6, 3); err != nil {
		t.Fatalf("after the watcher closed: %v", err)
	}
	if err := add(3, 6); err != unix.ELOOP {
		t.Fatalf("two-instance loop: %v, want ELOOP", err)
	}
}

// Two threads adding a and b into each other at once: one of them must
// fail, whatever the interleaving.
func TestEpollNestConcurrentLoop(t *testing.T) {
	for round := 0; round < 200; round++ {
		eps, ds := nestedEpolls(2)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = eps[i].Ctl(unix.EPOLL_CTL_ADD, 5, ds[1-i], unix.EPOLLIN, 0)
			}()
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: both adds answered %v and %v", round, errs[0], errs[1])
		}
	}
}
