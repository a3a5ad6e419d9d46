package fs

import (
	"io"
	"testing"

	"golang.org/x/sys/unix"
)

// closeCounter counts Close calls of the file it wraps.
type closeCounter struct {
	File
	closes int
}

func (c *closeCounter) Close() error { c.closes++; return nil }

func TestFDTable(t *testing.T) {
	var tab FDTable
	var out []byte
	file := &closeCounter{File: &Console{Out: func(p []byte) { out = append(out, p...) }}}
	con := NewDescription(file, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CREAT)
	for want := 0; want < 3; want++ {
		if fd, err := tab.Install(con, false, 0); err != nil || fd != want {
			t.Fatalf("Install = %d, %v; want %d", fd, err, want)
		}
	}
	if con.Flags() != unix.O_RDWR|unix.O_NONBLOCK|unix.O_LARGEFILE {
		t.Fatalf("flags %#o: creation flags must not stay", con.Flags())
	}
	con.SetFlags(unix.O_APPEND | unix.O_RDONLY)
	if con.Flags() != unix.O_RDWR|unix.O_APPEND|unix.O_LARGEFILE || con.Nonblock() {
		t.Fatalf("F_SETFL changed the access mode or kept O_NONBLOCK: %#o", con.Flags())
	}
	d, err := tab.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	writeBytes(d.File, []byte("hi"))
	if string(out) != "hi" {
		t.Fatalf("console got %q", out)
	}
	d.DecRef()
	if err := tab.Close(1); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Get(1); err != unix.EBADF {
		t.Fatalf("Get closed fd: %v", err)
	}
	if fd, _ := tab.Install(con, false, 0); fd != 1 {
		t.Fatalf("lowest free fd not reused: %d", fd)
	}
	if fd, _ := tab.Install(con, true, 10); fd != 10 {
		t.Fatalf("Install min 10 = %d", fd)
	}
	if _, err := tab.Get(-1); err != unix.EBADF {
		t.Fatal("negative fd accepted")
	}
	if err := tab.InstallAt(con, 5, false); err != nil {
		t.Fatal(err)
	}
	tab.CloseOnExec()
	if _, err := tab.Get(10); err != unix.EBADF {
		t.Fatal("close-on-exec descriptor survived")
	}
	child := tab.Fork()
	tab.CloseAll()
	if file.closes != 0 {
		t.Fatal("closed while the child's table still refers to it")
	}
	child.CloseAll()
	if file.closes != 1 {
		t.Fatalf("closed %d times after the last reference, want 1", file.closes)
	}
	if err := tab.SetLimit(4); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Install(NewDescription(file, 0), false, 4); err != unix.EMFILE {
		t.Fatalf("install past RLIMIT_NOFILE: %v", err)
	}
}

// TestFDTableGetHolds closes a descriptor while a call holds what Get
// gave it: the file stays open until the call drops its reference, as
// Linux's fdget keeps a file from close(2) in another thread.
func TestFDTableGetHolds(t *testing.T) {
	var tab FDTable
	file := &closeCounter{File: &Console{Out: func([]byte) {}}}
	fd, err := tab.Open(file, unix.O_RDWR, false)
	if err != nil {
		t.Fatal(err)
	}
	held, err := tab.Get(fd)
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Close(fd); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Get(fd); err != unix.EBADF {
		t.Fatalf("Get of the closed descriptor: %v, want EBADF", err)
	}
	if file.closes != 0 {
		t.Fatal("close released the file while a call held it")
	}
	held.DecRef()
	if file.closes != 1 {
		t.Fatalf("released %d times after the call dropped it, want 1", file.closes)
	}
}

