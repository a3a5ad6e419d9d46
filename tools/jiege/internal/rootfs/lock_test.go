package rootfs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sumA = "1111111111111111111111111111111111111111111111111111111111111111"

func TestLockRoundTrip(t *testing.T) {
	l := &Lock{Entries: []LockEntry{
		{Set: setLinux, Package: "busybox-static", Version: "1:1.37.0-6", Arch: "riscv64", Size: 9, SHA256: sumA},
		{Set: setOurs, Package: "nginx", Version: "1.26.3-3+deb13u7", Arch: "riscv64", Size: 10, SHA256: sumA},
		{Set: setOurs, Package: "libc6", Version: "2.41-12", Arch: "riscv64", Size: 11, SHA256: sumA},
	}}
	text := l.Format()
	back, err := ParseLock(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Format(), text) {
		t.Errorf("round trip changed the lock:\n%s\n%s", text, back.Format())
	}
	if back.Entries[0].Package != "libc6" || back.Entries[2].Set != setLinux {
		t.Errorf("not sorted ours-first by package: %+v", back.Entries)
	}
	if n := len(back.For(Ours)); n != 2 {
		t.Errorf("For(Ours) = %d entries, want 2", n)
	}
	if n := len(back.For(Linux)); n != 3 {
		t.Errorf("For(Linux) = %d entries, want 3", n)
	}
	if got := back.Entries[2].Filename(); got != "busybox-static_1%3a1.37.0-6_riscv64.deb" {
		t.Errorf("Filename = %q", got)
	}
	for _, bad := range []string{"ours nginx 1 riscv64 10\n", "other nginx 1 riscv64 10 " + sumA + "\n", "ours nginx 1 riscv64 x " + sumA + "\n", "ours nginx 1 riscv64 1 abc\n"} {
		if _, err := ParseLock(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseLock(%q): want an error", bad)
		}
	}
}

func TestVerifyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.deb")
	os.WriteFile(p, []byte("hello\n"), 0o644)
	e := LockEntry{Package: "x", Version: "1", Size: 6, SHA256: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"}
	if err := e.VerifyFile(p); err != nil {
		t.Fatalf("matching file: %v", err)
	}
	os.WriteFile(p, []byte("hellO\n"), 0o644)
	if err := e.VerifyFile(p); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("changed file: want a mismatch error, got %v", err)
	}
}

func TestParseAptOutput(t *testing.T) {
	e, err := parsePrintURI("'http://mirror.invalid/debian/pool/main/z/zlib/zlib1g_1%3a1.3.dfsg-1+b1_riscv64.deb' zlib1g_1%3a1.3.dfsg-1+b1_riscv64.deb 85664 MD5Sum:19f464db8fc065dfbca92198ee28f058", setOurs)
	if err != nil || e.Package != "zlib1g" || e.Version != "1:1.3.dfsg-1+b1" || e.Arch != "riscv64" || e.Size != 85664 {
		t.Fatalf("parsePrintURI = %+v, %v", e, err)
	}
	if _, err := parsePrintURI("garbage", setOurs); err == nil {
		t.Error("garbage line: want an error")
	}
	show := "Package: nginx\nVersion: 1.26.3-3\nArchitecture: riscv64\nDescription: small\n powerful\nSHA256: " + sumA + "\n\nPackage: libc6\nVersion: 2.41\nSHA256: " + strings.Repeat("2", 64) + "\n"
	sums, err := parseShow([]byte(show))
	if err != nil || sums["nginx=1.26.3-3"] != sumA || sums["libc6=2.41"] != strings.Repeat("2", 64) {
		t.Fatalf("parseShow = %v, %v", sums, err)
	}
}

func TestLockedUnavailable(t *testing.T) {
	es := []LockEntry{{Package: "nginx", Version: "1.26.3-3+deb13u7"}, {Package: "libc6", Version: "2.41-12"}}
	if err := lockedUnavailable(es, map[string][]string{"nginx": {"1.26.3-3+deb13u8", "1.26.3-3+deb13u7"}, "libc6": {"2.41-12"}}); err != nil {
		t.Errorf("locked versions still offered: %v", err)
	}
	err := lockedUnavailable(es, map[string][]string{"nginx": {"1.26.3-3+deb13u8"}, "libc6": {"2.41-12"}})
	if err == nil {
		t.Fatal("locked version gone: want an error")
	}
	for _, want := range []string{"package nginx", "1.26.3-3+deb13u7", "1.26.3-3+deb13u8", "--update-lock"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "libc6") {
		t.Errorf("message names a package that is fine: %q", err)
	}
}

func TestUpstreamVersion(t *testing.T) {
	for in, want := range map[string]string{"1.26.3-3+deb13u7": "1.26.3", "1:1.37.0-6+b9": "1.37.0", "5.3": "5.3"} {
		if got := upstreamVersion(in); got != want {
			t.Errorf("upstreamVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
