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
	ms := tree.Mounts()
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