func TestPipe(t *testing.T) {
	r, w := NewPipeLimits().NewPipe(0, true)
	buf := make([]byte, 8)
	if _, err := readBytes(r, buf); err != unix.EAGAIN {
		t.Fatalf("empty pipe: %v", err)
	}
	if r.Readiness(unix.EPOLLIN) != 0 || w.Readiness(unix.EPOLLOUT) == 0 {
		t.Fatal("readiness of an empty pipe")
	}
	big := make([]byte, PipeDefaultSize+100)
	if n, err := writeBytes(w, big); n != PipeDefaultSize || err != nil {
		t.Fatalf("write past the capacity: %d %v", n, err)
	}
	if _, err := writeBytes(w, []byte("x")); err != unix.EAGAIN {
		t.Fatalf("full pipe: %v", err)
	}
	readBytes(r, make([]byte, 100))
	if _, err := writeBytes(w, make([]byte, 200)); err != unix.EAGAIN {
		t.Fatalf("a write with no free slot and a full last page: %v", err)
	}
	readBytes(r, make([]byte, pipePage-100))
	if n, _ := writeBytes(w, make([]byte, 100)); n != 100 {
		t.Fatalf("write into a freed slot: %d", n)
	}
	if n, _ := writeBytes(w, make([]byte, 100)); n != 100 {
		t.Fatalf("write merged into the last page: %d", n)
	}
	w.Close()
	if r.Readiness(unix.EPOLLIN)&unix.EPOLLHUP == 0 {
		t.Fatal("no HUP after the last writer")
	}
	for {
		n, err := readBytes(r, make([]byte, 4096))
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	r2, w2 := NewPipeLimits().NewPipe(0, true)
	r2.Close()
	if _, err := writeBytes(w2, []byte("x")); err != unix.EPIPE {
		t.Fatalf("no reader: %v", err)
	}
	if sz, err := w2.SetSize(5000, true); sz != 8192 || err != nil {
		t.Fatalf("F_SETPIPE_SZ 5000 = %d %v", sz, err)
	}
}

// TestPipeRingKeepsOrder writes and reads a pipe around its ring many
// times, with reused pages and a resize while the ring has wrapped: every
// byte comes out once, in order, and a read stops at what was written
// (a page taken back from an earlier write shows none of its old bytes).
func TestPipeRingKeepsOrder(t *testing.T) {
	r, w := NewPipeLimits().NewPipe(0, true)
	next, want := byte(0), byte(0)
	write := func(n int) {
		b := make([]byte, n)
		for i := range b {
			b[i], next = next, next+1
		}
		if k, err := writeBytes(w, b); k != n || err != nil {
			t.Fatalf("write %d: %d %v", n, k, err)
		}
	}
	// read reads into room bytes and wants n.
	read := func(n, room int) {
		b := make([]byte, room)
		k, err := readBytes(r, b)
		if k != n || err != nil {
			t.Fatalf("read %d: %d %v", n, k, err)
		}
		for i, c := range b[:k] {
			if c != want {
				t.Fatalf("byte %d of a read is %d, want %d", i, c, want)
			}
			want++
		}
	}
	write(pipePage + 3)
	for range 40 {
		write(3*pipePage + 7)
		read(3*pipePage+7, 3*pipePage+7)
	}
	read(pipePage+3, pipePage+3)
	write(pipePage - 1)
	read(pipePage-1, 2*pipePage)
	for range 5 {
		write(3 * pipePage)
		read(2*pipePage, 2*pipePage)
	}
	if _, err := w.SetSize(4*pipePage, true); err != unix.EBUSY {
		t.Fatalf("shrink below the pages held: %v, want EBUSY", err)
	}
	if sz, err := w.SetSize(32*pipePage, true); sz != 32*pipePage || err != nil {
		t.Fatalf("grow with the ring wrapped: %d %v", sz, err)
	}
	write(16 * pipePage)
	read(21*pipePage, 21*pipePage)
	if _, err := readBytes(r, make([]byte, 1)); err != unix.EAGAIN {
		t.Fatalf("read of the emptied pipe: %v, want EAGAIN", err)
	}
}

func TestNodeFileReadSeekStat(t *testing.T) {
	n := &Node{Mode: 0o644, Ino: 42, Data: []byte("0123456789")}
	f := NewTree(NewDir(0o755)).OpenNode(n, "/n")
	buf := make([]byte, 4)
	if k, _ := readBytes(f, buf); k != 4 || string(buf) != "0123" {
		t.Fatalf("Read %q", buf[:k])
	}
	if off, _ := f.Seek(-2, io.SeekEnd); off != 8 {
		t.Fatalf("Seek = %d", off)
	}
	if k, _ := readBytes(f, buf); k != 2 || string(buf[:2]) != "89" {
		t.Fatalf("Read at end %q", buf[:k])
	}
	if k, _ := readBytes(f, buf); k != 0 {
		t.Fatalf("Read past end = %d", k)
	}
	if k, _ := f.ReadAt(buf, 3); k != 4 || string(buf) != "3456" {
		t.Fatalf("ReadAt %q", buf[:k])
	}
	st := f.Stat()
	if st.Mode != unix.S_IFREG|0o644 || st.Size != 10 || st.Ino != 42 {
		t.Fatalf("Stat %+v", st)
	}
	if _, err := f.Seek(-1, io.SeekStart); err != unix.EINVAL {
		t.Fatalf("negative seek: %v", err)
	}
}

func TestTreeSizeLimit(t *testing.T) {
	tree := NewTree(NewDir(0o755))
	tree.SetSizeLimit(1 << 20)
	before, _ := tree.Usage()
	n, _, err := tree.Open(nil, "/f", OpenFlags{Create: true, Perm: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	f := tree.OpenNode(n, "/f")
	if _, err := f.WriteAt(make([]byte, 512<<10), 0); err != nil {
		t.Fatal(err)
	}
	// Holes take no room: a page at 4 GiB and a truncate to 8 GiB fit.
	if _, err := f.WriteAt([]byte("x"), 4<<30); err != nil {
		t.Fatalf("a write at 4 GiB under a 1 MiB limit: %v", err)
	}
	if err := f.Truncate(8 << 30); err != nil {
		t.Fatalf("truncate to 8 GiB: %v", err)
	}
	if st := f.Stat(); st.Size != 8<<30 || st.Blocks != (512<<10+4096)/512 {
		t.Fatalf("sparse file: size %d, %d blocks", st.Size, st.Blocks)
	}
	b := []byte("??")
	if n, err := f.ReadAt(b, 4<<30-1); n != 2 || err != nil || string(b) != "\x00x" {
		t.Fatalf("read across a hole and the page at 4 GiB: %d %v %q", n, err, b)
	}
	if _, err := f.WriteAt(make([]byte, 600<<10), 1<<20); err != unix.ENOSPC {
		t.Fatalf("600 KiB more past a 1 MiB limit: %v", err)
	}
	if err := f.Truncate(100); err != nil {
		t.Fatal(err)
	}
	if used, _ := tree.Usage(); used-before != 4096 {
		t.Fatalf("truncated to 100 bytes, %d bytes charged", used-before)
	}
	if _, err := f.WriteAt([]byte("z"), 200); err != nil {
		t.Fatal(err)
	}
	if n, _ := f.ReadAt(b, 99); n != 2 || string(b) != "\x00\x00" {
		t.Fatalf("bytes cut by a truncate came back: %q", b)
	}
	if _, err := f.WriteAt([]byte("x"), -1); err != unix.EINVAL {
		t.Fatalf("negative offset: %v", err)
	}
	if _, err := f.WriteAt([]byte("xy"), 1<<63-1); err != unix.EFBIG {
		t.Fatalf("offset past the largest file: %v", err)
	}
	// An unlinked file's pages stay charged while it is open, as on Linux.
	if err := tree.Remove(nil, "/f", false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 8192), 0); err != nil {
		t.Fatal(err)
	}
	if used, _ := tree.Usage(); used-before != 8192 {
		t.Fatalf("unlinked but open: %d bytes charged, want 8192", used-before)
	}
	f.Close()
	if used, _ := tree.Usage(); used != before {
		t.Fatalf("unlinked and closed, yet %d bytes stay charged", used-before)
	}
}

// TestNodeFileSize: Size is Stat's Size for a file written, one with a
// hole past its data, one with data of its own, and a directory.
func TestNodeFileSize(t *testing.T) {
	tree := NewTree(NewDir(0o755))
	n, _, err := tree.Open(nil, "/f", OpenFlags{Create: true, Perm: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	f := tree.OpenNode(n, "/f")
	for _, step := range []func() error{
		func() error { return nil },
		func() error { _, err := f.WriteAt([]byte("hello"), 3); return err },
		func() error { return f.Truncate(3 * pageSize) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
		if got, want := f.Size(), f.Stat().Size; got != want {
			t.Errorf("Size %d, Stat's %d", got, want)
		}
	}
	data := tree.OpenNode(&Node{Mode: 0o644, Data: []byte("initramfs")}, "/d")
	dir := tree.OpenNode(tree.Root, "/")
	for _, g := range []*NodeFile{data, dir} {
		if got, want := g.Size(), g.Stat().Size; got != want {
			t.Errorf("%s: Size %d, Stat's %d", g.Path(), got, want)
		}
	}
}
