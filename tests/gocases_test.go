package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestGoCases runs each program of testdata/gocases (a static Go program
// that exercises one way the Go runtime and standard library use the
// kernel: sendfile into a socket, splice, openat2, exec with busy
// threads) as /init on the kernel and under qemu-riscv64 in a scratch
// directory, and compares output and exit status.
func TestGoCases(t *testing.T) {
	dirs, err := filepath.Glob("testdata/gocases/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no Go cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			prog := buildGo(t, dir)
			want, wantCode := oracleInDir(t, prog)
			r := bootKernel(t, "512M", "", 4*time.Minute, "-smp", "2", "-initrd", initramfs(t, prog, nil))
			if r.timedOut {
				t.Fatalf("timed out:\n%s", r.console)
			}
			compareWithOracle(t, r, want, wantCode)
		})
	}
}

// buildGo builds the Go program in dir as a static linux/riscv64
// executable and returns it.
func buildGo(t *testing.T, dir string) []byte {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "prog")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(build.Environ(), "GOOS=linux", "GOARCH=riscv64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	prog, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}
