package syscall

import (
	"bytes"
	"encoding/binary"
	iofs "io/fs"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/fs/procfs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

const scratch = 0x100000 // a read-write page for arguments

// newTask returns the first task of a kernel of its own, with a console
// on fds 0-2, a small tree, and a scratch mapping; console output collects
// in out.
func newTask(t testing.TB) (*kernel.Task, *bytes.Buffer) {
	t.Helper()
	return newTaskIn(t, kernel.New(kernel.Config{}))
}

// newTaskIn is newTask in the kernel k, beside its other processes.
func newTaskIn(t testing.TB, k *kernel.Kernel) (*kernel.Task, *bytes.Buffer) {
	t.Helper()
	as, err := mm.NewAddressSpace(mmtest.New(t, 1024))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := as.Map(scratch, 4*mm.PageSize, mm.PTERead|mm.PTEWrite, true); err != nil {
		t.Fatal(err)
	}
	as.BrkBase, as.Brk = 0x200000, 0x200000
	tree := fs.NewTree(fs.NewDir(0o755))
	tree.Create(nil, "/etc", fs.NewDir(0o755))
	tree.Create(nil, "/etc/hostname", &fs.Node{Mode: 0o644, Data: []byte("jiege\n")})
	tree.Create(nil, "/etc/link", &fs.Node{Mode: iofs.ModeSymlink | 0o777, Link: "hostname"})
	if err := procfs.Mount(tree, k.Procfs()); err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	files := &fs.FDTable{}
	con := fs.NewDescription(&fs.Console{Out: func(p []byte) { out.Write(p) }}, unix.O_RDWR)
	for i := 0; i < 3; i++ {
		files.Install(con, false, 0)
	}
	return k.NewProcess(tree, as, files, "/bin/test", []string{"test"}, &arch.Frame{}), out
}

// call runs one system call and returns a0 as a signed value.
func call(t *kernel.Task, nr uint64, args ...uint64) int64 {
	t.Regs.X[arch.RegA7] = nr
	for i := 0; i < 6; i++ {
		v := uint64(0)
		if i < len(args) {
			v = args[i]
		}
		t.Regs.X[arch.RegA0+i] = v
	}
	Dispatch(t)
	return int64(t.Regs.X[arch.RegA0])
}

func put(t testing.TB, task *kernel.Task, addr uint64, b []byte) {
	t.Helper()
	if err := copyOut(task, addr, b); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, task *kernel.Task, addr uint64, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if err := copyIn(task, addr, b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteAndWritev(t *testing.T) {
	task, out := newTask(t)
	put(t, task, scratch, []byte("hello, "))
	put(t, task, scratch+100, []byte("world\n"))
	if r := call(task, sysno.Write, 1, scratch, 7); r != 7 {
		t.Fatalf("write = %d", r)
	}
	put(t, task, scratch+200, words(scratch+100, 6))
	if r := call(task, sysno.Writev, 2, scratch+200, 1); r != 6 {
		t.Fatalf("writev = %d", r)
	}
	if out.String() != "hello, world\n" {
		t.Fatalf("console %q", out)
	}
	if r := call(task, sysno.Write, 1, 0x10, 4); r != -int64(unix.EFAULT) {
		t.Fatalf("write from a bad pointer = %d, want -EFAULT", r)
	}
	if r := call(task, sysno.Write, 9, scratch, 1); r != -int64(unix.EBADF) {
		t.Fatalf("write to fd 9 = %d", r)
	}
}

func TestOpenReadStat(t *testing.T) {
	task, _ := newTask(t)
	put(t, task, scratch, []byte("/etc/link\x00"))
	fd := call(task, sysno.Openat, cwdFD, scratch, unix.O_RDONLY|unix.O_CLOEXEC)
	if fd != 3 {
		t.Fatalf("openat = %d", fd)
	}
	if r := call(task, sysno.Read, uint64(fd), scratch+512, 100); r != 6 || string(get(t, task, scratch+512, 6)) != "jiege\n" {
		t.Fatalf("read = %d", r)
	}
	if r := call(task, sysno.Fstat, uint64(fd), scratch+1024); r != 0 {
		t.Fatalf("fstat = %d", r)
	}
	st := get(t, task, scratch+1024, 128)
	if mode := binary.LittleEndian.Uint32(st[16:]); mode != unix.S_IFREG|0o644 {
		t.Fatalf("st_mode %#o", mode)
	}
	if size := binary.LittleEndian.Uint64(st[48:]); size != 6 {
		t.Fatalf("st_size %d", size)
	}
	if r := call(task, sysno.Close, uint64(fd)); r != 0 {
		t.Fatalf("close = %d", r)
	}
	if r := call(task, sysno.Close, uint64(fd)); r != -int64(unix.EBADF) {
		t.Fatalf("second close = %d", r)
	}
	put(t, task, scratch, []byte("/etc/missing\x00"))
	if r := call(task, sysno.Openat, cwdFD, scratch, 0); r != -int64(unix.ENOENT) {
		t.Fatalf("open missing = %d", r)
	}
	put(t, task, scratch, []byte("/proc/self/exe\x00"))
	if r := call(task, sysno.Readlinkat, cwdFD, scratch, scratch+2048, 64); r != 9 || string(get(t, task, scratch+2048, 9)) != "/bin/test" {
		t.Fatalf("readlink /proc/self/exe = %d", r)
	}
}

func TestMemoryCalls(t *testing.T) {
	task, _ := newTask(t)
	if r := call(task, sysno.Brk, 0); r != 0x200000 {
		t.Fatalf("brk(0) = %#x", r)
	}
	if r := call(task, sysno.Brk, 0x201800); r != 0x201800 {
		t.Fatalf("brk grow = %#x", r)
	}
	put(t, task, 0x201000, []byte("heap"))
	addr := call(task, sysno.Mmap, 0, 3*mm.PageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uint64(0), 0)
	if addr <= 0 || addr%mm.PageSize != 0 {
		t.Fatalf("mmap = %#x", addr)
	}
	put(t, task, uint64(addr), []byte("anon"))
	if r := call(task, sysno.Mprotect, uint64(addr), mm.PageSize, unix.PROT_READ); r != 0 {
		t.Fatalf("mprotect = %d", r)
	}
	if err := copyOut(task, uint64(addr), []byte("x")); err != unix.EFAULT {
		t.Fatalf("write to PROT_READ page: %v", err)
	}
	if r := call(task, sysno.Munmap, uint64(addr), 3*mm.PageSize); r != 0 {
		t.Fatalf("munmap = %d", r)
	}
	if err := copyIn(task, uint64(addr), make([]byte, 1)); err != unix.EFAULT {
		t.Fatalf("read after munmap: %v", err)
	}
	if r := call(task, sysno.Mmap, 0, 0, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS, ^uint64(0), 0); r != -int64(unix.EINVAL) {
		t.Fatalf("zero-length mmap = %d", r)
	}
	put(t, task, scratch, []byte("/etc/hostname\x00"))
	fd := call(task, sysno.Openat, cwdFD, scratch, 0)
	fa := call(task, sysno.Mmap, 0, mm.PageSize, unix.PROT_READ, unix.MAP_PRIVATE, uint64(fd), 0)
	if fa <= 0 || string(get(t, task, uint64(fa), 6)) != "jiege\n" {
		t.Fatalf("file mmap = %#x", fa)
	}
	if r := call(task, sysno.Mmap, 0x300000, mm.PageSize, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE, ^uint64(0), 0); r != 0x300000 {
		t.Fatalf("MAP_FIXED_NOREPLACE on free range = %#x", r)
	}
	if r := call(task, sysno.Mmap, 0x300000, mm.PageSize, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE, ^uint64(0), 0); r != -int64(unix.EEXIST) {
		t.Fatalf("MAP_FIXED_NOREPLACE on used range = %d", r)
	}
}

func TestInfoCallsAndTrace(t *testing.T) {
	task, _ := newTask(t)
	var trace bytes.Buffer
	task.Kernel().SyscallTrace = &trace
	if r := call(task, sysno.Uname, scratch); r != 0 {
		t.Fatalf("uname = %d", r)
	}
	u := get(t, task, scratch, 6*65)
	if string(u[:5]) != "Linux" || string(u[4*65:4*65+7]) != "riscv64" {
		t.Fatalf("utsname %q", u)
	}
	if r := call(task, sysno.Getrandom, scratch, 32, 0); r != 32 {
		t.Fatalf("getrandom = %d", r)
	}
	if r := call(task, sysno.ClockGettime, unix.CLOCK_MONOTONIC, scratch); r != 0 {
		t.Fatalf("clock_gettime = %d", r)
	}
	if r := call(task, sysno.ClockGettime, 99, scratch); r != -int64(unix.EINVAL) {
		t.Fatalf("clock_gettime(99) = %d", r)
	}
	if r := call(task, sysno.SetTidAddress, scratch); r != int64(task.TID) {
		t.Fatalf("set_tid_address = %d", r)
	}
	if r := call(task, 9999); r != -int64(unix.ENOSYS) {
		t.Fatalf("unknown syscall = %d", r)
	}
	if r := call(task, sysno.ExitGroup, 3); r != 0 || !task.Exiting {
		t.Fatalf("exit_group: %d %v", r, task.Exiting)
	}
	<-task.Proc.Exited()
	if task.Proc.Status() != 3 {
		t.Fatalf("status %d", task.Proc.Status())
	}
	for _, want := range []string{"uname(0x100000", "= 0x0", "clock_gettime(0x63", "-1 EINVAL", "unknown(", "-1 ENOSYS"} {
		if !strings.Contains(trace.String(), want) {
			t.Errorf("trace lacks %q:\n%s", want, trace.String())
		}
	}
}

// TestWritableTree creates, appends to, lists, renames and removes files
// and directories, as nginx does with its logs, pid file and temp dirs.
func TestWritableTree(t *testing.T) {
	task, _ := newTask(t)
	put(t, task, scratch, []byte("/var\x00"))
	if r := call(task, sysno.Mkdirat, cwdFD, scratch, 0o755); r != 0 {
		t.Fatalf("mkdir /var = %d", r)
	}
	if r := call(task, sysno.Mkdirat, cwdFD, scratch, 0o755); r != -int64(unix.EEXIST) {
		t.Fatalf("second mkdir = %d", r)
	}
	put(t, task, scratch, []byte("/var/log\x00"))
	put(t, task, scratch+64, []byte("line one\nline two\n"))
	fd := call(task, sysno.Openat, cwdFD, scratch, unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND, 0o644)
	if fd < 0 {
		t.Fatalf("create = %d", fd)
	}
	call(task, sysno.Write, uint64(fd), scratch+64, 9)
	call(task, sysno.Write, uint64(fd), scratch+73, 9)
	if r := call(task, sysno.Read, uint64(fd), scratch+512, 4); r != -int64(unix.EBADF) {
		t.Fatalf("read from O_WRONLY = %d", r)
	}
	call(task, sysno.Close, uint64(fd))
	if r := call(task, sysno.Openat, cwdFD, scratch, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o644); r != -int64(unix.EEXIST) {
		t.Fatalf("O_EXCL on existing = %d", r)
	}
	fd = call(task, sysno.Openat, cwdFD, scratch, unix.O_RDONLY)
	if r := call(task, sysno.Read, uint64(fd), scratch+512, 100); r != 18 || string(get(t, task, scratch+512, 18)) != "line one\nline two\n" {
		t.Fatalf("read back = %d", r)
	}
	call(task, sysno.Close, uint64(fd))

	put(t, task, scratch+1024, []byte("/var\x00"))
	dfd := call(task, sysno.Openat, cwdFD, scratch+1024, unix.O_RDONLY|unix.O_DIRECTORY)
	n := call(task, sysno.Getdents64, uint64(dfd), scratch+2048, 1024)
	if n <= 0 || !bytes.Contains(get(t, task, scratch+2048, int(n)), []byte("log\x00")) {
		t.Fatalf("getdents64 = %d", n)
	}
	if r := call(task, sysno.Getdents64, uint64(dfd), scratch+2048, 1024); r != 0 {
		t.Fatalf("getdents64 at the end = %d", r)
	}
	put(t, task, scratch+128, []byte("/var/log.1\x00"))
	if r := call(task, sysno.Renameat2, cwdFD, scratch, cwdFD, scratch+128, 0); r != 0 {
		t.Fatalf("rename = %d", r)
	}
	if r := call(task, sysno.Unlinkat, cwdFD, scratch+1024, unix.AT_REMOVEDIR); r != -int64(unix.ENOTEMPTY) {
		t.Fatalf("rmdir non-empty = %d", r)
	}
	if r := call(task, sysno.Unlinkat, cwdFD, scratch+128, 0); r != 0 {
		t.Fatalf("unlink = %d", r)
	}
	if r := call(task, sysno.Unlinkat, cwdFD, scratch+1024, unix.AT_REMOVEDIR); r != 0 {
		t.Fatalf("rmdir = %d", r)
	}
}

// TestMemoryCallErrnos checks the answers Linux gives on Sv39 (TASK_SIZE
// 2^38) that qemu-user cannot give, so the conformance suite leaves them
// out: its address space is larger, it aborts on ranges ending at 2^64, and
// it ignores madvise. Each errno is the one mm/mmap.c, mm/mprotect.c,
// mm/madvise.c and mm/mremap.c return for that case.
func TestMemoryCallErrnos(t *testing.T) {
	task, _ := newTask(t)
	const anon = unix.MAP_PRIVATE | unix.MAP_ANONYMOUS
	const rw = unix.PROT_READ | unix.PROT_WRITE
	none := ^uint64(0)
	if r := call(task, sysno.Mmap, scratch, 4*mm.PageSize, rw, anon|unix.MAP_FIXED, none, 0); r != scratch {
		t.Fatalf("mmap fixed = %#x", r)
	}
	for _, c := range []struct {
		name string
		nr   uint64
		args []uint64
		want int64
	}{
		{"munmap above Sv39's user half", sysno.Munmap, []uint64{scratch + 1<<39, mm.PageSize}, -int64(unix.EINVAL)},
		{"munmap at 2^38", sysno.Munmap, []uint64{1 << 38, mm.PageSize}, -int64(unix.EINVAL)},
		{"munmap ending at 2^64", sysno.Munmap, []uint64{^uint64(0) - mm.PageSize + 1, mm.PageSize}, -int64(unix.EINVAL)},
		{"munmap wrapping to 0", sysno.Munmap, []uint64{scratch, ^uint64(scratch) + 1}, -int64(unix.EINVAL)},
		{"mprotect zero length, bad prot", sysno.Mprotect, []uint64{scratch, 0, 0x40}, 0},
		{"mprotect past 2^38", sysno.Mprotect, []uint64{1 << 38, mm.PageSize, unix.PROT_READ}, -int64(unix.ENOMEM)},
		{"madvise unknown advice", sysno.Madvise, []uint64{scratch, mm.PageSize, 999}, -int64(unix.EINVAL)},
		{"madvise over a hole", sysno.Madvise, []uint64{scratch, 5 * mm.PageSize, unix.MADV_NORMAL}, -int64(unix.ENOMEM)},
		{"madvise past 2^38", sysno.Madvise, []uint64{1 << 39, mm.PageSize, unix.MADV_NORMAL}, -int64(unix.ENOMEM)},
		{"madvise wrapping", sysno.Madvise, []uint64{0xfffffffffff00000, 2 << 20, unix.MADV_NORMAL}, -int64(unix.EINVAL)},
		{"mmap 1 TiB", sysno.Mmap, []uint64{0, 1 << 40, rw, anon, none, 0}, -int64(unix.ENOMEM)},
		{"mmap fixed past 2^38", sysno.Mmap, []uint64{1 << 38, mm.PageSize, rw, anon | unix.MAP_FIXED, none, 0}, -int64(unix.ENOMEM)},
		{"mmap anonymous at offset -4096", sysno.Mmap, []uint64{0, mm.PageSize, rw, anon, none, ^uint64(mm.PageSize - 1)}, -int64(unix.EOVERFLOW)},
		{"mmap fixed noreplace over a mapping", sysno.Mmap, []uint64{scratch, mm.PageSize, rw, anon | unix.MAP_FIXED_NOREPLACE, none, 0}, -int64(unix.EEXIST)},
		{"mremap new length 0", sysno.Mremap, []uint64{scratch, mm.PageSize, 0, 0, 0}, -int64(unix.EINVAL)},
		{"mremap fixed past 2^38", sysno.Mremap, []uint64{scratch, mm.PageSize, mm.PageSize, 3, 1 << 38}, -int64(unix.EINVAL)},
		{"mincore past 2^38", sysno.Mincore, []uint64{1 << 38, mm.PageSize, scratch}, -int64(unix.ENOMEM)},
	} {
		if r := call(task, c.nr, c.args...); r != c.want {
			t.Errorf("%s: %d, want %d", c.name, r, c.want)
		}
	}
	// brk(-1) and friends leave the heap alone and answer the current break.
	brk := call(task, sysno.Brk, 0)
	if r := call(task, sysno.Brk, uint64(brk)+2*mm.PageSize); r != brk+2*mm.PageSize {
		t.Fatalf("brk grow = %#x", r)
	}
	if err := task.Proc.AS.CopyOut(uintptr(brk), []byte("heap")); err != nil {
		t.Fatal(err)
	}
	for _, b := range []uint64{^uint64(0), 1 << 38, 1<<38 + mm.PageSize} {
		if r := call(task, sysno.Brk, b); r != brk+2*mm.PageSize {
			t.Errorf("brk(%#x) = %#x, want the current break", b, r)
		}
	}
	got := make([]byte, 4)
	if err := task.Proc.AS.CopyIn(uintptr(brk), got); err != nil || string(got) != "heap" {
		t.Fatalf("heap after brk(-1): %q, %v", got, err)
	}
}

// TestProcFD: only /proc/PID/fd/N, with decimal numbers, names a
// descriptor of another process.
func TestProcFD(t *testing.T) {
	for _, c := range []struct {
		path    string
		pid, fd int
		ok      bool
	}{
		{"/proc/12/fd/3", 12, 3, true},
		{"/proc/1/fd/0", 1, 0, true},
		{"/proc/self/fd/3", 0, 0, false},
		{"/proc/12/fd/", 0, 0, false},
		{"/proc//fd/3", 0, 0, false},
		{"/proc/12/fd/3/x", 0, 0, false},
		{"/proc/12/fdinfo/3", 0, 0, false},
		{"/proc/12/fd/-3", 0, 0, false},
		{"/proc/99999999999999999999/fd/3", 0, 0, false},
		{"/var/www/html/index.html", 0, 0, false},
	} {
		pid, fd, ok := procFD(c.path)
		if pid != c.pid || fd != c.fd || ok != c.ok {
			t.Errorf("procFD(%q) = %d, %d, %v; want %d, %d, %v", c.path, pid, fd, ok, c.pid, c.fd, c.ok)
		}
	}
}

// words encodes 64-bit values as a riscv64 structure of them holds them.
func words(vs ...uint64) []byte { return linux.SliceAsBytes(vs) }
