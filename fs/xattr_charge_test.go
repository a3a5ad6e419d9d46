package fs

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// An attribute charges the kernel-wide budget until it is replaced,
// removed, or its file is gone; past the budget, setxattr is ENOSPC.
func TestXattrsCharged(t *testing.T) {
	tree := NewTree(NewDir(0o755))
	root := &Cred{}
	f := &Node{Mode: 0o644}
	if err := tree.Create(root, "/f", f); err != nil {
		t.Fatal(err)
	}
	before := mm.Charged.Total()
	if err := SetXattr(f, root, "user.a", make([]byte, 1000), 0); err != nil {
		t.Fatal(err)
	}
	one := mm.Charged.Total() - before
	if one < 1000 {
		t.Fatalf("an attribute of 1000 bytes charged %d", one)
	}
	if err := SetXattr(f, root, "user.a", make([]byte, 10), 0); err != nil || mm.Charged.Total()-before >= one {
		t.Fatalf("replaced by a smaller value: %v, charged %d", err, mm.Charged.Total()-before)
	}
	if err := RemoveXattr(f, root, "user.a"); err != nil || mm.Charged.Total() != before {
		t.Fatalf("removed: %v, charged %d", err, mm.Charged.Total()-before)
	}
	SetXattr(f, root, "user.b", make([]byte, 100), 0)
	if err := tree.Remove(root, "/f", false); err != nil || mm.Charged.Total() != before {
		t.Fatalf("file gone: %v, charged %d", err, mm.Charged.Total()-before)
	}
	limit := mm.Charged.Limit()
	mm.Charged.SetLimit(mm.Charged.Total() + 500)
	defer mm.Charged.SetLimit(limit)
	g := &Node{Mode: 0o644}
	tree.Create(root, "/g", g)
	if err := SetXattr(g, root, "user.big", make([]byte, 1000), 0); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("past the budget: %v", err)
	}
}
