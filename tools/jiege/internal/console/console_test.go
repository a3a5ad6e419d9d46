package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openSBIBanner is QEMU 7.2's OpenSBI v1.1 banner as it appeared on a console
// jiege logged (Debian's Linux, -bios default).
const openSBIBanner = `
OpenSBI v1.1
   ____                    _____ ____ _____
  / __ \                  / ____|  _ \_   _|
 | |  | |_ __   ___ _ __ | (___ | |_) || |
 | |  | | '_ \ / _ \ '_ \ \___ \|  _ < | |
 | |__| | |_) |  __/ | | |____) | |_) || |_
  \____/| .__/ \___|_| |_|_____/|____/_____|
        | |
        |_|

Platform Name             : riscv-virtio,qemu
Platform Features         : medeleg
Platform HART Count       : 2
Platform IPI Device       : aclint-mswi
Platform Timer Device     : aclint-mtimer @ 10000000Hz
Platform Console Device   : uart8250
Platform HSM Device       : ---
Platform Reboot Device    : sifive_test
Platform Shutdown Device  : sifive_test
Firmware Base             : 0x80000000
Firmware Size             : 296 KB
Runtime SBI Version       : 1.0

Domain0 Name              : root
Domain0 Boot HART         : 0
Domain0 HARTs             : 0*,1*
Domain0 Region00          : 0x0000000002000000-0x000000000200ffff (I)
Domain0 Region01          : 0x0000000080000000-0x000000008007ffff ()
Domain0 Region02          : 0x0000000000000000-0xffffffffffffffff (R,W,X)
Domain0 Next Address      : 0x0000000080200000
Domain0 Next Arg1         : 0x000000009fe00000
Domain0 Next Mode         : S-mode
Domain0 SysReset          : yes

Boot HART ID              : 0
Boot HART Domain          : root
Boot HART Priv Version    : v1.12
Boot HART Base ISA        : rv64imafdch
Boot HART ISA Extensions  : time,sstc
Boot HART PMP Count       : 16
Boot HART PMP Granularity : 4
Boot HART PMP Address Bits: 54
Boot HART MHPM Count      : 16
Boot HART MIDELEG         : 0x0000000000001666
Boot HART MEDELEG         : 0x0000000000f0b509
`

func TestFromKernel(t *testing.T) {
	for _, l := range strings.Split(openSBIBanner, "\n") {
		if FromKernel(l) {
			t.Errorf("OpenSBI line counted as the kernel's: %q", l)
		}
		if Panic(l) {
			t.Errorf("OpenSBI line counted as a panic: %q", l)
		}
	}
	for _, l := range []string{
		"qemu-system-riscv64: terminating on signal 15 from pid 17469 (/tmp/jiege)",
		"qemu-system-riscv64: -netdev user,id=n0: could not set up host forwarding rule",
		"QEMU: Terminated",
		"jiege: qemu -machine virt -nographic -bios default -kernel vmlinux",
		"qemu-system-riscv64 -machine virt -nographic -m 512M -kernel target/kernel.bin",
		"/usr/bin/qemu-system-riscv64 -machine virt -bios none",
		"\t-kernel kernel.bin -initrd rootfs.cpio -append \"console=ttyS0 quiet\" \\",
		"  -netdev user,id=net0,hostfwd=tcp::8080-:80 -device virtio-net-device,netdev=net0",
		"make: *** [Makefile:4: run] Terminated",
		"make[1]: Entering directory '/src'",
		"", "   ",
	} {
		if FromKernel(l) {
			t.Errorf("counted as the kernel's: %q", l)
		}
	}
	for _, l := range []string{
		"Jiege-Go 0.1.0 (go1.26.8) riscv64, S-mode, 1 of 1 harts running",
		"init: eth0 10.0.2.15/24, starting nginx",
		"[    0.000000] Linux version 6.12.107+deb13-riscv64",
		"[kernel] Hello, world!",
		"################",
	} {
		if !FromKernel(l) {
			t.Errorf("not counted as the kernel's: %q", l)
		}
	}
}

