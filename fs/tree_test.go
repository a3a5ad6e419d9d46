package fs

import (
	"path"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCleanPath: CleanPath is path.Clean of the path made absolute.
func TestCleanPath(t *testing.T) {
	for _, p := range []string{"/", "//", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/..", "/.", "a/b", "", ".", "/a/b/c.d", "/a/.b/..c", "/a/b/..", "/a/b/.", "/a/b/", "/...", "/.a/b..", "/a/.../b", "/a/b//"} {
		if got, want := CleanPath(p), path.Clean("/"+p); got != want {
			t.Errorf("CleanPath(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestTreesShareNothing: two trees, as two kernels in one process have,
// keep their own mounts, file system types, devices, record locks and
// file data accounting.
func TestTreesShareNothing(t *testing.T) {
	a, b := NewTree(NewDir(0o755)), NewTree(NewDir(0o755))
	for _, tr := range []*Tree{a, b} {
		if err := tr.Mkdir(nil, "/mnt", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a.RegisterFilesystem("only-a", func(*Cred, string) (*Node, string, error) { return NewDir(0o755), "", nil })
	if err := b.Mount(nil, "x", "/mnt", "only-a", 0, ""); err != unix.ENODEV {
		t.Errorf("b mounts a file system type of a's: %v, want ENODEV", err)
	}
	if err := a.Mount(nil, "x", "/mnt", "tmpfs", 0, "size=8k"); err != nil {
		t.Fatal(err)
	}
	if len(a.Mounts(nil)) != 2 || len(b.Mounts(nil)) != 1 {
		t.Errorf("mount tables: a %d, b %d; want 2 and 1", len(a.Mounts(nil)), len(b.Mounts(nil)))
	}

	// The same tmpfs options give b a mount of its own: its size and use.
	if err := b.Mount(nil, "x", "/mnt", "tmpfs", 0, "size=8k"); err != nil {
		t.Fatal(err)
	}
	write := func(tr *Tree, p string, n int) error {
		node, _, err := tr.Open(nil, p, OpenFlags{Create: true, Perm: 0o644})
		if err != nil {
			return err
		}
		f := tr.OpenNode(node, p)
		defer f.Close()
		_, err = f.WriteAt(make([]byte, n), 0)
		return err
	}
	if err := write(a, "/mnt/f", 8192); err != nil {
		t.Fatal(err)
	}
	if err := write(b, "/mnt/f", 8192); err != nil {
		t.Errorf("b's tmpfs is full of a's file: %v", err)
	}
	if used, _ := a.Usage(); used != 8192 {
		t.Errorf("a holds %d bytes, want 8192", used)
	}
	b.SetSizeLimit(12288) // 8 KiB in b's tmpfs: 4 KiB more fits
	if err := write(b, "/g", 8192); err != unix.ENOSPC {
		t.Errorf("b past its limit: %v, want ENOSPC", err)
	}
	if err := write(a, "/g", 8192); err != nil {
		t.Errorf("a under b's limit: %v", err)
	}

	a.RegisterDevice(1, 3, func() (File, error) { return nullDev{}, nil })
	for _, tr := range []*Tree{a, b} {
		if err := tr.Create(nil, "/null", NewDevice(0o666, Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
	}
	an, _ := a.Lookup(nil, "/null", true)
	bn, _ := b.Lookup(nil, "/null", true)
	if _, err := a.OpenDevice(an, "/null"); err != nil {
		t.Errorf("a's device: %v", err)
	}
	if _, err := b.OpenDevice(bn, "/null"); err != unix.ENXIO {
		t.Errorf("b opens a's device: %v, want ENXIO", err)
	}

	// One node, locked in a's table, is free in b's.
	n, _ := a.Lookup(nil, "/g", true)
	if err := a.SetLock(n, Lock{Owner: 1, Write: true}, false, false); err != nil {
		t.Fatal(err)
	}
	if _, busy := a.TestLock(n, Lock{Owner: 2, Write: true}); !busy {
		t.Error("a's lock is not seen in a")
	}
	if _, busy := b.TestLock(n, Lock{Owner: 2, Write: true}); busy {
		t.Error("a's lock is seen in b")
	}
	b.ReleaseOwner(1)
	if _, busy := a.TestLock(n, Lock{Owner: 2, Write: true}); !busy {
		t.Error("b released a's lock")
	}
}
