package fs

import (
	"testing"

	"golang.org/x/sys/unix"
)

// landlockTree is /a/sub/f, /a/x, /b/g and /top, with a domain whose
// first layer handles every right and grants /a reading, writing, making
// and removing files and REFER, /b reading, making files and REFER; a
// second layer, when stacked, handles writing and grants it under /a/sub
// only (and so, as every layer, denies REFER).
func landlockTree(t *testing.T, stacked bool) (*Tree, *Cred) {
	t.Helper()
	tr := NewTree(NewDir(0o755))
	for _, d := range []string{"/a", "/a/sub", "/b"} {
		if err := tr.Mkdir(nil, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"/a/sub/f", "/a/x", "/b/g", "/top"} {
		if err := tr.Create(nil, f, &Node{Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	node := func(p string) *Node {
		n, err := tr.Lookup(nil, p, false)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	r1, err := NewLandlockRuleset(LandlockFSAll, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(r1.AddPathRule(node("/a"), LandlockReadFile|LandlockReadDir|LandlockWriteFile|LandlockMakeReg|LandlockRemoveFile|LandlockRefer))
	must(r1.AddPathRule(node("/b"), LandlockReadFile|LandlockReadDir|LandlockMakeReg|LandlockRefer))
	d, err := r1.Restrict(nil)
	must(err)
	if !stacked {
		return tr, &Cred{Landlock: d}
	}
	r2, err := NewLandlockRuleset(LandlockWriteFile, 0, 0)
	must(err)
	must(r2.AddPathRule(node("/a/sub"), LandlockWriteFile))
	d, err = r2.Restrict(d)
	must(err)
	return tr, &Cred{Landlock: d}
}

func TestLandlockOpen(t *testing.T) {
	tr, c := landlockTree(t, true)
	for _, tc := range []struct {
		path string
		want int
		err  error
	}{
		{"/a/sub/f", MayRead, nil},
		{"/a/sub/f", MayWrite, nil},     // both layers grant it beneath /a/sub
		{"/a/x", MayWrite, unix.EACCES}, // the second layer does not
		{"/b/g", MayRead, nil},
		{"/b/g", MayWrite, unix.EACCES},
		{"/top", MayRead, unix.EACCES}, // no rule above it
		{"/top", 0, nil},               // O_PATH asks for nothing
		{"/a", MayRead, nil},           // READ_DIR
		{"/", MayRead, unix.EACCES},
	} {
		if _, _, err := tr.Open(c, tc.path, OpenFlags{Want: tc.want, Follow: true}); err != tc.err {
			t.Errorf("open %s (%d): %v, want %v", tc.path, tc.want, err, tc.err)
		}
	}
	if _, _, err := tr.Open(nil, "/top", OpenFlags{Want: MayWrite}); err != nil {
		t.Errorf("the kernel is refused: %v", err)
	}
}

func TestLandlockCreateRemoveRefer(t *testing.T) {
	tr, c := landlockTree(t, false)
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"make a file in /a", tr.Create(c, "/a/new", &Node{Mode: 0o644}), nil},
		{"make a directory in /a", tr.Mkdir(c, "/a/d", 0o755), unix.EACCES},
		{"make a file at the top", tr.Create(c, "/new", &Node{Mode: 0o644}), unix.EACCES},
		{"remove a file in /b", tr.Remove(c, "/b/g", false), unix.EACCES},
		{"rename within /a", tr.Rename(c, "/a/new", "/a/new2", false), nil},
		{"move /a to /b: no more rights", tr.Rename(c, "/a/new2", "/b/new", false), nil},
		{"move /b to /a: no removing in /b", tr.Rename(c, "/b/new", "/a/new", false), unix.EACCES},
		{"link /b into /a: more rights", tr.Link(c, "/b/g", "/a/g", false), unix.EXDEV},
		{"link /a into /b", tr.Link(c, "/a/x", "/b/x", false), nil},
		{"remove a file in /a", tr.Remove(c, "/a/x", false), nil},
	} {
		if tc.err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	tr, c = landlockTree(t, true)
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"rename within /a", tr.Rename(c, "/a/x", "/a/x2", false), nil},
		{"a layer without REFER", tr.Rename(c, "/a/x2", "/b/x", false), unix.EXDEV},
	} {
		if tc.err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
}

func TestLandlockLayersAndScopes(t *testing.T) {
	r, err := NewLandlockRuleset(0, LandlockBindTCP, LandlockScopeSignal)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddPortRule(80, LandlockBindTCP); err != nil {
		t.Fatal(err)
	}
	if err := r.AddPortRule(1<<16, LandlockBindTCP); err != unix.EINVAL {
		t.Errorf("port 65536: %v", err)
	}
	if err := r.AddPortRule(80, LandlockConnectTCP); err != unix.EINVAL {
		t.Errorf("an unhandled right: %v", err)
	}
	var d *LandlockDomain
	for range LandlockMaxLayers {
		if d, err = r.Restrict(d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Restrict(d); err != unix.E2BIG {
		t.Errorf("layer %d: %v, want E2BIG", LandlockMaxLayers+1, err)
	}
	if !d.AllowsPort(80, LandlockBindTCP) || d.AllowsPort(81, LandlockBindTCP) || !d.AllowsPort(81, LandlockConnectTCP) {
		t.Error("port rules")
	}
	parent := d.parent
	switch {
	case !d.Scopes(nil, LandlockScopeSignal):
		t.Error("a domain reaches an unrestricted process")
	case d.Scopes(d, LandlockScopeSignal):
		t.Error("a domain does not reach itself")
	case parent.Scopes(d, LandlockScopeSignal):
		t.Error("a domain does not reach one nested in it")
	case !d.Scopes(parent, LandlockScopeSignal):
		t.Error("a nested domain reaches its parent")
	case d.Scopes(nil, LandlockScopeAbstractUnix):
		t.Error("an unscoped right is scoped")
	}
	var none *LandlockDomain
	if none.Scopes(d, LandlockScopeSignal) || !none.AllowsPort(81, LandlockBindTCP) {
		t.Error("no domain restricts")
	}
	if _, err := NewLandlockRuleset(0, 0, 0); err != unix.ENOMSG {
		t.Errorf("an empty ruleset: %v", err)
	}
	if err := r.AddPathRule(&Node{Mode: 0o644}, LandlockReadDir); err != unix.EINVAL {
		t.Errorf("a directory's right on a file: %v", err)
	}
}
