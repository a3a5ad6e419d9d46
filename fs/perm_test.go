package fs

import (
	"io/fs"
	"testing"

	"golang.org/x/sys/unix"
)

func TestAccess(t *testing.T) {
	file := &Node{Mode: 0o640, UID: 1000, GID: 2000}
	script := &Node{Mode: 0o744, UID: 0, GID: 0}
	dir := NewDir(0o700)
	owner := &Cred{UID: 1000, GID: 1000}
	member := &Cred{UID: 1001, GID: 1001, Groups: []uint32{2000}}
	other := &Cred{UID: 1002, GID: 1002}
	root := &Cred{}
	for _, c := range []struct {
		name string
		n    *Node
		c    *Cred
		mask int
		want error
	}{
		{"owner reads and writes", file, owner, MayRead | MayWrite, nil},
		{"owner cannot execute", file, owner, MayExec, unix.EACCES},
		{"group member reads", file, member, MayRead, nil},
		{"group member cannot write", file, member, MayWrite, unix.EACCES},
		{"others nothing", file, other, MayRead, unix.EACCES},
		{"owner bits win over group bits", &Node{Mode: 0o070, UID: 1000, GID: 1000}, owner, MayRead, unix.EACCES},
		{"root reads anything", file, root, MayRead | MayWrite, nil},
		{"root executes with some x bit", script, root, MayExec, nil},
		{"root executes nothing without one", file, root, MayExec, unix.EACCES},
		{"root searches any directory", dir, root, MayExec, nil},
		{"the kernel is never refused", file, nil, MayRead | MayWrite, nil},
		{"others cannot search a 0700 directory", dir, other, MayExec, unix.EACCES},
	} {
		if got := Access(c.n, c.c, c.mask); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTreePermissions(t *testing.T) {
	tr := NewTree(NewDir(0o755))
	user := &Cred{UID: 1000, GID: 1000}
	tr.Mkdir(nil, "/root", 0o755)
	tr.Mkdir(nil, "/private", 0o700)
	tr.Create(nil, "/private/f", &Node{Mode: 0o644})
	tr.Mkdir(nil, "/tmp", 0o777|fs.ModeSticky)
	tr.Create(nil, "/tmp/rootfile", &Node{Mode: 0o666})
	tr.Mkdir(nil, "/home", 0o755)
	home, _ := tr.Lookup(nil, "/home", false)
	home.UID, home.GID = 1000, 1000
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"create in root's directory", tr.Create(user, "/root/x", &Node{Mode: 0o644}), unix.EACCES},
		{"mkdir in root's directory", tr.Mkdir(user, "/root/d", 0o755), unix.EACCES},
		{"lookup through a 0700 directory", func() error { _, err := tr.Lookup(user, "/private/f", true); return err }(), unix.EACCES},
		{"unlink another's file in a sticky directory", tr.Remove(user, "/tmp/rootfile", false), unix.EPERM},
		{"rename another's file in a sticky directory", tr.Rename(user, "/tmp/rootfile", "/tmp/moved", false), unix.EPERM},
		{"create in one's own directory", tr.Create(user, "/home/mine", &Node{Mode: 0o600}), nil},
		{"move one's file into root's directory", tr.Rename(user, "/home/mine", "/root/mine", false), unix.EACCES},
		{"open root's file for writing", func() error { _, _, err := tr.Open(user, "/tmp/rootfile", OpenFlags{Want: MayWrite}); return err }(), nil},
		{"chmod another's file", func() error { n, _ := tr.Lookup(nil, "/tmp/rootfile", false); return Chmod(n, user, 0o777) }(), unix.EPERM},
		{"chown another's file", func() error { n, _ := tr.Lookup(nil, "/tmp/rootfile", false); return Chown(n, user, 1000, NoID) }(), unix.EPERM},
		{"unlink in one's own directory", tr.Remove(user, "/home/mine", false), nil},
	} {
		if c.err != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}

	tr.Mkdir(nil, "/shared", 0o777|fs.ModeSetgid)
	shared, _ := tr.Lookup(nil, "/shared", false)
	shared.GID = 3000
	if err := tr.Mkdir(user, "/shared/d", 0o755); err != nil {
		t.Fatal(err)
	}
	d, _ := tr.Lookup(nil, "/shared/d", false)
	if d.UID != 1000 || d.GID != 3000 || d.Mode&fs.ModeSetgid == 0 {
		t.Errorf("directory in a set-group-ID directory: uid %d gid %d mode %v, want 1000, 3000, setgid", d.UID, d.GID, d.Mode)
	}
	n, _, err := tr.Open(user, "/shared/f", OpenFlags{Create: true, Perm: 0o644 | fs.ModeSetgid})
	if err != nil {
		t.Fatal(err)
	}
	if n.UID != 1000 || n.GID != 3000 || n.Mode&fs.ModeSetgid != 0 {
		t.Errorf("file in a set-group-ID directory: uid %d gid %d mode %v, want 1000, 3000, no setgid outside the group", n.UID, n.GID, n.Mode)
	}
}

func TestModeConversion(t *testing.T) {
	for _, m := range []uint32{0, 0o644, 0o4755, 0o2750, 0o1777, 0o7777} {
		if got := UnixPerm(ModeFromUnix(m)); got != m {
			t.Errorf("%o comes back as %o", m, got)
		}
	}
	if m := ModeFromUnix(0o1777); m&fs.ModeSticky == 0 || m.Perm() != 0o777 {
		t.Errorf("01777 is %v", m)
	}
}
