package fs

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// testActor is a thread: its ids, its descriptor table, and a wait that
// fails when stop is closed (a signal).
type testActor struct {
	pid  int32
	fds  FDTable
	stop chan struct{}
}

func (a *testActor) NotifyIDs() (int32, int32) { return a.pid, a.pid + 1 }
func (a *testActor) FDs() *FDTable             { return &a.fds }
func (a *testActor) WaitAnswer(answered <-chan struct{}) error {
	select {
	case <-answered:
		return nil
	case <-a.stop:
		return unix.EINTR
	}
}

// actingBytes is a buffer read by an actor.
type actingBytes struct {
	*Bytes
	a *testActor
}

func (b actingBytes) Actor() Actor { return b.a }

// fanotifyTree is a tree with /d holding n files, and their nodes.
func fanotifyTree(t *testing.T, n int) (*Tree, []*Node) {
	tree := NewTree(NewDir(0o755))
	if err := tree.Mkdir(nil, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	nodes := make([]*Node, n)
	for i := range nodes {
		node, _, err := tree.Open(nil, fmt.Sprintf("/d/%d", i), OpenFlags{Create: true, Perm: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = node
	}
	return tree, nodes
}

// readEvents reads the queued events: their masks and pids.
func readEvents(t *testing.T, g *Fanotify, a *testActor) (masks []uint64, pids []int32) {
	buf := make([]byte, 24*64)
	for {
		n, err := g.ReadTo(actingBytes{NewBytes(buf), a})
		if err == unix.EAGAIN {
			return masks, pids
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < int(n); off += 24 {
			masks = append(masks, binary.LittleEndian.Uint64(buf[off+8:]))
			if fd := int32(binary.LittleEndian.Uint32(buf[off+16:])); fd >= 0 {
				a.fds.Close(int(fd))
			}
			pids = append(pids, int32(binary.LittleEndian.Uint32(buf[off+20:])))
		}
	}
}

func TestFanotifyMergeOverflowAndCharge(t *testing.T) {
	tree, nodes := fanotifyTree(t, fanotifyDefaultQueuedEvents+2)
	base := mm.Charged.Total()
	g, err := NewFanotify(tree, 0, unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := tree.Lookup(nil, "/d", true)
	if err := g.AddMark(FanotifyTarget{Node: dir}, unix.FAN_OPEN|unix.FAN_MODIFY|unix.FAN_EVENT_ON_CHILD, unix.FAN_MARK_ADD); err != nil {
		t.Fatal(err)
	}
	a, b := &testActor{pid: 10}, &testActor{pid: 20}
	// One object and process merge; another process does not.
	tree.NotifyOpen(nil, nodes[0], "/d/0", true, a)
	tree.NotifyOpen(nil, nodes[0], "/d/0", false, b)
	reader := &testActor{pid: 1}
	masks, pids := readEvents(t, g, reader)
	if fmt.Sprint(masks, pids) != "[34 32] [10 20]" {
		t.Fatalf("merged events: masks %v pids %v", masks, pids)
	}
	for i, n := range nodes {
		tree.NotifyOpen(nil, n, fmt.Sprintf("/d/%d", i), false, a)
	}
	if got := mm.Charged.Total() - base; got != fanotifyMarkCost+fanotifyDefaultQueuedEvents*fanotifyEventCost {
		t.Fatalf("a full queue charges %d bytes", got)
	}
	masks, _ = readEvents(t, g, reader)
	if len(masks) != fanotifyDefaultQueuedEvents+1 || masks[len(masks)-1] != unix.FAN_Q_OVERFLOW {
		t.Fatalf("%d events, the last %#x", len(masks), masks[len(masks)-1])
	}
	tree.NotifyOpen(nil, nodes[1], "/d/1", false, a)
	g.Close()
	if got := mm.Charged.Total() - base; got != 0 {
		t.Fatalf("a closed group keeps %d bytes charged", got)
	}
	if tree.notify.count.Load() != 0 {
		t.Fatal("a closed group's mark stays in the table")
	}
}

func TestFanotifyMarks(t *testing.T) {
	tree, nodes := fanotifyTree(t, 1)
	g, _ := NewFanotify(tree, 0, unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	defer g.Close()
	target := FanotifyTarget{Node: nodes[0]}
	if err := g.RemoveMark(target, unix.FAN_OPEN, 0); err != unix.ENOENT {
		t.Fatalf("removing no mark: %v", err)
	}
	g.AddMark(target, unix.FAN_OPEN, 0)
	g.AddMark(target, unix.FAN_OPEN, unix.FAN_MARK_IGNORED_MASK)
	a := &testActor{pid: 10}
	tree.NotifyOpen(nil, nodes[0], "/d/0", false, a)
	if masks, _ := readEvents(t, g, a); len(masks) != 0 {
		t.Fatalf("an ignored open was reported: %v", masks)
	}
	g.RemoveMark(target, unix.FAN_OPEN, unix.FAN_MARK_IGNORED_MASK)
	tree.NotifyOpen(nil, nodes[0], "/d/0", false, a)
	if masks, _ := readEvents(t, g, a); len(masks) != 1 {
		t.Fatalf("after the ignored mask's removal: %v", masks)
	}
	g.RemoveMark(target, unix.FAN_OPEN|unix.FAN_ONDIR, 0)
	if len(g.marks) != 0 || tree.notify.count.Load() != 0 {
		t.Fatal("a mark left with nothing stays")
	}
	// The user's marks are bounded; FAN_UNLIMITED_MARKS lifts it.
	tree.notify.user(0).fanMarks = fanotifyDefaultUserMarks
	if err := g.AddMark(target, unix.FAN_OPEN, 0); err != unix.ENOSPC {
		t.Fatalf("past the user's marks: %v", err)
	}
	u, _ := NewFanotify(tree, 0, unix.FAN_CLASS_NOTIF|unix.FAN_UNLIMITED_MARKS, unix.O_RDONLY)
	if err := u.AddMark(target, unix.FAN_OPEN, 0); err != nil {
		t.Fatalf("unlimited marks: %v", err)
	}
	u.Close()
	tree.notify.user(0).fanMarks = 0
}

func TestFanotifyPermission(t *testing.T) {
	tree, nodes := fanotifyTree(t, 1)
	g, _ := NewFanotify(tree, 0, unix.FAN_CLASS_CONTENT, unix.O_RDONLY)
	g.AddMark(FanotifyTarget{Node: nodes[0]}, unix.FAN_OPEN_PERM, 0)
	listener := &testActor{pid: 1}
	ask := func(a *testActor) chan error {
		done := make(chan error, 1)
		go func() { done <- tree.OpenPermission(nodes[0], "/d/0", a) }()
		return done
	}
	// answered reads the next event and answers it.
	answer := func(response uint32) {
		buf := make([]byte, 24)
		deadline := time.Now().Add(5 * time.Second)
		for {
			n, err := g.ReadTo(actingBytes{NewBytes(buf), listener})
			if err == nil && n == 24 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no permission event")
			}
			time.Sleep(time.Millisecond)
		}
		fd := int32(binary.LittleEndian.Uint32(buf[16:]))
		if err := g.Answer(fd, response); err != nil {
			t.Fatal(err)
		}
		if err := g.Answer(fd, response); err != unix.ENOENT {
			t.Fatalf("answering twice: %v", err)
		}
		listener.fds.Close(int(fd))
	}
	a := &testActor{pid: 10, stop: make(chan struct{})}
	done := ask(a)
	answer(unix.FAN_ALLOW)
	if err := <-done; err != nil {
		t.Fatalf("allowed: %v", err)
	}
	done = ask(a)
	answer(unix.FAN_DENY)
	if err := <-done; err != unix.EPERM {
		t.Fatalf("denied: %v", err)
	}
	// A waiter interrupted gives up its event.
	done = ask(a)
	for g.Readiness(unix.EPOLLIN) == 0 {
		time.Sleep(time.Millisecond)
	}
	close(a.stop)
	if err := <-done; err != unix.EINTR {
		t.Fatalf("interrupted: %v", err)
	}
	if g.Readiness(unix.EPOLLIN) != 0 {
		t.Fatal("an interrupted waiter's event stays queued")
	}
	// Closing the group lets a waiter go.
	done = ask(&testActor{pid: 11, stop: make(chan struct{})})
	for g.Readiness(unix.EPOLLIN) == 0 {
		time.Sleep(time.Millisecond)
	}
	g.Close()
	if err := <-done; err != nil {
		t.Fatalf("after the group closed: %v", err)
	}
}
