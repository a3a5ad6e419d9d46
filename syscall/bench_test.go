package syscall

import (
	"encoding/binary"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
	jnet "github.com/jiege-go/jiege/net"
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

// BenchmarkSocketRequest makes the socket calls nginx makes for a request
// on a kept-alive connection, over the loopback: the client's write of
// the request, the server's recvfrom of it, TCP_CORK set, writev of the
// headers, sendfile of the body, TCP_CORK cleared, and the client's reads of the
// answer. The server waits in epoll_pwait (edge-triggered, as nginx), the
// client polls with MSG_DONTWAIT: netstack delivers in its own goroutines.
func BenchmarkSocketRequest(b *testing.B) {
	k := kernel.New(kernel.Config{})
	lo, err := jnet.NewLoopback()
	if err != nil {
		b.Fatal(err)
	}
	k.Network = lo
	task, _ := newTaskIn(b, k)
	if _, err := task.Proc.AS.Map(benchBuf, benchLen, mm.PTERead|mm.PTEWrite, true); err != nil {
		b.Fatal(err)
	}
	const addr, one, iov, req, event, head, body, in = scratch, scratch + 64, scratch + 128, scratch + 256, scratch + 384, scratch + 512, benchBuf, benchBuf + 4096
	const events = benchBuf + 8192 // room for 512, as nginx asks
	sockaddr := make([]byte, 16)
	sockaddr[0] = unix.AF_INET
	binary.BigEndian.PutUint16(sockaddr[2:], 8080)
	copy(sockaddr[4:], []byte{127, 0, 0, 1})
	put(b, task, addr, sockaddr)
	put(b, task, one, words(1))
	ls := call(task, sysno.Socket, unix.AF_INET, unix.SOCK_STREAM, 0)
	if call(task, sysno.Bind, uint64(ls), addr, 16) != 0 || call(task, sysno.Listen, uint64(ls), 8) != 0 {
		b.Fatal("bind and listen")
	}
	cli := call(task, sysno.Socket, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	call(task, sysno.Connect, uint64(cli), addr, 16)
	srv := int64(-1)
	for srv < 0 {
		srv = call(task, sysno.Accept4, uint64(ls), 0, 0, unix.SOCK_NONBLOCK)
		runtime.Gosched()
	}
	ep := call(task, sysno.EpollCreate1, 0)
	put(b, task, event, words(unix.EPOLLIN|unix.EPOLLOUT|unix.EPOLLRDHUP|unix.EPOLLET, uint64(srv)))
	if call(task, sysno.EpollCtl, uint64(ep), unix.EPOLL_CTL_ADD, uint64(srv), event) != 0 {
		b.Fatal("epoll_ctl")
	}
	request := "GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n"
	put(b, task, req, []byte(request))
	put(b, task, head, make([]byte, 250))
	put(b, task, iov, words(head, 250))
	task.Proc.Root.Create(nil, "/index.html", &fs.Node{Mode: 0o644, Data: make([]byte, 239)})
	put(b, task, body, []byte("/index.html\x00"))
	file := call(task, sysno.Openat, cwdFD, body, unix.O_RDONLY)
	if file < 0 {
		b.Fatalf("open: %d", file)
	}
	const answer = 250 + 239
	ev := make([]byte, 16)
	for b.Loop() {
		call(task, sysno.Write, uint64(cli), req, uint64(len(request)))
		for !readable(b, task, call(task, sysno.EpollPwait, uint64(ep), events, 512, 0, 0, 0), events, ev) {
			runtime.Gosched()
		}
		if n := call(task, sysno.Recvfrom, uint64(srv), in, 1024, 0, 0, 0); n != int64(len(request)) {
			b.Fatalf("recvfrom: %d", n)
		}
		call(task, sysno.Setsockopt, uint64(srv), unix.IPPROTO_TCP, unix.TCP_CORK, one, 4)
		if n := call(task, sysno.Writev, uint64(srv), iov, 1); n != 250 {
			b.Fatalf("writev: %d", n)
		}
		put(b, task, one+8, words(0))
		if n := call(task, sysno.Sendfile, uint64(srv), uint64(file), one+8, 239); n != 239 {
			b.Fatalf("sendfile: %d", n)
		}
		call(task, sysno.Setsockopt, uint64(srv), unix.IPPROTO_TCP, unix.TCP_CORK, one+4, 4)
		for got := int64(0); got < answer; {
			if n := call(task, sysno.Recvfrom, uint64(cli), in, 4096, unix.MSG_DONTWAIT, 0, 0); n > 0 {
				got += n
			} else {
				runtime.Gosched()
			}
		}
	}
}

// readable reports whether the n events epoll_pwait wrote at events
// include EPOLLIN, read through ev.
func readable(b *testing.B, task *kernel.Task, n int64, events uint64, ev []byte) bool {
	for i := range n {
		if err := copyIn(task, events+uint64(i)*16, ev); err != nil {
			b.Fatal(err)
		}
		if binary.LittleEndian.Uint32(ev)&unix.EPOLLIN != 0 {
			return true
		}
	}
	return false
}
