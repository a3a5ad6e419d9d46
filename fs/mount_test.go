package fs

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestTmpfsMount(t *testing.T) {
	tree := NewTree(NewDir(0o755))
	user := &Cred{UID: 1000, GID: 1000}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tree.Mkdir(nil, "/mnt", 0o755))
	must(tree.Create(nil, "/mnt/under", &Node{Mode: 0o644}))
	if err := tree.Mount(user, "x", "/mnt", "tmpfs", 0, ""); err != unix.EPERM {
		t.Errorf("mount by a user: %v, want EPERM", err)
	}
	if err := tree.Mount(nil, "x", "/mnt", "tmpfs", 0, "size=8k,bogus"); err != unix.EINVAL {
		t.Errorf("mount with an unknown option: %v, want EINVAL", err)
	}
	must(tree.Mount(nil, "x", "/mnt", "tmpfs", unix.MS_NODEV, "size=12k,mode=700"))
	if _, err := tree.Lookup(nil, "/mnt/under", false); err != unix.ENOENT {
		t.Errorf("the covered file: %v, want ENOENT", err)
	}
	must(tree.Create(nil, "/mnt/f", &Node{Mode: 0o644}))
	f, err := tree.Lookup(nil, "/mnt/f", false)
	must(err)
	nf := tree.OpenNode(f, "/mnt/f")
	// A growing file's room ahead stops at the size: every byte of it
	// can be written.
	for _, n := range []int{5000, 9000, 12288} {
		if _, err := nf.WriteAt(make([]byte, n), 0); err != nil {
			t.Fatalf("writing %d bytes: %v", n, err)
		}
	}
	if _, err := nf.WriteAt([]byte{1}, 12288); err != unix.ENOSPC {
		t.Errorf("writing past size=12k: %v, want ENOSPC", err)
	}
	if size, used, ok := tree.TmpfsUsage(f.Dev); !ok || size != 12288 || used != 12288 {
		t.Errorf("usage %d of %d (%v)", used, size, ok)
	}
	if err := tree.Link(nil, "/mnt/f", "/g", false); err != unix.EXDEV {
		t.Errorf("link out of the mount: %v, want EXDEV", err)
	}
	if err := tree.Rename(nil, "/mnt/f", "/g", false); err != unix.EXDEV {
		t.Errorf("rename out of the mount: %v, want EXDEV", err)
	}
	if err := tree.Remove(nil, "/mnt", true); err != unix.EBUSY {
		t.Errorf("rmdir of the mount point: %v, want EBUSY", err)
	}
	ms := tree.Mounts(nil)
	if len(ms) != 2 || ms[1].Target != "/mnt" || ms[1].MountOptions() != "rw,nodev,relatime" || ms[1].Options != "size=12k,mode=700,inode64" {
		t.Errorf("mount table %+v", ms)
	}
	if err := tree.Umount(nil, "/mnt", 0, func(*Mount) bool { return true }); err != unix.EBUSY {
		t.Errorf("umount while busy: %v, want EBUSY", err)
	}
	must(tree.Umount(nil, "/mnt", 0, nil))
	if _, err := tree.Lookup(nil, "/mnt/under", false); err != nil {
		t.Errorf("the covered file after umount: %v", err)
	}
	if _, _, ok := tree.TmpfsUsage(f.Dev); ok {
		t.Error("the mount's usage outlived it")
	}
	if err := tree.Umount(nil, "/mnt", 0, nil); err != unix.EINVAL {
		t.Errorf("umount of no mount: %v, want EINVAL", err)
	}
}

