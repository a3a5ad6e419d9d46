package rootfs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPackageSet(t *testing.T) {
	a, err := PackageSet([]string{"dash", "busybox-static", " bash", "dash"})
	if err != nil {
		t.Fatal(err)
	}
	if a != "packages:bash,busybox-static,dash" {
		t.Errorf("PackageSet = %q, want sorted, trimmed and without duplicates", a)
	}
	for _, bad := range [][]string{nil, {""}, {"Bash"}, {"bash;rm"}, {"-o"}, {"a b"}} {
		if s, err := PackageSet(bad); err == nil {
			t.Errorf("PackageSet(%q) = %q, want an error", bad, s)
		}
	}
	if got := setPackages(a); strings.Join(got, " ") != "bash busybox-static dash" {
		t.Errorf("setPackages = %q", got)
	}
	if setPackages(setOurs) != nil {
		t.Error("ours is not a package set")
	}
}

func TestLockPackageSets(t *testing.T) {
	l := &Lock{Entries: []LockEntry{
		{Set: setLinux, Package: "busybox-static", Version: "1", Arch: "riscv64", Size: 1, SHA256: sumA},
		{Set: setOurs, Package: "nginx", Version: "1", Arch: "riscv64", Size: 1, SHA256: sumA},
	}}
	set := "packages:bash,dash"
	l.Replace(set, []LockEntry{
		{Package: "libc6", Version: "2", Arch: "riscv64", Size: 2, SHA256: sumA},
		{Package: "dash", Version: "3", Arch: "riscv64", Size: 3, SHA256: sumA},
	})
	text := l.Format()
	back, err := ParseLock(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	var order []string
	for _, e := range back.Entries {
		order = append(order, e.Set+" "+e.Package)
	}
	want := "ours nginx|linux busybox-static|packages:bash,dash dash|packages:bash,dash libc6"
	if got := strings.Join(order, "|"); got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if n := len(back.Set(set)); n != 2 {
		t.Errorf("Set(%s) = %d entries, want 2", set, n)
	}
	if n := len(back.For(Linux)); n != 2 {
		t.Errorf("a package set leaked into For(Linux): %d entries", n)
	}
	if s := back.packageSets(); len(s) != 1 || s[0] != set {
		t.Errorf("packageSets = %q", s)
	}
	back.Replace(set, []LockEntry{{Package: "dash", Version: "4", Arch: "riscv64", Size: 3, SHA256: sumA}})
	if es := back.Set(set); len(es) != 1 || es[0].Version != "4" || len(back.Entries) != 3 {
		t.Errorf("Replace kept old entries: %+v", back.Entries)
	}
	// A set name must be canonical: the same list is pinned once.
	for _, bad := range []string{"packages:dash,bash", "packages:", "packages:Dash", "packages:a,,b"} {
		if _, err := ParseLock(strings.NewReader(bad + " dash 1 riscv64 1 " + sumA + "\n")); err == nil {
			t.Errorf("ParseLock accepted set %q", bad)
		}
	}
}

// mawkPostinst and the others are the shapes of update-alternatives calls
// in Debian's maintainer scripts.
const altScript = `#!/bin/sh
set -e
if [ "$1" = configure ]; then
        update-alternatives --install /usr/bin/awk awk /usr/bin/mawk 5 \
          --slave /usr/share/man/man1/awk.1.gz awk.1.gz /usr/share/man/man1/mawk.1.gz \
          --slave /usr/bin/nawk nawk /usr/bin/mawk
fi
update-alternatives --install /usr/bin/awk awk /usr/bin/gawk 10
update-alternatives --install /bin/pager pager "/usr/bin/less" 77 || true
update-alternatives --install /usr/bin/x x /usr/bin/$pkg 50
update-alternatives --remove which /usr/bin/which.debianutils
`

func TestParseAlternatives(t *testing.T) {
	alts := parseAlternatives(altScript)
	if len(alts) != 3 {
		t.Fatalf("parsed %d alternatives, want 3 (the one with $pkg skipped): %+v", len(alts), alts)
	}
	a := alts[0]
	if a.name != "awk" || a.link != "/usr/bin/awk" || a.path != "/usr/bin/mawk" || a.priority != 5 || len(a.slaves) != 2 ||
		a.slaves[1] != (slaveLink{"/usr/bin/nawk", "/usr/bin/mawk"}) {
		t.Errorf("mawk: %+v", a)
	}
	if p := alts[2]; p.name != "pager" || p.path != "/usr/bin/less" || p.priority != 77 {
		t.Errorf("quoted path and trailing || : %+v", p)
	}
}

func TestLinkAlternatives(t *testing.T) {
	tree := t.TempDir()
	for _, d := range []string{"usr/bin", "usr/share/man/man1"} {
		os.MkdirAll(filepath.Join(tree, d), 0o755)
	}
	if err := usrMerge(tree); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"usr/bin/mawk", "usr/bin/less", "usr/share/man/man1/mawk.1.gz"} {
		os.WriteFile(filepath.Join(tree, f), []byte("x"), 0o755)
	}
	// gawk has the higher priority but is not in the tree.
	if err := linkAlternatives(tree, parseAlternatives(altScript)); err != nil {
		t.Fatal(err)
	}
	for link, want := range map[string]string{
		"usr/bin/awk":                  "mawk",
		"usr/bin/nawk":                 "mawk",
		"usr/share/man/man1/awk.1.gz":  "mawk.1.gz",
		"usr/bin/pager":                "less", // /bin/pager, after the usr-merge
		"usr/share/man/man1/mawk.1.gz": "",     // a regular file, left alone
	} {
		got, err := os.Readlink(filepath.Join(tree, link))
		if want == "" {
			if err == nil {
				t.Errorf("%s became a link", link)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s -> %q (%v), want %q", link, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(tree, "bin/awk")); err != nil {
		t.Errorf("/bin/awk does not resolve: %v", err)
	}
}

// TestConfigure checks what replaces the maintainer scripts on a tree
// without packages: base-passwd's users and groups, the directories, and
// /bin/sh linked to bash when no dash ships it.
func TestConfigure(t *testing.T) {
	tree := t.TempDir()
	files := map[string]string{
		"usr/share/base-passwd/passwd.master": "root:*:0:0:root:/root:/bin/bash\n",
		"usr/share/base-passwd/group.master":  "root:*:0:\n",
		"bin/bash":                            "bash",
	}
	for p, text := range files {
		os.MkdirAll(filepath.Join(tree, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(tree, p), []byte(text), 0o755)
	}
	b := &builder{o: Options{Flavor: Packages}}
	if err := b.configure(context.Background(), tree); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"etc/passwd": files["usr/share/base-passwd/passwd.master"], "etc/group": "root:*:0:\n", "bin/sh": "bash"} {
		if got, err := os.ReadFile(filepath.Join(tree, p)); err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q", p, got, err, want)
		}
	}
	if l, err := os.Readlink(filepath.Join(tree, "bin")); err != nil || l != "usr/bin" {
		t.Errorf("/bin -> %q (%v), want usr/bin", l, err)
	}
	if st, err := os.Stat(filepath.Join(tree, "tmp")); err != nil || st.Mode()&os.ModeSticky == 0 || st.Mode().Perm() != 0o777 {
		t.Errorf("/tmp: %v %v", st, err)
	}
}

func TestPackagesOptions(t *testing.T) {
	o := Options{Packages: []string{"dash"}}
	if err := o.defaults(); err != nil || o.Flavor != Packages {
		t.Errorf("packages imply the flavor: %v %q", err, o.Flavor)
	}
	for _, bad := range []Options{{Flavor: Packages}, {Flavor: Linux, Packages: []string{"dash"}}} {
		if err := bad.defaults(); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
	e := LockEntry{Set: "packages:dash", Package: "dash", Version: "1", Arch: "riscv64", SHA256: sumA}
	b1 := &builder{o: Options{Flavor: Packages}, set: "packages:dash", entries: []LockEntry{e}}
	b2 := &builder{o: Options{Flavor: Packages}, set: "packages:dash,bash", entries: []LockEntry{e}}
	if b1.cacheName() == b2.cacheName() || b1.key() == b2.key() {
		t.Error("two package sets share a cache directory")
	}
}

// TestBuildPackagesFromMirror builds the shells' root filesystem (pinned in
// rootfs.lock) and checks what configure made of Debian's real packages.
func TestBuildPackagesFromMirror(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var log bytes.Buffer
	img, err := Build(ctx, Options{Packages: []string{"busybox-static", "dash", "bash", "base-passwd"}, Log: &log})
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range img.Packages {
		have[e.Package] = true
	}
	for _, p := range []string{"busybox-static", "dash", "bash", "base-passwd", "libc6", "libtinfo6"} {
		if !have[p] {
			t.Errorf("closure lacks %s", p)
		}
	}
	for link, want := range map[string]string{"usr/bin/sh": "dash", "usr/bin/awk": "mawk", "bin": "usr/bin"} {
		if got, err := os.Readlink(filepath.Join(img.Dir, link)); err != nil || got != want {
			t.Errorf("%s -> %q (%v), want %q", link, got, err, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(img.Dir, "etc/passwd")); err != nil || !strings.HasPrefix(string(b), "root:") {
		t.Errorf("/etc/passwd: %q %v", b, err)
	}
	if st, err := os.Stat(img.CPIO); err != nil || st.Size() < 1<<20 {
		t.Errorf("archive %s: %v", img.CPIO, err)
	}
}
