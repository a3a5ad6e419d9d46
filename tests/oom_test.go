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

// TestLongWriteIsKillable: a write(2) of 1 GiB from an untouched mapping to
// the console (hours at the UART's pace) neither fills memory (the kernel
// reads untouched pages as the zero page) nor keeps the hart: the parent
// runs, kills the writer after a second and reaps it.
func TestLongWriteIsKillable(t *testing.T) {
	bin := crossCompile(t, "longwrite.c")
	r := bootKernel(t, "256M", "", 2*time.Minute, "-initrd", initramfs(t, bin, nil))
	m := regexp.MustCompile(`longwrite: child ended by signal (\d+) after (\d+) s`).FindStringSubmatch(r.console)
	switch {
	case r.timedOut:
		t.Fatalf("the kernel did not finish in 2 minutes: the writer kept the hart")
	case m == nil || m[1] != "9":
		t.Fatalf("want the child ended by SIGKILL, exit %d; console tail:\n%s", r.exitCode, r.console[max(0, len(r.console)-2000):])
	case strings.Contains(r.console, "out of memory") || strings.Contains(r.console, "kernel panic"):
		t.Fatalf("reading untouched memory exhausted it")
	}
	t.Logf("child ended by SIGKILL %s s after the parent's sleep began", m[2])
}