func TestMountNamespaces(t *testing.T) {
	tree := NewTree(NewDir(0o755))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tree.Mkdir(nil, "/mnt", 0o755))
	must(tree.Mkdir(nil, "/mnt/sub", 0o755))
	must(tree.Mkdir(nil, "/other", 0o755))
	must(tree.Mount(nil, "shared", "/mnt", "tmpfs", 0, ""))
	must(tree.Mkdir(nil, "/mnt/in", 0o755))
	a := &Cred{} // the initial namespace's root user
	b := &Cred{Mounts: tree.CopyMounts(nil)}
	if _, err := tree.Lookup(b, "/mnt/in", false); err != nil {
		t.Fatalf("the copy's view of a mount made before it: %v", err)
	}

	// A mount in b is not seen in a, nor its files.
	must(tree.Mount(b, "b", "/other", "tmpfs", 0, "size=8k"))
	must(tree.Create(b, "/other/f", &Node{Mode: 0o644}))
	if _, err := tree.Lookup(a, "/other/f", false); err != unix.ENOENT {
		t.Errorf("b's file from a: %v, want ENOENT", err)
	}
	if len(tree.Mounts(nil)) != 2 || len(tree.Mounts(b.Mounts)) != 3 {
		t.Errorf("mount tables: a %d, b %d; want 2 and 3", len(tree.Mounts(nil)), len(tree.Mounts(b.Mounts)))
	}

	// rmdir and rename of a mount point are EBUSY only where it is one.
	if err := tree.Remove(b, "/other", true); err != unix.EBUSY {
		t.Errorf("rmdir of b's mount point in b: %v, want EBUSY", err)
	}
	if err := tree.Rename(b, "/other", "/moved", false); err != unix.EBUSY {
		t.Errorf("rename of b's mount point in b: %v, want EBUSY", err)
	}
	must(tree.Rename(a, "/other", "/moved", false))
	must(tree.Rename(a, "/moved", "/other", false))
	if _, err := tree.Lookup(b, "/other/f", false); err != unix.ENOENT {
		t.Errorf("b's mount after a moved its mount point: %v, want it gone (ENOENT)", err)
	}
	if len(tree.Mounts(b.Mounts)) != 2 {
		t.Errorf("b's table after a moved its mount point: %+v", tree.Mounts(b.Mounts))
	}

	// Stacked mounts in a; b still sees the first file system.
	must(tree.Mount(a, "top", "/mnt", "tmpfs", 0, ""))
	if _, err := tree.Lookup(a, "/mnt/in", false); err != unix.ENOENT {
		t.Errorf("a's stacked mount shows what it covers: %v", err)
	}
	if _, err := tree.Lookup(b, "/mnt/in", false); err != nil {
		t.Errorf("b's view under a's stacked mount: %v", err)
	}
	must(tree.Umount(a, "/mnt", 0, nil))
	if _, err := tree.Lookup(a, "/mnt/in", false); err != nil {
		t.Errorf("a's first mount after the top one went: %v", err)
	}

	// umount in b leaves a's copy; b sees what the mount covered.
	must(tree.Umount(b, "/mnt", 0, nil))
	if _, err := tree.Lookup(b, "/mnt/sub", false); err != nil {
		t.Errorf("b's covered directory: %v", err)
	}
	if _, err := tree.Lookup(a, "/mnt/in", false); err != nil {
		t.Errorf("a's mount after b unmounted its copy: %v", err)
	}

	// b's namespace goes with its last process: its tmpfs and the files
	// in it go, the charges given back.
	must(tree.Mount(b, "b", "/other", "tmpfs", 0, ""))
	must(tree.Create(b, "/other/g", &Node{Mode: 0o644}))
	g, err := tree.Lookup(b, "/other/g", false)
	must(err)
	open := tree.OpenNode(g, "/other/g")
	if _, err := open.WriteAt(make([]byte, 8192), 0); err != nil {
		t.Fatal(err)
	}
	before := tree.data.used.Load()
	tree.ReleaseMounts(b.Mounts)
	if _, _, ok := tree.TmpfsUsage(g.Dev); ok {
		t.Error("b's tmpfs outlived its namespace")
	}
	if used := tree.data.used.Load(); used != before {
		t.Errorf("file data %d while the file is open, want %d", used, before)
	}
	must(open.Close())
	if used := tree.data.used.Load(); used != before-8192 {
		t.Errorf("file data %d after its last close, want %d", used, before-8192)
	}
	if _, err := tree.Lookup(a, "/other/g", false); err != unix.ENOENT {
		t.Errorf("b's file from a after b went: %v, want ENOENT", err)
	}
}

func TestPivotRoot(t *testing.T) {
	tree := NewTree(NewDir(0o755))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tree.Mkdir(nil, "/jail", 0o755))
	ns := tree.CopyMounts(nil)
	c := &Cred{Mounts: ns}
	must(tree.Mount(c, "old", "/jail", "tmpfs", 0, ""))
	must(tree.Mkdir(c, "/jail/new", 0o755))
	must(tree.Mkdir(c, "/jail/keep", 0o755))
	jailed := &Cred{Mounts: ns, Resolve: &Resolve{Root: "/jail"}}
	if _, err := tree.PivotRoot(jailed, "/jail/new", "/jail/new"); err != unix.EBUSY {
		t.Errorf("new root on the root's mount: %v, want EBUSY", err)
	}
	must(tree.Mount(c, "new", "/jail/new", "tmpfs", 0, ""))
	must(tree.Mkdir(c, "/jail/new/old", 0o755))
	if _, err := tree.PivotRoot(jailed, "/jail/new", "/jail/keep"); err != unix.EBUSY {
		t.Errorf("put_old on the root's mount: %v, want EBUSY", err)
	}
	if _, err := tree.PivotRoot(c, "/jail/new", "/jail/new/old"); err != unix.EINVAL {
		t.Errorf("from the initramfs root: %v, want EINVAL", err)
	}
	rebase, err := tree.PivotRoot(jailed, "/jail/new", "/jail/new/old")
	must(err)
	for from, to := range map[string]string{"/jail": "/jail", "/jail/keep": "/jail/old/keep", "/jail/new/x": "/jail/x", "/etc": "/etc"} {
		if got := rebase(from); got != to {
			t.Errorf("rebase(%q) = %q, want %q", from, got, to)
		}
	}
	if _, err := tree.Lookup(c, "/jail/old/keep", false); err != nil {
		t.Errorf("the old root under put_old: %v", err)
	}
	if _, err := tree.Lookup(c, "/jail/old/new/old", false); err != unix.ENOENT {
		t.Errorf("the new root's old mount point shows: %v", err)
	}
	ms := tree.Mounts(ns)
	if len(ms) != 3 || ms[1].Source != "new" || ms[1].Target != "/jail" || ms[2].Source != "old" || ms[2].Target != "/jail/old" || ms[2].ParentID != ms[1].ID {
		t.Errorf("mount table after pivot_root: %+v", ms)
	}
	if len(tree.Mounts(nil)) != 1 {
		t.Errorf("the initial namespace changed: %+v", tree.Mounts(nil))
	}
}
