package tests

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestOutOfMemory: a program that touches memory until none is left is
// killed by the kernel's OOM killer with SIGKILL, as on Linux; the kernel
// keeps its own reserve, reports the kill, and init goes on allocating.
func TestOutOfMemory(t *testing.T) {
	bin := crossCompile(t, "oom.c")
	r := bootKernel(t, "128M", "", 3*time.Minute, "-initrd", initramfs(t, bin, nil))
	if r.timedOut || r.exitCode != 0 {
		t.Fatalf("exit %d (timed out %v):\n%s", r.exitCode, r.timedOut, r.console)
	}
	for _, want := range []string{"child killed: 1, by signal 9", "init allocates again: 2"} {
		if !strings.Contains(r.console, want) {
			t.Errorf("console lacks %q", want)
		}
	}
	if !regexp.MustCompile(`kernel: out of memory: killed pid 2 \(/init\), \d+ KiB resident`).MatchString(r.console) {
		t.Errorf("no OOM report for pid 2")
	}
	if strings.Contains(r.console, "kernel panic") {
		t.Errorf("the kernel panicked")
	}
	if t.Failed() {
		t.Logf("console:\n%s", r.console)
	}
}
