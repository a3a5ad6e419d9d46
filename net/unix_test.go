package net

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// loopbackStack is a stack with only its loopback interface, for the tests.
func loopbackStack(t testing.TB) *Stack {
	t.Helper()
	s, err := NewLoopback()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSocketPair(t *testing.T) {
	a, b := loopbackStack(t).UnixStreamPair(false, Caller{})
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
	// The writer may not have closed yet when "late" was read.
	waitReadable(t, b)
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
	r := watchReady(w, unix.EPOLLIN|unix.EPOLLHUP)
	defer r.stop()
	r.wait(t)
}

// readyWatch waits for a file to be ready, watched from its start to its
// stop as epoll watches, so that a wait allocates nothing.
type readyWatch struct {
	w       fs.Waitable
	mask    uint32
	changed chan struct{}
	timeout *time.Timer
	cancel  func()
}

// watchReady starts watching w for the poll events in mask.
func watchReady(w fs.Waitable, mask uint32) *readyWatch {
	r := &readyWatch{w: w, mask: mask, changed: make(chan struct{}, 1), timeout: time.NewTimer(readyTimeout)}
	r.cancel = w.Watch(func() {
		select {
		case r.changed <- struct{}{}:
		default:
		}
	})
	return r
}

const readyTimeout = 10 * time.Second

// wait waits, up to readyTimeout, until one of the events holds.
func (r *readyWatch) wait(t testing.TB) {
	t.Helper()
	r.timeout.Reset(readyTimeout)
	for r.w.Readiness(r.mask) == 0 {
		select {
		case <-r.changed:
		case <-r.timeout.C:
			t.Fatalf("none of the events %#x after %v", r.mask, readyTimeout)
		}
	}
}

// stop ends the watch.
func (r *readyWatch) stop() {
	r.cancel()
	r.timeout.Stop()
}

// treeNames is a Namespace over a map from paths to what is bound there.
type treeNames map[string]any

func (ns treeNames) MakeSocketNode(path string, s Socket) error {
	if _, ok := ns[path]; ok {
		return unix.EADDRINUSE
	}
	ns[path] = s
	return nil
}

// Caller is a process of pid 1 run by user 1000, with the default
// RLIMIT_NOFILE.
func (ns treeNames) Caller() Caller {
	return Caller{PID: 1, UID: 1000, GID: 1000, EUID: 1000, EGID: 1000, InflightLimit: 1024}
}

func (ns treeNames) BoundSocket(path string) (any, error) {
	b, ok := ns[path]
	if !ok {
		return nil, unix.ENOENT
	}
	return b, nil
}

// TestUnixBindConnect binds, listens, connects and accepts through the
// Socket interface, by path and by abstract name.
func TestUnixBindConnect(t *testing.T) {
	s := loopbackStack(t)
	ns := treeNames{"/fifo": "not a socket"}
	for _, at := range []Addr{
		{Family: unix.AF_UNIX, Path: "/run/sock"},
		{Family: unix.AF_UNIX, Path: "test-abstract", Abstract: true},
	} {
		var ln Socket = s.NewUnixStream(false, Caller{})
		if err := ln.Bind(at, ns); err != nil {
			t.Fatalf("Bind %v: %v", at, err)
		}
		if err := ln.Bind(Addr{Family: unix.AF_UNIX, Path: "/other"}, ns); err != unix.EINVAL {
			t.Errorf("second Bind: %v, want EINVAL", err)
		}
		if a, _ := ln.LocalAddr(); a != at {
			t.Errorf("LocalAddr = %v, want %v", a, at)
		}
		cli := s.NewUnixStream(false, Caller{})
		if err := cli.Connect(at, ns); err != unix.ECONNREFUSED {
			t.Errorf("connect before listen: %v, want ECONNREFUSED", err)
		}
		if err := ln.Listen(1); err != nil {
			t.Fatal(err)
		}
		if err := cli.Connect(at, ns); err != nil {
			t.Fatalf("Connect %v: %v", at, err)
		}
		conn, peer, err := ln.Accept()
		if err != nil || peer != (Addr{Family: unix.AF_UNIX}) {
			t.Fatalf("Accept = %v %v, want the unbound client", peer, err)
		}
		if a, err := cli.PeerAddr(); err != nil || a != at {
			t.Errorf("client's PeerAddr = %v %v, want %v", a, err, at)
		}
		if n, err := cli.SendMsg([]byte("hi"), nil, Control{}, ns); n != 2 || err != nil {
			t.Fatalf("SendMsg = %d %v", n, err)
		}
		buf := make([]byte, 4)
		if n, _, err := conn.RecvMsg(buf, false); string(buf[:n]) != "hi" || err != nil {
			t.Fatalf("RecvMsg = %q %v", buf[:n], err)
		}
		conn.Close()
		cli.Close()
		ln.Close()
	}
	if err := s.NewUnixStream(false, Caller{}).Connect(Addr{Family: unix.AF_UNIX, Path: "/fifo"}, ns); err != unix.ECONNREFUSED {
		t.Errorf("connect to a node without a socket: %v, want ECONNREFUSED", err)
	}
}

// TestStacksShareNothing: two stacks, as two kernels' network namespaces,
// keep their own abstract Unix names and netlink port ids.
func TestStacksShareNothing(t *testing.T) {
	a, b := loopbackStack(t), loopbackStack(t)
	name := Addr{Family: unix.AF_UNIX, Path: "shared-name", Abstract: true}
	la, lb := a.NewUnixStream(false, Caller{}), b.NewUnixStream(false, Caller{})
	defer la.Close()
	defer lb.Close()
	if err := la.Bind(name, nil); err != nil {
		t.Fatal(err)
	}
	if err := lb.Bind(name, nil); err != nil {
		t.Errorf("b binds the name a holds: %v", err)
	}
	if err := la.Listen(1); err != nil {
		t.Fatal(err)
	}
	if err := b.NewUnixStream(false, Caller{}).Connect(name, treeNames{}); err != unix.ECONNREFUSED {
		t.Errorf("b connects to a's listener: %v, want ECONNREFUSED", err)
	}
	if err := a.NewUnixStream(false, Caller{}).Connect(name, treeNames{}); err != nil {
		t.Errorf("a connects to its own listener: %v", err)
	}

	na, nb := a.NewNetlink(unix.SOCK_RAW, 4245, false), b.NewNetlink(unix.SOCK_RAW, 4245, false)
	defer na.Close()
	defer nb.Close()
	for _, so := range []*NetlinkSocket{na, nb} {
		if err := so.Bind(Addr{Family: unix.AF_NETLINK, NlPort: 7}, nil); err != nil {
			t.Errorf("bind to port 7: %v", err)
		}
	}
	if err := a.NewNetlink(unix.SOCK_RAW, 4245, false).Bind(Addr{Family: unix.AF_NETLINK, NlPort: 7}, nil); err != unix.EADDRINUSE {
		t.Errorf("a's port 7 bound twice: %v, want EADDRINUSE", err)
	}
}

// TestConcurrentReadersTakeEachByteOnce has two goroutines read one end
// of a stream pair while the other end writes numbered words: between
// them they read each word once (a read looked at the queue, copied out
// and then took, so two readers copied the same bytes and the second
// took bytes it never returned).
func TestConcurrentReadersTakeEachByteOnce(t *testing.T) {
	a, b := loopbackStack(t).UnixStreamPair(false, Caller{})
	const words = 20000
	seen := make([]int, words)
	done := make(chan []uint32, 2)
	for r := 0; r < 2; r++ {
		go func() {
			var got []uint32
			buf := make([]byte, 4)
			var have int
			for {
				n, err := b.ReadTo(fs.NewBytes(buf[have:]))
				if err == unix.EAGAIN {
					continue
				}
				if n == 0 || err != nil {
					done <- got
					return
				}
				have += int(n)
				if have == 4 {
					got = append(got, uint32(buf[0])|uint32(buf[1])<<8|uint32(buf[2])<<16|uint32(buf[3])<<24)
					have = 0
				}
			}
		}()
	}
	for i := 0; i < words; i++ {
		w := []byte{byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24)}
		for len(w) > 0 {
			n, err := a.Write(w)
			if err != nil && err != unix.EAGAIN {
				t.Fatal(err)
			}
			w = w[n:]
		}
	}
	a.Close()
	total := 0
	for r := 0; r < 2; r++ {
		select {
		case got := <-done:
			total += len(got)
			for _, w := range got {
				if w >= words {
					t.Fatalf("read a word never written: %#x", w)
				}
				seen[w]++
			}
		case <-time.After(time.Minute):
			t.Fatal("readers did not finish")
		}
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("word %d read %d times (%d words read in all)", i, n, total)
		}
	}
}
