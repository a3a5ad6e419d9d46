package tests

import (
	"testing"
	"time"
)

// TestGoProgram runs a static Go program (testdata/goprog: goroutines over
// several threads, timers, channels, GC) as /init on the kernel and under
// qemu-riscv64, and compares the output and exit status. Go's runtime reads
// the time CSR from user mode, clones threads without CLONE_SETTLS and
// parks them on futexes with timeouts.
func TestGoProgram(t *testing.T) {
	recordProgram(t)
	prog := buildGo(t, "testdata/goprog")
	want, wantCode := oracle(t, prog, nil)
	r := bootKernel(t, "256M", "", 3*time.Minute, "-initrd", initramfs(t, prog, nil))
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	compareWithOracle(t, r, want, wantCode)
}
