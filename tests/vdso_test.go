package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStaticVDSO and TestDynamicVDSO run testdata/vdso.c as /init with
// trace=syscall: glibc's clock readings must agree with the system calls
// (the program's lines equal those of the same binary under qemu-riscv64),
// the auxiliary vector must name the vDSO, and between the loop's markers
// no clock_gettime or gettimeofday may reach the kernel.
func TestStaticVDSO(t *testing.T) {
	checkVDSO(t, crossCompile(t, "vdso.c"), nil)
}

func TestDynamicVDSO(t *testing.T) {
	bin := crossCompile(t, "vdso.c", "-Wl,--dynamic-linker=/lib/ld-linux-riscv64-lp64d.so.1")
	files := map[string]string{}
	for _, lib := range []string{"ld-linux-riscv64-lp64d.so.1", "libc.so.6"} {
		b, err := os.ReadFile(filepath.Join(crossLib, lib))
		if err != nil {
			t.Fatalf("%v (apt-get install libc6-riscv64-cross)", err)
		}
		files["lib/"+lib] = string(b)
	}
	checkVDSO(t, bin, files)
}

func checkVDSO(t *testing.T, bin []byte, files map[string]string) {
	t.Helper()
	want, wantCode := oracle(t, bin, files)
	if wantCode != 0 {
		t.Fatalf("the program fails under qemu-riscv64 (%d):\n%s", wantCode, want)
	}
	r := bootKernel(t, "256M", "trace=syscall", 3*time.Minute, "-initrd", initramfs(t, bin, files))
	if r.timedOut || r.exitCode != 0 {
		t.Fatalf("exit %d (timed out %v), want 0:\n%s", r.exitCode, r.timedOut, r.console)
	}
	// The line about the auxiliary vector depends on the emulator: compare the others.
	skipAux := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			if !strings.HasPrefix(l, "vdso: AT_SYSINFO_EHDR") {
				out = append(out, l)
			}
		}
		return out
	}
	got := programLines(r.console, "vdso: AT_SYSINFO_EHDR")
	if len(got) == 0 || got[0] != "vdso: AT_SYSINFO_EHDR present" {
		t.Fatalf("the auxiliary vector names no vDSO:\n%s", r.console)
	}
	g, w := skipAux(got), skipAux(strings.Split(strings.TrimSpace(want), "\n"))
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("ours:\n%s\nqemu-riscv64:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	begin, end := strings.Index(r.console, "loop: begin"), strings.Index(r.console, "loop: end")
	if begin < 0 || end < begin {
		t.Fatalf("no loop markers:\n%s", r.console)
	}
	loop := r.console[begin:end]
	if m := regexp.MustCompile(`\[pid 1\] (clock_gettime|gettimeofday)\(.*`).FindString(loop); m != "" {
		t.Errorf("a clock call trapped inside the loop: %s", m)
	}
	// Outside the loop the program makes the same calls itself: the trace
	// must show them, or the check above proves nothing.
	if !strings.Contains(r.console[:begin], "] clock_gettime(") {
		t.Errorf("the trace shows no clock_gettime at all:\n%s", r.console[:begin])
	}
}
