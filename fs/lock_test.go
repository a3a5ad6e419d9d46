package fs

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestLockListOrder checks the list F_GETLK reports from: an owner's
// locks by start, adjacent locks of one type merged, a lock split by
// another type's.
func TestLockListOrder(t *testing.T) {
	tr := NewTree(NewDir(0o755))
	n := &Node{Mode: 0o644}
	set := func(l Lock) {
		t.Helper()
		if err := tr.SetLock(n, l, false, false); err != nil {
			t.Fatal(err)
		}
	}
	set(Lock{Owner: 1, Write: true, Start: 10, End: 15})
	set(Lock{Owner: 1, Start: 1, End: 6})
	set(Lock{Owner: 1, Start: 6, End: 10}) // merges with 1..6
	set(Lock{Owner: 2, Start: 20, End: 25})
	set(Lock{Owner: 1, Write: true, Start: 3, End: 5}) // splits 1..10
	got := tr.locks.byNode[n].posix
	want := []Lock{
		{Owner: 1, Start: 1, End: 3}, {Owner: 1, Write: true, Start: 3, End: 5}, {Owner: 1, Start: 5, End: 10},
		{Owner: 1, Write: true, Start: 10, End: 15}, {Owner: 2, Start: 20, End: 25},
	}
	if len(got) != len(want) {
		t.Fatalf("locks %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("lock %d is %+v, want %+v", i, got[i], want[i])
		}
	}
	if l, _ := tr.TestLock(n, Lock{Owner: 3, Write: true}); l != want[0] {
		t.Errorf("F_GETLK reports %+v, want %+v", l, want[0])
	}
}

// TestLockDeadlock checks that a waiter whose lock's holder waits for
// it, directly or through another owner, gets EDEADLK.
func TestLockDeadlock(t *testing.T) {
	tr := NewTree(NewDir(0o755))
	n := &Node{Mode: 0o644}
	for i, owner := range []int{1, 2, 3} {
		if err := tr.SetLock(n, Lock{Owner: owner, Write: true, Start: int64(i), End: int64(i + 1)}, false, false); err != nil {
			t.Fatal(err)
		}
	}
	// 1 waits for 2's lock, 2 for 3's.
	if err := tr.SetLock(n, Lock{Owner: 1, Write: true, Start: 1, End: 2}, false, true); err != unix.EAGAIN {
		t.Fatalf("1 waiting for 2: %v", err)
	}
	if err := tr.SetLock(n, Lock{Owner: 2, Write: true, Start: 2, End: 3}, false, true); err != unix.EAGAIN {
		t.Fatalf("2 waiting for 3: %v", err)
	}
	if err := tr.SetLock(n, Lock{Owner: 3, Write: true, Start: 0, End: 1}, false, true); err != unix.EDEADLK {
		t.Errorf("3 waiting for 1 closes the loop: %v, want EDEADLK", err)
	}
	tr.StopWaiting(2)
	if err := tr.SetLock(n, Lock{Owner: 3, Write: true, Start: 0, End: 1}, false, true); err != unix.EAGAIN {
		t.Errorf("after 2 stopped waiting: %v, want EAGAIN", err)
	}
}
