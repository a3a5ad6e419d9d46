package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// TestCPUCountSMP boots a program that counts processors with glibc's
// sysconf, its affinity mask and /sys/devices/system/cpu/online (as
// nginx's worker_processes auto does) on 1 and 4 harts: every count must
// be QEMU's -smp, and a busy thread per processor must finish.
func TestCPUCountSMP(t *testing.T) {
	bin := crossCompile(t, "cpus.c", "-static", "-pthread")
	for _, n := range []int{1, 4} {
		t.Run(fmt.Sprintf("smp%d", n), func(t *testing.T) {
			r := bootKernel(t, "256M", "", 3*time.Minute, "-initrd", initramfs(t, bin, nil), "-smp", strconv.Itoa(n))
			online := "0"
			if n > 1 {
				online = fmt.Sprintf("0-%d", n-1)
			}
			for _, want := range []string{
				fmt.Sprintf("cpus: sysconf %d affinity %d online %s\n", n, n, online),
				fmt.Sprintf("cpus: %d threads done\n", n),
			} {
				if !strings.Contains(r.console, want) {
					t.Errorf("console lacks %q:\n%s", want, r.console)
				}
			}
			if r.timedOut || r.exitCode != 0 {
				t.Errorf("timed out %v, exit %d:\n%s", r.timedOut, r.exitCode, r.console)
			}
		})
	}
}
