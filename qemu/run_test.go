package qemu

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestArgs(t *testing.T) {
	m := Machine{Kernel: "k.elf", BIOS: "tramp.bin", Initrd: "root.cpio", Append: "console=ttyS0 quiet",
		Mem: "1G", SMP: 2, HostPort: 8080, ExtraArgs: []string{"-d", "guest_errors"}}
	got := strings.Join(m.Args(), " ")
	want := "-machine virt -nographic -no-reboot -m 1G -smp 2 -bios tramp.bin -kernel k.elf -initrd root.cpio " +
		"-append console=ttyS0 quiet -global virtio-mmio.force-legacy=false -netdev user,id=n0,hostfwd=tcp:127.0.0.1:8080-:80 " +
		"-device virtio-net-device,netdev=n0 -device virtio-rng-device -d guest_errors"
	if got != want {
		t.Fatalf("args\n got %s\nwant %s", got, want)
	}
	d := Machine{Kernel: "Image", HostPort: 1, GuestPort: 8000}.Args()
	for _, w := range [][2]string{{"-m", "512M"}, {"-smp", "1"}, {"-bios", "default"}} {
		i := slices.Index(d, w[0])
		if i < 0 || d[i+1] != w[1] {
			t.Errorf("default %s: %v", w[0], d)
		}
	}
	if slices.Contains(d, "-initrd") || slices.Contains(d, "-append") {
		t.Errorf("empty initrd/append must be omitted: %v", d)
	}
	if !slices.Contains(d, "user,id=n0,hostfwd=tcp:127.0.0.1:1-:8000") {
		t.Errorf("guest port: %v", d)
	}
	if slices.Contains(d, "-drive") {
		t.Errorf("no disk given, one attached: %v", d)
	}
	disk := strings.Join(Machine{Disk: "/tmp/a,b.cpio"}.Args(), " ")
	aio := ""
	if ioURingWorks() {
		aio = ",aio=io_uring"
	}
	if !strings.Contains(disk, "-drive file=/tmp/a,,b.cpio,format=raw,if=none,id=disk0,readonly=on"+aio+" -device virtio-blk-device,drive=disk0") {
		t.Errorf("disk: %s", disk)
	}
}

// fakeQEMU puts an executable qemu-system-riscv64 shell script first on PATH.
func fakeQEMU(t *testing.T, script string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, DefaultBinary)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

func alive(pid int) bool {
	// A reaped process is gone; a zombie would still answer signal 0, so
	// look at its state too.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

func TestStartPassesArgsAndLogsConsole(t *testing.T) {
	fakeQEMU(t, `for a in "$@"; do echo "arg:$a"; done; echo to-stderr >&2; exit 3`+"\n")
	log := filepath.Join(t.TempDir(), "sub", "console.log")
	var live bytes.Buffer
	in, err := Start(context.Background(), Machine{Kernel: "k", HostPort: 0, LogPath: log}, &live)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop()
	if in.Port() == 0 {
		t.Fatal("port 0 was not replaced by a free port")
	}
	err = in.Wait()
	var ee interface{ ExitCode() int }
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit: %v", err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"arg:-kernel\narg:k\n", "arg:user,id=n0,hostfwd=tcp:127.0.0.1:" + strconv.Itoa(in.Port()) + "-:80\n", "to-stderr\n"} {
		if !strings.Contains(string(b), w) {
			t.Errorf("log lacks %q:\n%s", w, b)
		}
	}
	if live.String() != string(b) {
		t.Errorf("live copy differs from log")
	}
	if in.ConsoleBytes() != int64(len(b)) || !strings.HasSuffix(in.Tail(10), "to-stderr\n") {
		t.Errorf("console count %d tail %q", in.ConsoleBytes(), in.Tail(10))
	}
	select {
	case <-in.FirstOutput():
	default:
		t.Error("first output not signalled")
	}
}

