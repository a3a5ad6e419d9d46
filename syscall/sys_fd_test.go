package syscall

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
)

// TestCloseUnderBlockedRead closes a pipe's read end while a process
// sharing the descriptor table (CLONE_FILES, as a thread does) waits in
// read on it. As on Linux, the close does not wake the read, which holds
// the pipe end until it returns: it gets what is written next, and the
// writer sees EPIPE only after the read is over.
func TestCloseUnderBlockedRead(t *testing.T) {
	task, _ := newTask(t)
	r, w := pipeFDs(t, task)
	if call(task, sysno.Fcntl, r, unix.F_SETFL, 0) != 0 {
		t.Fatal("F_SETFL: clearing O_NONBLOCK")
	}
	reader, err := task.Clone(kernel.CloneArgs{Flags: unix.CLONE_FILES, ExitSignal: int(unix.SIGCHLD)})
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan int64)
	go func() { read <- call(reader, sysno.Read, r, scratch+512, 64) }()
	waitSleeping(t, reader)

	if n := call(task, sysno.Close, r); n != 0 {
		t.Fatalf("close of the read end = %d", n)
	}
	select {
	case n := <-read:
		t.Fatalf("close woke the blocked read: %d", n)
	case <-time.After(20 * time.Millisecond):
	}
	put(t, task, scratch+256, []byte("after close"))
	if n := call(task, sysno.Write, w, scratch+256, 11); n != 11 {
		t.Fatalf("write while the read holds the read end = %d, want 11", n)
	}
	if n := <-read; n != 11 || string(get(t, reader, scratch+512, 11)) != "after close" {
		t.Fatalf("blocked read = %d %q, want 11 \"after close\"", n, get(t, reader, scratch+512, 11))
	}
	if n := call(task, sysno.Write, w, scratch+256, 11); n != -int64(unix.EPIPE) {
		t.Fatalf("write after the read dropped the read end = %d, want EPIPE", n)
	}
}

// waitSleeping waits until the main thread of task's process waits in
// Block (procfs's S).
func waitSleeping(t *testing.T, task *kernel.Task) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		for _, p := range task.Kernel().Procfs().Processes() {
			for _, th := range p.Tasks() {
				if p.PID() == task.Proc.PID && th.TID == p.PID() && th.Sleeping {
					return
				}
			}
		}
	}
	t.Fatal("the task never blocked")
}

// TestCallsDropTheirReferences makes calls of every kind on a pipe's read
// end, failing ones included, then closes it: the writer gets EPIPE, so
// no call kept the reference its lookup took.
func TestCallsDropTheirReferences(t *testing.T) {
	task, _ := newTask(t)
	r, w := pipeFDs(t, task)
	epfd := call(task, sysno.EpollCreate1, 0)
	if epfd < 0 {
		t.Fatalf("epoll_create1 = %d", epfd)
	}
	const buf = scratch + 2048
	put(t, task, buf, linux.AsBytes(&linux.EpollEvent{Events: unix.EPOLLIN}))
	put(t, task, buf+64, linux.AsBytes(&linux.PollFd{FD: int32(r), Events: unix.POLLIN}))
	rights := append(linux.Append(nil, linux.Cmsghdr{Len: linux.SizeofCmsghdr + 8, Level: unix.SOL_SOCKET, Type: unix.SCM_RIGHTS}),
		linux.SliceAsBytes([]int32{int32(r), 999})...)
	put(t, task, buf+128, rights)
	put(t, task, buf+256, linux.AsBytes(&linux.Msghdr{Control: buf + 128, Controllen: uint64(len(rights))}))
	put(t, task, buf+512, []byte("\x00"))
	for _, c := range []struct {
		name string
		nr   uint64
		args []uint64
	}{
		{"read", sysno.Read, []uint64{r, buf, 8}},
		{"pread64", sysno.Pread64, []uint64{r, buf, 8, 0}},
		{"lseek", sysno.Lseek, []uint64{r, 0, 0}},
		{"fstat", sysno.Fstat, []uint64{r, buf}},
		{"newfstatat AT_EMPTY_PATH", sysno.Newfstatat, []uint64{r, buf + 512, buf, unix.AT_EMPTY_PATH}},
		{"fstatfs", sysno.Fstatfs, []uint64{r, buf}},
		{"fcntl F_GETFL", sysno.Fcntl, []uint64{r, unix.F_GETFL}},
		{"ioctl FIONREAD", sysno.Ioctl, []uint64{r, fionread, buf}},
		{"fsync", sysno.Fsync, []uint64{r}},
		{"ftruncate", sysno.Ftruncate, []uint64{r, 0}},
		{"fchmod", sysno.Fchmod, []uint64{r, 0o600}},
		{"flock", sysno.Flock, []uint64{r, unix.LOCK_SH}},
		{"mmap", sysno.Mmap, []uint64{0, 4096, unix.PROT_READ, unix.MAP_PRIVATE, r, 0}},
		{"getdents64", sysno.Getdents64, []uint64{r, buf, 256}},
		{"openat relative to it", sysno.Openat, []uint64{r, buf + 512, 0}},
		{"getsockname", sysno.Getsockname, []uint64{r, buf, buf + 8}},
		{"timerfd_gettime", sysno.TimerfdGettime, []uint64{r, buf}},
		{"epoll_pwait on it", sysno.EpollPwait, []uint64{r, buf, 1, 0, 0, 0}},
		{"epoll_ctl ADD", sysno.EpollCtl, []uint64{uint64(epfd), unix.EPOLL_CTL_ADD, r, buf}},
		{"epoll_pwait", sysno.EpollPwait, []uint64{uint64(epfd), buf, 1, 0, 0, 0}},
		{"ppoll", sysno.Ppoll, []uint64{buf + 64, 1, 0, 0, 0}},
		{"sendmsg passing it", sysno.Sendmsg, []uint64{w, buf + 256, 0}},
		{"dup3 onto 20", sysno.Dup3, []uint64{r, 20, 0}},
		{"close of the dup", sysno.Close, []uint64{20}},
	} {
		call(task, c.nr, c.args...)
	}
	if n := call(task, sysno.Close, r); n != 0 {
		t.Fatalf("close = %d", n)
	}
	put(t, task, buf, []byte("x"))
	if n := call(task, sysno.Write, w, buf, 1); n != -int64(unix.EPIPE) {
		t.Fatalf("write after the last close of the read end = %d, want EPIPE: a call kept a reference", n)
	}
}
