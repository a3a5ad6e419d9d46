package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/u-root/u-root/pkg/cpio"
)

// shapeAttempt writes an attempt directory whose run target boots our
// kernel with nginx's root filesystem and testdata/shapes.c as init,
// given args (see shapes.c), and returns the directory and the marker in
// its QEMU command line.
func shapeAttempt(t *testing.T, name string, args ...string) (dir, marker string) {
	t.Helper()
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	base, _ := oursRootfs(t)
	archive, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	return dir, writeShapeAttempt(t, dir, name, archive, filepath.Join(repoRoot, "build/kernel.elf"), args...)
}

// writeShapeAttempt writes dir's initrd.cpio (archive with shapes added)
// and the Makefile whose run target boots kernel with it; it returns the
// marker in the QEMU command line.
func writeShapeAttempt(t *testing.T, dir, name string, archive []byte, kernel string, args ...string) string {
	t.Helper()
	var extra strings.Builder
	w := cpio.Newc.Writer(&extra)
	shapes := string(crossCompile(t, "shapes.c"))
	if err := cpio.WriteRecordsAndDirs(w, []cpio.Record{cpio.StaticFile("shapes", shapes, 0o755)}); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "initrd.cpio"), append(archive, extra.String()...), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := "jiege-e2e-" + name + "-" + strconv.Itoa(os.Getpid())
	mk := fmt.Sprintf("run:\n\tqemu-system-riscv64 -machine virt -nographic -m 512M -bios %s -kernel %s "+
		"-initrd initrd.cpio -append '%s init=/shapes -- %s' -global virtio-mmio.force-legacy=false "+
		"-netdev user,id=net0,hostfwd=tcp::8080-:80 -device virtio-net-device,netdev=net0\n",
		filepath.Join(repoRoot, "build/tramp.bin"), kernel, marker, strings.Join(args, " "))
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	return marker
}

// A from-scratch guest whose nginx is killed after its 60th request, in
// the middle of the fingerprint's random requests: the stage fails as
// stopped-answering, naming the request from which on nothing answered
// and what the connections got, not as a wrong answer.
func TestJiegeShapeStoppedAnswering(t *testing.T) {
	dir, marker := shapeAttempt(t, "stopped", "stop", "60")
	out := filepath.Join(t.TempDir(), "v.json")
	r := jiege(t, 8*time.Minute, nil, "verify", "--attempt", dir, "--json", out)
	var v verifyDoc
	readJSON(t, out, &v)
	s, _ := stageOf(v, v.FailedStage)
	t.Logf("%s: %s: %s", v.FailedStage, s.Class, s.Detail)
	if r.code != 1 || v.Pass || s.Class != "stopped-answering" {
		t.Fatalf("exit %d, failed at %q as %q, want stopped-answering\n%s", r.code, v.FailedStage, s.Class, r.stderr)
	}
	if !regexp.MustCompile(`the server stopped answering at request \d+ `).MatchString(s.Detail) ||
		!regexp.MustCompile(`from then on .*(refused|reset)`).MatchString(s.Detail) {
		t.Errorf("the detail does not name the request and what the connections got: %q", s.Detail)
	}
	noQEMUWith(t, marker)
}

// A kernel that prints a routine debug line with sepc= every half second
// (as one real attempt's kernel did on every fork) while nginx serves:
// no stage fails as a kernel panic, and the attempt passes.
func TestJiegeShapeDebugLines(t *testing.T) {
	dir, marker := shapeAttempt(t, "chatty", "chatty")
	out := filepath.Join(t.TempDir(), "v.json")
	r := jiege(t, 8*time.Minute, nil, "verify", "--attempt", dir, "--json", out)
	var v verifyDoc
	readJSON(t, out, &v)
	for _, s := range v.Stages {
		if s.Class == "kernel-panic" {
			t.Errorf("%s failed as a kernel panic: %s", s.Name, s.Detail)
		}
	}
	if r.code != 0 || !v.Pass {
		s, _ := stageOf(v, v.FailedStage)
		t.Fatalf("exit %d, failed at %q (%s: %s)\n%s", r.code, v.FailedStage, s.Class, s.Detail, r.stderr)
	}
	if b, err := os.ReadFile(v.ConsoleLog); err != nil || !strings.Contains(string(b), "sepc=0x4003d880") {
		t.Errorf("the console log %s does not hold the debug lines: %v", v.ConsoleLog, err)
	}
	noQEMUWith(t, marker)
}

// An attempt whose nginx lives inside its kernel image, as two real
// attempts put it there with Rust's include_bytes!: the kernel ELF
// carries nginx in a section of its own, and the root filesystem holds
// only a masked copy (the XOR of its bytes) that init unmasks at boot.
// jiege finds the nginx in the kernel image, says so, and uses it as the
// oracle, and the attempt passes.
func TestJiegeShapeEmbeddedNginx(t *testing.T) {
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	base, tree := oursRootfs(t)
	f, err := os.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(f))
	if err != nil {
		t.Fatal(err)
	}
	nginx, err := os.ReadFile(filepath.Join(tree, "usr/sbin/nginx"))
	if err != nil {
		t.Fatal(err)
	}
	masked := make([]byte, len(nginx))
	for i, c := range nginx {
		masked[i] = c ^ 0xa5
	}
	var archive bytes.Buffer
	w := cpio.Newc.Writer(&archive)
	for _, r := range recs {
		if r.Name == "usr/sbin/nginx" {
			continue
		}
		if err := w.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteRecord(cpio.StaticFile("nginx.x", string(masked), 0o644)); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(archive.Bytes(), nginx[:4096]) {
		t.Fatal("the root filesystem still holds nginx's bytes")
	}
	dir := t.TempDir()
	kernel := filepath.Join(dir, "kernel.elf")
	section := filepath.Join(dir, "nginx.bin")
	if err := os.WriteFile(section, nginx, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("riscv64-linux-gnu-objcopy", "--add-section", ".rodata.nginx="+section,
		filepath.Join(repoRoot, "build/kernel.elf"), kernel).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	os.Remove(section)
	marker := writeShapeAttempt(t, dir, "embedded", archive.Bytes(), kernel, "embedded")
	out := filepath.Join(t.TempDir(), "v.json")
	r := jiege(t, 8*time.Minute, nil, "verify", "--attempt", dir, "--json", out)
	var v verifyDoc
	readJSON(t, out, &v)
	if r.code != 0 || !v.Pass {
		s, _ := stageOf(v, v.FailedStage)
		t.Fatalf("exit %d, failed at %q (%s: %s)\n%s", r.code, v.FailedStage, s.Class, s.Detail, r.stderr)
	}
	fp, _ := stageOf(v, "nginx-fingerprint")
	t.Logf("fingerprint: %s", fp.Detail)
	if !strings.Contains(fp.Detail, "the attempt's own nginx") || !strings.Contains(fp.Detail, "out of -kernel "+kernel) {
		t.Errorf("the fingerprint does not name the nginx carved out of the kernel image as its oracle: %q", fp.Detail)
	}
	noQEMUWith(t, marker)
}
