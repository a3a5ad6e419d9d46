package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConsoleShell types at Debian's busybox sh on the console, as a user
// of `make shell` would: the UART's input goes through the kernel's line
// discipline (echo, lines), Ctrl-C interrupts the foreground job with
// SIGINT and the shell goes on, stty reads the terminal's settings, and
// the shell's exit status ends the guest.
func TestConsoleShell(t *testing.T) {
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	bb, err := os.ReadFile(linuxBusybox(t))
	if err != nil {
		t.Fatal(err)
	}
	cpio := initramfs(t, bb, map[string]string{"bin/busybox": string(bb)})
	steps := []struct{ waitFor, send string }{
		{"built-in shell", "echo tty ok $((6*7))\n"},
		{"tty ok 42", "sleep 30\n"},
		{"sleep 30", "\x03"},
		{"^C", "echo status $?\n"},
		{"status 130", "busybox stty\n"},
		{"speed 38400 baud", "exit 5\n"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-riscv64", "-machine", "virt", "-m", "256M", "-nographic", "-monitor", "none",
		"-bios", filepath.Join(repoRoot, "build/tramp.bin"), "-kernel", filepath.Join(repoRoot, "build/kernel.elf"),
		"-initrd", cpio, "-append", "init=/bin/busybox -- setsid -c /bin/busybox sh -i")
	var mu sync.Mutex
	var console bytes.Buffer
	cmd.Stdout = writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return console.Write(p)
	})
	cmd.Stderr = cmd.Stdout
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = dieWithTest
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen := func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(console.String(), s)
	}
	for _, s := range steps {
		for !seen(s.waitFor) && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
		}
		if ctx.Err() != nil {
			break
		}
		if s.send == "\x03" {
			time.Sleep(500 * time.Millisecond) // let sleep start
		}
		stdin.Write([]byte(s.send))
	}
	err = cmd.Wait()
	mu.Lock()
	out := console.String()
	mu.Unlock()
	if ctx.Err() != nil {
		t.Fatalf("the shell did not finish its steps in 2 minutes:\n%s", out)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 5 {
		t.Fatalf("QEMU: %v, want exit status 5 (the shell's):\n%s", err, out)
	}
	for _, s := range steps {
		if !strings.Contains(out, s.waitFor) {
			t.Errorf("console lacks %q", s.waitFor)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// linuxBusybox returns Debian's busybox-static binary from the tree of
// jiege's linux root filesystem (fetched or reused by jiege rootfs).
func linuxBusybox(t *testing.T) string {
	t.Helper()
	r := jiege(t, 10*time.Minute, nil, "rootfs", "--flavor", "linux", "--quiet")
	if r.code != 0 {
		t.Fatalf("jiege rootfs --flavor linux: exit %d\n%s", r.code, r.stderr)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.HasPrefix(k, "rootfs") {
			return filepath.Join(filepath.Dir(strings.TrimSpace(v)), "tree/usr/bin/busybox")
		}
	}
	t.Fatalf("jiege rootfs names no root filesystem:\n%s", r.stdout)
	return ""
}
