package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMuslDynamic runs testdata/musl.c, dynamically linked against
// Debian's riscv64 musl (packages musl and musl-dev, fetched by jiege's
// apt code), as init: the kernel loads musl's loader, which maps itself as
// libc. Its output and exit status are compared with the same binary and
// loader under qemu-riscv64.
func TestMuslDynamic(t *testing.T) {
	gcc, err := exec.LookPath("riscv64-linux-gnu-gcc")
	if err != nil {
		t.Fatal("riscv64-linux-gnu-gcc missing: tools/deps.sh test installs gcc-riscv64-linux-gnu")
	}
	tree := debianRootfs(t, "musl,musl-dev").tree
	musl := filepath.Join(tree, "usr/lib/riscv64-linux-musl")
	// What musl-gcc's specs do, with the tree's paths: musl's headers and
	// start files, the cross compiler's own headers and libgcc.
	gccInclude, err := exec.Command(gcc, "-print-file-name=include").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The host's binutils (2.40) cannot read what Debian's newer ones
	// wrote into musl's start files (ULEB128 relocations in their debug
	// sections) and crash on libc.so's ISA attributes: the link uses
	// copies without those sections; the guest gets libc.so as it is.
	work := t.TempDir()
	link := func(name string) string {
		out := filepath.Join(work, name)
		cmd := exec.Command("riscv64-linux-gnu-objcopy", "-R", ".rela.debug*", "-R", ".debug*", "-R", ".riscv.attributes",
			filepath.Join(musl, name), out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("objcopy %s: %v\n%s", name, err, b)
		}
		return out
	}
	bin := filepath.Join(work, "musl")
	args := []string{"-O2", "-Wall", "-Werror", "-nostdinc", "-nostdlib",
		"-isystem", filepath.Join(tree, "usr/include/riscv64-linux-musl"), "-isystem", strings.TrimSpace(string(gccInclude)),
		"-o", bin, link("Scrt1.o"), link("crti.o"), "testdata/musl.c", "-L", filepath.Dir(link("libc.so")), "-lc", "-lgcc", link("crtn.o"),
		"-Wl,--dynamic-linker=/lib/ld-musl-riscv64.so.1"}
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("building musl.c against musl: %v\n%s", err, out)
	}
	prog, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	libc, err := os.ReadFile(filepath.Join(musl, "libc.so"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"lib/ld-musl-riscv64.so.1": string(libc)}
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "lib"), 0o755)
	if err := os.WriteFile(filepath.Join(root, "lib/ld-musl-riscv64.so.1"), libc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "init"), prog, 0o755); err != nil {
		t.Fatal(err)
	}
	// The children it execs run through binfmt_misc: their loader comes
	// from QEMU_LD_PREFIX.
	t.Setenv("QEMU_LD_PREFIX", root)
	want, wantCode := runOracle(t, t.TempDir(), "-L", root, filepath.Join(root, "init"))
	if wantCode != 0 || !strings.HasPrefix(want, "hello from musl\n") {
		t.Fatalf("under qemu-riscv64 it exited %d:\n%s", wantCode, want)
	}
	r := bootKernel(t, "256M", "", 2*time.Minute, "-initrd", initramfs(t, prog, files))
	if r.timedOut {
		t.Fatalf("timed out:\n%s", r.console)
	}
	if n := compareWithOracle(t, r, want, wantCode); n > 0 {
		t.Logf("%d lines as under qemu-riscv64", n)
	}
}