func TestPortInUse(t *testing.T) {
	fakeQEMU(t, "sleep 30\n")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = Start(context.Background(), Machine{HostPort: port}, nil)
	if !errors.Is(err, ErrPortInUse) {
		t.Fatalf("got %v, want ErrPortInUse", err)
	}
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(context.Background(), Machine{}, nil)
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("got %v, want ErrNotInstalled", err)
	}
}

// A QEMU stand-in that ignores SIGTERM and has a child: Stop must escalate
// to SIGKILL and take the whole group down.
func TestStopKillsGroupAfterTimeout(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "child")
	fakeQEMU(t, "trap '' TERM\nsleep 300 & echo $! > "+pidfile+"\necho booted\nwhile :; do sleep 1; done\n")
	old := StopTimeout
	StopTimeout = 300 * time.Millisecond
	defer func() { StopTimeout = old }()
	in, err := Start(context.Background(), Machine{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-in.FirstOutput():
	case <-time.After(10 * time.Second):
		in.Stop()
		t.Fatal("no output from fake qemu")
	}
	b, _ := os.ReadFile(pidfile)
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if child == 0 || !alive(child) || !alive(in.PID()) {
		in.Stop()
		t.Fatalf("child %d not running", child)
	}
	if Running() == 0 {
		t.Error("instance not registered")
	}
	t0 := time.Now()
	if err := in.Stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < StopTimeout {
		t.Errorf("stopped in %v: SIGTERM should have been ignored", d)
	}
	if !in.Exited() || alive(in.PID()) {
		t.Error("qemu still alive after Stop")
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(child) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(child) {
		syscall.Kill(child, syscall.SIGKILL)
		t.Error("child of qemu survived Stop")
	}
	if err := in.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStopTermQuickly(t *testing.T) {
	fakeQEMU(t, "echo up\nexec sleep 300\n")
	in, err := Start(context.Background(), Machine{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-in.FirstOutput()
	t0 := time.Now()
	in.Stop()
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("SIGTERM stop took %v", d)
	}
	if alive(in.PID()) {
		t.Error("still alive")
	}
}

func TestContextCancelStops(t *testing.T) {
	fakeQEMU(t, "exec sleep 300\n")
	ctx, cancel := context.WithCancel(context.Background())
	in, err := Start(ctx, Machine{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-in.Done():
	case <-time.After(10 * time.Second):
		in.Stop()
		t.Fatal("cancel did not stop qemu")
	}
}

func TestStopAll(t *testing.T) {
	fakeQEMU(t, "exec sleep 300\n")
	var ins []*Instance
	for range 3 {
		in, err := Start(context.Background(), Machine{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	StopAll()
	for _, in := range ins {
		if !in.Exited() {
			t.Errorf("pid %d survived StopAll", in.PID())
		}
	}
	if Running() != 0 {
		t.Errorf("Running() = %d", Running())
	}
}

func writeELF(t *testing.T, machine elf.Machine) string {
	t.Helper()
	var b bytes.Buffer
	h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: 1, Entry: 0x80200000,
		Ehsize: 64, Phentsize: 56, Shentsize: 64}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h.Ident[elf.EI_VERSION] = 1
	binary.Write(&b, binary.LittleEndian, h)
	p := filepath.Join(t.TempDir(), "k.elf")
	os.WriteFile(p, b.Bytes(), 0o644)
	return p
}

func TestKind(t *testing.T) {
	dir := t.TempDir()
	img := make([]byte, 0x100)
	copy(img[0x38:], "RSC\x05")
	os.WriteFile(filepath.Join(dir, "Image"), img, 0o644)
	os.WriteFile(filepath.Join(dir, "garbage"), bytes.Repeat([]byte{0xa5}, 200), 0o644)
	os.WriteFile(filepath.Join(dir, "short"), []byte("x"), 0o644)
	cases := []struct {
		path string
		want KernelKind
		err  bool
	}{
		{writeELF(t, elf.EM_RISCV), KindELF, false},
		{writeELF(t, elf.EM_X86_64), KindUnknown, true},
		{filepath.Join(dir, "Image"), KindImage, false},
		{filepath.Join(dir, "garbage"), KindUnknown, true},
		{filepath.Join(dir, "short"), KindUnknown, true},
		{filepath.Join(dir, "missing"), KindUnknown, true},
	}
	for _, c := range cases {
		k, err := Kind(c.path)
		if k != c.want || (err != nil) != c.err {
			t.Errorf("Kind(%s) = %v, %v; want %v, err %v", filepath.Base(c.path), k, err, c.want, c.err)
		}
	}
}

// TestMain lets the test binary act as a process that listens on a port
// with QEMU's backlog of 1 and never accepts.
func TestMain(m *testing.M) {
	if port := os.Getenv("QEMU_TEST_LISTEN"); port != "" {
		fd, _ := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		p, _ := strconv.Atoi(port)
		if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: p, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			os.Exit(3)
		}
		syscall.Listen(fd, 1)
		os.Stdout.WriteString("listening\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// listener starts a child that listens on a free port with backlog 1.
func listener(t *testing.T) (pid, port int) {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "QEMU_TEST_LISTEN="+strconv.Itoa(port))
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 10)
	if n, _ := out.Read(buf); string(buf[:n]) != "listening\n" {
		t.Fatalf("child: %q", buf[:n])
	}
	return cmd.Process.Pid, port
}

// connectAll opens n connections with a short timeout each and returns how
// many were established.
func connectAll(port, n int) int {
	ok := 0
	for range n {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 300*time.Millisecond)
		if err == nil {
			ok++
			defer c.Close()
		}
	}
	return ok
}

func TestWidenBacklog(t *testing.T) {
	// Backlog 1 and nobody accepting: the accept queue holds two, and
	// later connects time out.
	_, port := listener(t)
	if ok := connectAll(port, 6); ok == 6 {
		t.Fatalf("backlog 1 accepted %d connections: the test cannot tell", ok)
	}
	pid, port := listener(t)
	if err := WidenBacklog(pid, port, 64); err != nil {
		t.Fatal(err)
	}
	if ok := connectAll(port, 6); ok != 6 {
		t.Errorf("after WidenBacklog %d of 6 connections", ok)
	}
	if err := WidenBacklog(pid, port+1, 64); !errors.Is(err, errNoListener) {
		t.Errorf("wrong port: %v", err)
	}
}

// ConsoleBytesAt tells where the output of a process started at a given
// moment begins.
func TestConsoleBytesAt(t *testing.T) {
	t0 := time.Now()
	in, err := start(context.Background(), exec.Command("sh", "-c", "printf first; sleep 1; printf second; sleep 30"), 0, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop()
	wait := func(n int64) time.Time {
		deadline := time.Now().Add(20 * time.Second)
		for in.ConsoleBytes() < n {
			if time.Now().After(deadline) {
				t.Fatalf("console has %d bytes, want %d", in.ConsoleBytes(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return time.Now()
	}
	between := wait(5)
	end := wait(11)
	if got := in.ConsoleBytesAt(t0); got != 0 {
		t.Errorf("before the start: %d", got)
	}
	if got := in.ConsoleBytesAt(between); got != 5 {
		t.Errorf("between the writes: %d, want 5", got)
	}
	if got := in.ConsoleBytesAt(end.Add(time.Second)); got != 11 {
		t.Errorf("after both: %d, want 11", got)
	}
}

func TestMemBytes(t *testing.T) {
	for in, want := range map[string]int64{"512M": 512 << 20, "128m": 128 << 20, "2G": 2 << 30, "1.5G": 3 << 29,
		"256": 256 << 20, "size=1G,slots=2,maxmem=4G": 1 << 30, "65536K": 64 << 20} {
		if got, err := MemBytes(in); got != want || err != nil {
			t.Errorf("MemBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "M", "lots", "-1G", "0", "9999999T"} {
		if _, err := MemBytes(bad); err == nil {
			t.Errorf("MemBytes(%q) accepted", bad)
		}
	}
}
