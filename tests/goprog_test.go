package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	bin := filepath.Join(t.TempDir(), "goprog")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, ".")
	build.Dir = "testdata/goprog"
	build.Env = append(build.Environ(), "GOOS=linux", "GOARCH=riscv64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	prog, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	want, wantCode := oracle(t, prog, nil)
	r := bootKernel(t, "256M", "", 3*time.Minute, "-initrd", initramfs(t, prog, nil))
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	compareWithOracle(t, r, want, wantCode)
}