func TestPanic(t *testing.T) {
	for _, l := range []string{
		"kernel panic: unexpected trap in the kernel",
		"[PANIC] panicked at src/net/epoll.rs:118:25: called `Option::unwrap()` on a `None` value",
		"panicked at kernel/src/main.rs:40:5:",
		"PANIC: out of frames",
		"panic: runtime error: index out of range [3] with length 3",
		"[    3.104871] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100",
		"[    1.2] Unable to handle kernel NULL pointer dereference at virtual address 0000000000000000",
		"sbi_trap_error: hart0: mcause=0x0000000000000001 mtval=0x0000000000000000",
		"Unhandled exception: LoadPageFault at 0x0",
		"unexpected trap: scause=0xf",
		"fatal error: all goroutines are asleep - deadlock!",
		"[  12.5] BUG: kernel NULL pointer dereference, address: 0000000000000008",
		"\x1b[31m[PANIC]\x1b[0m oops",
	} {
		if !Panic(clean(l)) {
			t.Errorf("not recognised as a panic: %q", l)
		}
	}
	for _, l := range []string{
		"Kernel command line: console=ttyS0 panic=10",
		"sysctl: kernel.panic_on_oops = 1",
		`2026/11/30 19:59:20 [error] 2#2: *4 open() "/var/www/html/panic" failed (2: No such file or directory), client: 10.0.2.2, server: _, request: "GET /panic HTTP/1.1"`,
		"Jiege-Go 0.1.0 (go1.26.8) riscv64, S-mode, 1 of 1 harts running",
		"devices: plic@c000000 plic",
		"boot: since machine start: entry 0 ms, main.main 43 ms, now 71 ms",
		"init: eth0 10.0.2.15/24, starting nginx",
		// Trap registers without words of a panic: a register dump, a
		// panic only if the kernel goes silent after it (Follower.Dump).
		" status: 0000000200000120 badaddr: 0000000000000000 cause: 000000000000000d",
		"scause: 0x000000000000000d, sepc: 0x0000000080201234, stval: 0x0",
		// An attempt's kernel prints this on every fork, and serves.
		"[ERROR] [fork] pid=2: trap_cx_addr=0xfffffffffffde000 sepc=0x4003d880 sp=0x3fffffff50",
	} {
		if Panic(l) {
			t.Errorf("recognised as a panic: %q", l)
		}
	}
}

func TestTrapDump(t *testing.T) {
	for _, l := range []string{
		" status: 0000000200000120 badaddr: 0000000000000000 cause: 000000000000000d",
		"scause: 0x000000000000000d, sepc: 0x0000000080201234, stval: 0x0",
		"[ERROR] [fork] pid=2: trap_cx_addr=0xfffffffffffde000 sepc=0x4003d880 sp=0x3fffffff50",
	} {
		if !TrapDump(l) {
			t.Errorf("not recognised as a register dump: %q", l)
		}
	}
	for _, l := range []string{
		"[PANIC] panicked at src/main.rs:1:1: boom",
		"init: eth0 10.0.2.15/24, starting nginx",
		`2026/11/30 19:59:20 [error] 2#2: *4 open() "/sepc=0x1234" failed (2: No such file or directory)`,
	} {
		if TrapDump(l) {
			t.Errorf("recognised as a register dump: %q", l)
		}
	}
}

// A routine line with trap registers is no panic; it is a dump the kernel
// went silent after only while few of the kernel's lines follow it.
func TestFollowerDump(t *testing.T) {
	p := filepath.Join(t.TempDir(), "console.log")
	fh, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f := Follow(p, 0)
	const fork = "[ERROR] [fork] pid=2: trap_cx_addr=0xfffffffffffde000 sepc=0x4003d880 sp=0x3fffffff50"
	fh.WriteString("kernel up\n" + fork + "\nnginx started\n")
	f.Poll()
	if p := f.Panic(); p != nil {
		t.Fatalf("the fork line counted as a panic: %q", p)
	}
	lines, silent := f.Dump()
	if len(lines) != 2 || lines[0] != fork || !silent {
		t.Fatalf("dump %q silent %v, want the fork line and the line after it, silent", lines, silent)
	}
	// The kernel goes on printing: not silent after the dump. QEMU's own
	// lines are not the kernel's.
	for i := 0; i < dumpTrail+1; i++ {
		fh.WriteString("serving\n")
	}
	f.Poll()
	if lines, silent := f.Dump(); silent || lines[0] != fork || len(lines) != 1+panicContext {
		t.Fatalf("after the kernel went on: dump %q silent %v", lines, silent)
	}
	// A later dump starts afresh, and the kernel went silent after it.
	fh.WriteString("scause: 0x000000000000000d\nsepc: 0x80201234\n  0: 0x80201234\nqemu-system-riscv64: terminating on signal 15\n")
	f.Poll()
	lines, silent = f.Dump()
	if want := []string{"scause: 0x000000000000000d", "sepc: 0x80201234", "  0: 0x80201234"}; !silent || strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("the last dump: %q silent %v, want %q silent", lines, silent, want)
	}
	if f.Panic() != nil {
		t.Errorf("a register dump counted as a panic by its words: %q", f.Panic())
	}
}

