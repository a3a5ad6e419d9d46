package syscall

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

// benchBuf is a 64 KiB user buffer the read benchmarks read into.
const benchBuf, benchLen = 0x400000, 64 << 10

func benchTask(b *testing.B) *kernel.Task {
	task, _ := newTask(b)
	if _, err := task.Proc.AS.Map(benchBuf, benchLen, mm.PTERead|mm.PTEWrite, true); err != nil {
		b.Fatal(err)
	}
	return task
}

// BenchmarkReadFile reads 64 KiB of a written file with pread.
func BenchmarkReadFile(b *testing.B) {
	task := benchTask(b)
	task.Proc.Root.Create(nil, "/data", &fs.Node{Mode: 0o644})
	put(b, task, scratch, []byte("/data\x00"))
	fd := call(task, sysno.Openat, cwdFD, scratch, unix.O_RDWR)
	if fd < 0 || call(task, sysno.Pwrite64, uint64(fd), benchBuf, benchLen, 0) != benchLen {
		b.Fatalf("open and fill /data: %d", fd)
	}
	b.SetBytes(benchLen)
	for b.Loop() {
		if n := call(task, sysno.Pread64, uint64(fd), benchBuf, benchLen, 0); n != benchLen {
			b.Fatalf("pread: %d", n)
		}
	}
}

// BenchmarkReadPipe writes 16 KiB to a pipe and reads them back.
func BenchmarkReadPipe(b *testing.B) {
	const n = 16 << 10
	task := benchTask(b)
	if call(task, sysno.Pipe2, scratch, unix.O_NONBLOCK) != 0 {
		b.Fatal("pipe2")
	}
	fds := make([]byte, 8)
	if err := copyIn(task, scratch, fds); err != nil {
		b.Fatal(err)
	}
	r, w := uint64(binary.LittleEndian.Uint32(fds)), uint64(binary.LittleEndian.Uint32(fds[4:]))
	b.SetBytes(n)
	for b.Loop() {
		if got := call(task, sysno.Write, w, benchBuf, n); got != n {
			b.Fatalf("write: %d", got)
		}
		if got := call(task, sysno.Read, r, benchBuf, n); got != n {
			b.Fatalf("read: %d", got)
		}
	}
}
