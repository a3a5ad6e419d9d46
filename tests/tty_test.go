package tests

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// TestConsoleWriteLeavesOthersRunning: issue 34's console stall. While one
// process writes 2 MiB to the console in one write(2) (seconds at the
// UART's pace), another that only computes and reads CLOCK_MONOTONIC must
// keep running, at 1, 2 and 4 harts: its longest gap between two reads
// stays under 50 ms, as on Linux, where a console write is preemptible.
//
// The host stalls the guest too (the machine is shared, and the write
// itself keeps QEMU and the test busy on it), so each round boots Debian's
// Linux with the same /init and harts right after ours: a gap of 50 ms or
// more passes when Linux, under the same host, stalled at least half as
// long. A round whose reader, going on as long again after the write with
// no writer, stalled 25 ms or more measured the host alone and is not
// counted. Up to three rounds: one that passes passes the test; it fails
// when every round the host let measure failed, and is skipped, saying
// so, when none could measure. (CI on 2026-12-05, while the writer still
// slept instead of yielding, failed the absolute limit alone at one hart:
// 51-73 ms in three boots, under 16 ms after.)
func TestConsoleWriteLeavesOthersRunning(t *testing.T) {
	bin := crossCompile(t, "consolestall.c")
	cpio := initramfs(t, bin, nil)
	line := regexp.MustCompile(`consolestall: writer exit (\d+), its write took \d+ ms; the reader's longest gap while it wrote (\d+) us \(\d+ over 50 ms\), as long after it (\d+) us`)
	const limit = 50000 // us
	// measure returns the reader's longest gaps while the console was
	// written and after, from the consolestall line in console.
	measure := func(kernel, console string) (writing, after int) {
		t.Helper()
		m := line.FindStringSubmatch(console)
		if m == nil || m[1] != "0" {
			t.Fatalf("%s: no consolestall line with writer exit 0; console tail:\n%s", kernel, console[max(0, len(console)-3000):])
		}
		t.Logf("%s: %s", kernel, m[0])
		return atoi(t, m[2]), atoi(t, m[3])
	}
	for _, harts := range []string{"1", "2", "4"} {
		t.Run("smp"+harts, func(t *testing.T) {
			var seen []string
			conclusive := 0
			for range 3 {
				r := bootKernel(t, "256M", "", 3*time.Minute, "-initrd", cpio, "-smp", harts)
				if r.timedOut || r.exitCode != 0 {
					t.Fatalf("exit %d (timed out %v), console tail:\n%s", r.exitCode, r.timedOut, r.console[max(0, len(r.console)-3000):])
				}
				writing, after := measure("ours", r.console)
				if after >= limit/2 {
					seen = append(seen, fmt.Sprintf("ours %d us, not counted: %d us after it", writing, after))
					continue // the host stalled the guest: measure again
				}
				if writing < limit {
					return
				}
				out, code := bootLinux(t, cpio, "256M", 3*time.Minute, "-smp", harts)
				if code != 0 {
					t.Fatalf("Linux: init exit %d:\n%s", code, out)
				}
				linuxWriting, _ := measure("Linux", out)
				seen = append(seen, fmt.Sprintf("ours %d us, Linux %d us", writing, linuxWriting))
				if writing <= 2*linuxWriting {
					return
				}
				conclusive++
			}
			if conclusive > 0 {
				t.Fatalf("in every round the host let measure, the reader stalled 50 ms or more while the console was written, over twice Linux's stall:\n%s", strings.Join(seen, "\n"))
			}
			t.Skipf("the host stalled the guest 25 ms or more in every boot, with no writer too; cannot measure:\n%s", strings.Join(seen, "\n"))
		})
	}
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
