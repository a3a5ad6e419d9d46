package syscall

import (
	"bytes"
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

// edge is a user page followed by an unmapped one: a copy past its end
// faults.
const edge = 0x300000

func pipeFDs(t *testing.T, task *kernel.Task) (r, w uint64) {
	t.Helper()
	if call(task, sysno.Pipe2, scratch, unix.O_NONBLOCK) != 0 {
		t.Fatal("pipe2")
	}
	b := get(t, task, scratch, 8)
	return uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[4:]))
}

func TestReadPipeFaultMidway(t *testing.T) {
	task, _ := newTask(t)
	if _, err := task.Proc.AS.Map(edge, mm.PageSize, mm.PTERead|mm.PTEWrite, true); err != nil {
		t.Fatal(err)
	}
	r, w := pipeFDs(t, task)
	data := bytes.Repeat([]byte("0123456789abcdef"), 375) // 6000 bytes
	put(t, task, scratch+64, data[:4000])
	put(t, task, scratch+8192, data[4000:])
	// A write from a buffer that faults midway writes nothing of it.
	if n := call(task, sysno.Write, w, edge+mm.PageSize-100, 200); n != -int64(unix.EFAULT) {
		t.Fatalf("write across the edge = %d", n)
	}
	if n := call(task, sysno.Write, w, scratch+64, 4000); n != 4000 {
		t.Fatalf("write = %d", n)
	}
	if n := call(task, sysno.Write, w, scratch+8192, 2000); n != 2000 {
		t.Fatalf("write = %d", n)
	}
	// The pipe pages copied whole are delivered and taken; the one whose
	// copy faults stays, as on Linux.
	if n := call(task, sysno.Read, r, edge+mm.PageSize-4000, 6000); n != 4000 {
		t.Fatalf("read across the edge = %d", n)
	}
	if got := get(t, task, edge+mm.PageSize-4000, 4000); !bytes.Equal(got, data[:4000]) {
		t.Fatal("the bytes before the fault")
	}
	if n := call(task, sysno.Read, r, edge+mm.PageSize-10, 100); n != -int64(unix.EFAULT) {
		t.Fatalf("read of a page that faults = %d", n)
	}
	if n := call(task, sysno.Read, r, scratch+64, 8000); n != 2000 {
		t.Fatalf("read of the rest = %d", n)
	}
	if got := get(t, task, scratch+64, 2000); !bytes.Equal(got, data[4000:]) {
		t.Fatal("the rest")
	}
}

func TestReadvPreadAcrossIovecs(t *testing.T) {
	task, _ := newTask(t)
	task.Proc.Root.Create(nil, "/digits", &fs.Node{Mode: 0o644, Data: []byte("0123456789")})
	put(t, task, scratch, []byte("/digits\x00"))
	fd := uint64(call(task, sysno.Openat, cwdFD, scratch, unix.O_RDONLY))
	const iov, a, b = scratch + 256, scratch + 512, scratch + 4096 - 2 // b spans a page boundary
	put(t, task, iov, words(a, 3, a+100, 0, b, 5))
	if n := call(task, sysno.Readv, fd, iov, 3); n != 8 {
		t.Fatalf("readv = %d", n)
	}
	if got := string(get(t, task, a, 3)) + string(get(t, task, b, 5)); got != "01234567" {
		t.Fatalf("readv read %q", got)
	}
	if n := call(task, sysno.Preadv, fd, iov, 3, 5); n != 5 {
		t.Fatalf("preadv at 5 = %d", n)
	}
	if got := string(get(t, task, a, 3)) + string(get(t, task, b, 2)); got != "56789" {
		t.Fatalf("preadv read %q", got)
	}
	for _, c := range []struct {
		off  uint64
		want string
	}{{0, "0123"}, {6, "6789"}, {8, "89"}, {10, ""}, {1 << 40, ""}} {
		if n := call(task, sysno.Pread64, fd, a, 4, c.off); n != int64(len(c.want)) || string(get(t, task, a, int(n))) != c.want {
			t.Errorf("pread at %d = %d", c.off, n)
		}
	}
	if off := call(task, sysno.Lseek, fd, 0, 1); off != 8 {
		t.Fatalf("the position after readv and preads = %d", off)
	}
	if n := call(task, sysno.Pread64, fd, a, 4, 1<<63); n != -int64(unix.EINVAL) {
		t.Fatalf("pread at a negative offset = %d", n)
	}
	r, _ := pipeFDs(t, task)
	if n := call(task, sysno.Pread64, r, a, 4, 0); n != -int64(unix.ESPIPE) {
		t.Fatalf("pread of a pipe = %d", n)
	}
}