func TestFollower(t *testing.T) {
	p := filepath.Join(t.TempDir(), "console.log")
	fh, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f := Follow(p, 0)
	poll := func() {
		t.Helper()
		if err := f.Poll(); err != nil {
			t.Fatal(err)
		}
	}
	fh.WriteString(openSBIBanner)
	poll()
	if _, ok := f.KernelLine(); ok || !f.OtherOutput() || f.Panic() != nil || f.Firmware() != "OpenSBI v1.1" {
		t.Fatalf("after OpenSBI: kernel line %v, other output %v, panic %q", ok, f.OtherOutput(), f.Panic())
	}
	// A line still being written counts once it stopped changing.
	fh.WriteString("Hello from the ker")
	poll()
	fh.WriteString("nel")
	poll()
	if _, ok := f.KernelLine(); ok {
		t.Fatal("a partial line counted at once")
	}
	poll()
	poll()
	if l, ok := f.KernelLine(); !ok || l != "Hello from the kernel" {
		t.Fatalf("kernel line %q %v", l, ok)
	}
	fh.WriteString("\nserving\n\x1b[31m[PANIC]\x1b[0m panicked at src/epoll.rs:9:1: boom\n  sepc 0x80201234\n")
	poll()
	got := f.Panic()
	if len(got) != 2 || got[0] != "[PANIC] panicked at src/epoll.rs:9:1: boom" || got[1] != "  sepc 0x80201234" {
		t.Fatalf("panic lines %q", got)
	}
	for i := 0; i < 20; i++ {
		fh.WriteString("later line\n")
	}
	fh.WriteString("kernel panic: second\n")
	poll()
	if got := f.Panic(); len(got) != 1+panicContext || got[0] != "[PANIC] panicked at src/epoll.rs:9:1: boom" {
		t.Errorf("the first panic and %d lines must be kept: %q", panicContext, got)
	}
	if tail := f.Tail(2); len(tail) != 2 || tail[1] != "kernel panic: second" {
		t.Errorf("tail %q", tail)
	}
	if !strings.Contains(f.Text(), "OpenSBI v1.1\n") || !strings.Contains(f.Text(), "Hello from the kernel\n") {
		t.Errorf("text %q", f.Text())
	}
	// From an offset: what came before is not seen.
	g := Follow(p, int64(len(openSBIBanner)))
	if err := g.Poll(); err != nil {
		t.Fatal(err)
	}
	if g.OtherOutput() {
		t.Error("output before the offset was read")
	}
	// A line that never ends is taken in pieces.
	fh.WriteString(strings.Repeat("#", 3*maxLine))
	poll()
	if tail := f.Tail(1); len(tail) != 1 || len(tail[0]) < maxLine || strings.Trim(tail[0], "#") != "" {
		t.Errorf("endless line: %q", tail)
	}
}

// A long line of jiege's shim or QEMU is not the kernel's in any of its
// maxLine pieces, whether it comes whole or is flushed before its end.
func TestLongNonKernelLine(t *testing.T) {
	long := "jiege: qemu -machine virt" + strings.Repeat(" -device virtio-rng-device,id=rng", 20)
	p := filepath.Join(t.TempDir(), "console.log")
	os.WriteFile(p, []byte(long+"\n"+long[:maxLine+10]), 0o644)
	f := Follow(p, 0)
	f.Poll()
	if l, ok := f.KernelLine(); ok {
		t.Fatalf("a piece of a long jiege line counted as the kernel's: %q", l)
	}
	fh, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(long[maxLine+10:] + "\nkernel: up\n")
	fh.Close()
	f.Poll()
	if l, ok := f.KernelLine(); !ok || l != "kernel: up" {
		t.Fatalf("kernel line %q %v, want the kernel's own", l, ok)
	}
}
