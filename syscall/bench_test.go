package syscall

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
)

// BenchmarkFileRequest makes the file system calls nginx makes for each
// request it serves from a file: open the file, fstat it, append a line
// to the access log, close the file. The log is emptied every 4096
// requests.
func BenchmarkFileRequest(b *testing.B) {
	task, _ := newTask(b)
	task.Proc.Root.Create(nil, "/index.html", &fs.Node{Mode: 0o644, Data: make([]byte, 256)})
	task.Proc.Root.Create(nil, "/access.log", &fs.Node{Mode: 0o644})
	const path, logPath, line = scratch, scratch + 64, scratch + 128
	put(b, task, path, []byte("/index.html\x00"))
	put(b, task, logPath, []byte("/access.log\x00"))
	put(b, task, line, []byte("10.0.2.2 - - [02/Dec/2026:02:00:00 +0000] \"GET /index.html HTTP/1.1\" 200 256 \"-\" \"ab\"\n"))
	log := call(task, sysno.Openat, cwdFD, logPath, unix.O_WRONLY|unix.O_APPEND)
	if log < 0 {
		b.Fatalf("open the log: %d", log)
	}
	i := 0
	for b.Loop() {
		fd := call(task, sysno.Openat, cwdFD, path, unix.O_RDONLY|unix.O_NONBLOCK)
		if fd < 0 || call(task, sysno.Fstat, uint64(fd), scratch+1024) != 0 {
			b.Fatalf("open+fstat: %d", fd)
		}
		call(task, sysno.Write, uint64(log), line, 95)
		call(task, sysno.Close, uint64(fd))
		if i++; i%4096 == 0 {
			call(task, sysno.Ftruncate, uint64(log), 0)
		}
	}
}
