package rootfs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseOneLine(t *testing.T) {
	text := `# a comment
deb-src http://src.invalid/debian bookworm main
deb http://security.invalid/debian-security bookworm-security main
deb [arch=amd64 signed-by=/k.gpg] http://third.invalid/apt cloud-sdk-bookworm main
deb [ arch=amd64 ] http://mirror.invalid/debian/ bookworm main contrib # trailing
`
	srcs := parseOneLine(text)
	if len(srcs) != 3 {
		t.Fatalf("got %d sources, want 3: %+v", len(srcs), srcs)
	}
	want := []bool{false, false, true}
	for i, s := range srcs {
		if s.isDebianMain() != want[i] {
			t.Errorf("source %d %+v: isDebianMain = %v, want %v", i, s, !want[i], want[i])
		}
	}
	if srcs[2].URI != "http://mirror.invalid/debian/" || srcs[2].Suites[0] != "bookworm" {
		t.Errorf("options not skipped: %+v", srcs[2])
	}
}

func TestParseDeb822(t *testing.T) {
	text := `Types: deb
# http://old.invalid/archive
URIs: http://security.invalid/debian-security
Suites: bookworm-security
Components: main

Types: deb-src deb
URIs: http://mirror.invalid/debian
 http://second.invalid/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
Enabled: no
URIs: http://disabled.invalid/debian
Suites: trixie
Components: main
`
	srcs := parseDeb822(text)
	if len(srcs) != 3 {
		t.Fatalf("got %d sources, want 3: %+v", len(srcs), srcs)
	}
	if srcs[0].isDebianMain() {
		t.Errorf("security archive taken as main: %+v", srcs[0])
	}
	if !srcs[1].isDebianMain() || srcs[1].URI != "http://mirror.invalid/debian" {
		t.Errorf("first main archive wrong: %+v", srcs[1])
	}
	if srcs[2].URI != "http://second.invalid/debian" {
		t.Errorf("continuation line lost: %+v", srcs[2])
	}
}

func TestHostMirror(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "sources.list.d")
	os.MkdirAll(d, 0o755)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a-thirdparty.list", "deb https://third.invalid/node nodistro main\n")
	write("b.list.disabled", "deb http://wrong.invalid/debian bookworm main\n")
	write("c-debian.sources", "Types: deb\nURIs: http://sec.invalid/debian-security\nSuites: bookworm-security\nComponents: main\n\nTypes: deb\nURIs: http://mirror.invalid/debian/\nSuites: bookworm\nComponents: main\n")
	got, err := HostMirror(dir)
	if err != nil || got != "http://mirror.invalid/debian" {
		t.Fatalf("HostMirror = %q, %v", got, err)
	}
	// sources.list is read first.
	os.WriteFile(filepath.Join(dir, "sources.list"), []byte("deb http://first.invalid/debian stable main\n"), 0o644)
	if got, _ := HostMirror(dir); got != "http://first.invalid/debian" {
		t.Errorf("sources.list not preferred: %q", got)
	}
	if _, err := HostMirror(t.TempDir()); err == nil {
		t.Error("no sources: want an error")
	}
}
