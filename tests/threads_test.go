package tests

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDynamicPthreads runs the pthreads conformance program linked against
// glibc's shared libc: the dynamic loader sets up each thread's TLS block
// (the __thread variable) and pthread_create goes through libc.so.6.
// Output and exit status are compared with the same files under
// qemu-riscv64.
func TestDynamicPthreads(t *testing.T) {
	bin := crossCompile(t, "conform/threads/pthreads.c", "-Wl,--dynamic-linker=/lib/ld-linux-riscv64-lp64d.so.1", "-pthread")
	files := map[string]string{}
	for _, lib := range []string{"ld-linux-riscv64-lp64d.so.1", "libc.so.6"} {
		b, err := os.ReadFile(filepath.Join(crossLib, lib))
		if err != nil {
			t.Fatalf("%v (apt-get install libc6-riscv64-cross)", err)
		}
		files["lib/"+lib] = string(b)
	}
	want, wantCode := oracle(t, bin, files)
	r := bootKernel(t, "256M", "", 3*time.Minute, "-initrd", initramfs(t, bin, files))
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	compareWithOracle(t, r, want, wantCode)
}
