package provenance

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jiege-go/jiege/tools/jiege/internal/controls"
)

func TestBootFiles(t *testing.T) {
	args := []string{"-machine", "virt", "-bios", "default", "-kernel", "out/kernel.bin",
		"-initrd", "/abs/root.cpio", "-device", "loader,file=blob.bin,addr=0x80200000",
		"-device", "virtio-net-device,netdev=n0", "-drive", "file=disk.img,if=none,id=d0",
		"-drive", "if=pflash,file=/fw/flash.bin", "-append", "console=ttyS0"}
	got := BootFiles(args, "/att")
	want := []File{
		{"/att/out/kernel.bin", "-kernel", Code},
		{"/abs/root.cpio", "-initrd", Data},
		{"/att/blob.bin", "-device loader", Code},
		{"/att/disk.img", "-drive", Data},
		{"/fw/flash.bin", "-drive", Code},
	}
	if len(got) != len(want) {
		t.Fatalf("BootFiles = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("file %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if f := BootFiles([]string{"-bios", "fw.bin", "-bios", "none"}, "/d"); len(f) != 1 || f[0].Path != "/d/fw.bin" || f[0].Role != Code {
		t.Errorf("-bios: %+v", f)
	}
}

// image returns a RISC-V Linux Image header (64 bytes, magic2 at 0x38)
// followed by body; efi starts it with the PE stub's "MZ".
func image(efi bool, body string) []byte {
	h := make([]byte, 0x40)
	if efi {
		copy(h, "MZ")
	}
	copy(h[0x30:], "RISCV\x00\x00\x00")
	copy(h[0x38:], "RSC\x05")
	return append(h, body...)
}

// zboot returns the start of a Linux EFI zboot image: "MZ", "zimg" at 4,
// payload offset and size, the compression's name at 0x18.
func zboot(comp string) []byte {
	h := make([]byte, 0x40)
	copy(h, "MZ")
	copy(h[4:], "zimg")
	copy(h[8:], "\x00\x10\x00\x00\x00\x20\x00\x00")
	copy(h[0x18:], comp+"\x00")
	return append(h, make([]byte, 64)...)
}

const debianBanner = "Linux version 6.12.107+deb13-riscv64 (debian-kernel@lists.debian.org) (riscv64-linux-gnu-gcc-14) #1 SMP Debian 6.12.107-1\n"

func write(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func TestScanFile(t *testing.T) {
	loop := controls.LoopELF(0x80200000)
	cases := []struct {
		name  string
		data  []byte
		role  Role
		linux bool
		has   []string // substrings of the signs, in order
	}{
		// The plain header is a boot format (our kernel's build/Image has
		// it): without Linux's banner it is reported, not a verdict.
		{"image", image(false, "\x00code"), Code, false, []string{"a RISC-V Linux Image header"}},
		{"image with Linux's banner", image(false, "\x00code\x00"+debianBanner), Code, true,
			[]string{"a RISC-V Linux Image header", `Linux's banner "Linux version 6.12.107+deb13-riscv64`}},
		{"efi image", image(true, "\x00code\x00"+debianBanner), Code, true,
			[]string{"an EFI-stub Linux Image", `Linux's banner "Linux version 6.12.107+deb13-riscv64`}},
		{"elf vmlinux", append(append([]byte{}, loop...), "\x00\x00"+debianBanner...), Code, true, []string{"is an ELF that holds Linux's banner"}},
		{"gzip image", gz(image(false, debianBanner)), Code, true, []string{"(gzip payload) is a RISC-V Linux Image header", "(gzip payload) holds Linux's banner"}},
		{"efi zboot", zboot("zstd22"), Code, true, []string{`is an EFI zboot Linux image ("zimg" at 4, its payload compressed with "zstd22")`}},
		{"loader blob", append([]byte("\x13\x00\x00\x00"), debianBanner...), Code, true, []string{"holds Linux's banner"}},
		{"scratch elf", loop, Code, false, nil},
		{"xv6", append(append([]byte{}, loop...), "\nxv6 kernel is booting\n"...), Code, false, []string{"holds xv6's marker"}},
		{"initrd with a kernel", append([]byte("070701"), debianBanner...), Data, false, []string{"holds Linux's banner"}},
		{"initrd naming FreeBSD", []byte("070701 The FreeBSD Project"), Data, false, nil},
		{"banner without a version", append(append([]byte{}, loop...), "Linux version %s\n"...), Code, false, nil},
	}
	for _, c := range cases {
		p := write(t, "f", c.data)
		signs, err := ScanFile(File{Path: p, Option: "-kernel", Role: c.role})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(signs) != len(c.has) {
			t.Errorf("%s: signs %q, want %d", c.name, signs, len(c.has))
			continue
		}
		for i, s := range signs {
			if !strings.Contains(s.What, c.has[i]) || !strings.Contains(s.What, p) {
				t.Errorf("%s: sign %q, want it to name %s and say %q", c.name, s.What, p, c.has[i])
			}
			// The plain Image header is never the verdict itself.
			plainHeader := strings.Contains(s.What, "is a RISC-V Linux Image header")
			if s.Linux != (c.linux && c.role == Code && strings.Contains(s.What, "Linux") && !plainHeader) {
				t.Errorf("%s: sign %q Linux=%v", c.name, s.What, s.Linux)
			}
		}
	}
	if _, err := ScanFile(File{Path: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a missing file must be an error")
	}
}

// TestScanFileAcrossWindows puts a banner and a marker across and near
// the seams between the windows ScanFile reads, and far into a file: each
// is found once, the banner whole.
func TestScanFileAcrossWindows(t *testing.T) {
	loop := controls.LoopELF(0x80200000)
	seam := scanOverlap + scanWindow // the first window's end
	marker := "xv6 kernel is booting"
	for _, at := range []int{
		4096,
		seam - len(debianBanner)/2,
		seam - scanOverlap - 3,
		seam - scanOverlap,
		seam,
		seam + scanWindow - 7,
		3*scanWindow + 12345,
	} {
		// Windows follow the banner's: what is kept of it must not be
		// the buffer they are read into.
		b := make([]byte, max(at+4*scanOverlap, 3*scanWindow))
		copy(b, loop)
		copy(b[at:], debianBanner)
		copy(b[at+len(debianBanner)+scanOverlap:], marker)
		// A second banner further on is not a second sign: the first is
		// the one reported.
		later := "Linux version 9.9.9-later (x) #1\n"
		copy(b[len(b)-len(later):], later)
		p := write(t, "big", b)
		signs, err := ScanFile(File{Path: p, Option: "-kernel", Role: Code})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"is an ELF that holds Linux's banner " + fmt.Sprintf("%q", shorten(debianBanner)), "holds xv6's marker"}
		if len(signs) != len(want) {
			t.Errorf("banner at %d: signs %q, want %q", at, signs, want)
			continue
		}
		for i, s := range signs {
			if !strings.Contains(s.What, want[i]) {
				t.Errorf("banner at %d: sign %q, want it to say %q", at, s.What, want[i])
			}
		}
	}
}

func TestScanConsole(t *testing.T) {
	s := ScanConsole("OpenSBI v1.1\n[    0.000000] " + debianBanner + "init: eth0 up\n")
	if len(s) != 1 || !s[0].Linux || !strings.Contains(s[0].What, "Linux version 6.12.107") {
		t.Errorf("Linux console: %+v", s)
	}
	s = ScanConsole("*** Booting Zephyr OS build v3.5.0 ***\n")
	if len(s) != 1 || s[0].Linux || !strings.Contains(s[0].What, "Zephyr") {
		t.Errorf("Zephyr console: %+v", s)
	}
	if s := ScanConsole("Jiege-Go 0.1.0 (go1.26.8) riscv64, S-mode\nmachine: riscv-virtio,qemu\nLinux ABI for user programs\n"); len(s) != 0 {
		t.Errorf("our console: %+v", s)
	}
	if LinuxBanner("  "+debianBanner) == "" || LinuxBanner("Linux version unknown") != "" {
		t.Error("LinuxBanner")
	}
}

// repo makes a git repository in a fresh directory with one commit per
// entry of commits (file name -> line count), and returns its directory.
func repo(t *testing.T, commits ...map[string]int) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	for i, c := range commits {
		for name, lines := range c {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(strings.Repeat("line\n", lines)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git("add", "-A")
		git("commit", "-q", "-m", "commit "+string(rune('a'+i)))
	}
	return dir
}

func TestGitHistory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test")
	}
	ctx := context.Background()

	// A kernel imported whole, then touched up.
	dir := repo(t, map[string]int{"kernel/main.c": 1800, "kernel/vm.c": 900, "Makefile": 30},
		map[string]int{"kernel/net.c": 200})
	h, err := GitHistory(ctx, dir)
	if err != nil || h == nil {
		t.Fatalf("GitHistory: %v, %v", h, err)
	}
	if h.Commits != 2 || h.FirstFiles != 3 || h.FirstLines != 2730 || h.HeadFiles != 4 || h.HeadLines != 2930 || !h.Suspicious() {
		t.Errorf("imported history: %+v suspicious %v", h, h.Suspicious())
	}
	if s := h.String(); !strings.Contains(s, "2 commits") || !strings.Contains(s, "2730 of HEAD's 2930 lines (93%)") || !strings.Contains(s, "3 of 4 files") {
		t.Errorf("String: %s", s)
	}

	if h, err := GitHistory(ctx, filepath.Join(dir, "kernel")); h != nil || err != nil {
		t.Errorf("inside a repository: %+v, %v", h, err)
	}

	// Grown commit by commit.
	dir = repo(t, map[string]int{"Makefile": 20, "main.go": 40},
		map[string]int{"mm.go": 700}, map[string]int{"net.go": 900})
	if h, err := GitHistory(ctx, dir); err != nil || h == nil || h.Commits != 3 || h.FirstLines != 60 || h.HeadLines != 1660 || h.Suspicious() {
		t.Errorf("grown history: %+v, %v", h, err)
	}

	// A small project says nothing, however it was committed.
	dir = repo(t, map[string]int{"Makefile": 20, "main.go": 400})
	if h, err := GitHistory(ctx, dir); err != nil || h == nil || h.Suspicious() {
		t.Errorf("small project: %+v, %v", h, err)
	}

	// Not the top of a repository: no history.
	if h, err := GitHistory(ctx, t.TempDir()); h != nil || err != nil {
		t.Errorf("plain directory: %+v, %v", h, err)
	}
}
