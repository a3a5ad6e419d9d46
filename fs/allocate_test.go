package fs

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestAllocateChargesAndPunchReleases checks fallocate's pages against the
// tree's limit: allocation is all or nothing, a punched hole gives its
// whole pages back and zeroes the partial ones.
func TestAllocateChargesAndPunchReleases(t *testing.T) {
	tree := NewTree(NewDir(0o755))
	tree.SetSizeLimit(8 * pageSize)
	n, _, err := tree.Open(nil, "/f", OpenFlags{Create: true, Perm: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	f := tree.OpenNode(n, "/f")
	if err := f.Allocate(0, 10, 3*pageSize); err != nil {
		t.Fatal(err)
	}
	if used, _ := tree.Usage(); used != 4*pageSize || f.Stat().Size != 3*pageSize+10 {
		t.Fatalf("allocated 4 pages: %d bytes charged, size %d", used, f.Stat().Size)
	}
	if err := f.Allocate(FallocKeepSize, 0, 9*pageSize); err != unix.ENOSPC {
		t.Fatalf("allocation past the limit: %v, want ENOSPC", err)
	}
	if used, _ := tree.Usage(); used != 4*pageSize {
		t.Fatalf("a failed allocation left %d bytes charged", used)
	}
	data := make([]byte, 3*pageSize+10)
	for i := range data {
		data[i] = 'x'
	}
	f.WriteAt(data, 0)
	if err := f.Allocate(FallocPunchHole|FallocKeepSize, 100, 2*pageSize); err != nil {
		t.Fatal(err)
	}
	if used, _ := tree.Usage(); used != 3*pageSize {
		t.Fatalf("a hole over one whole page: %d bytes charged, want 3 pages", used)
	}
	got := make([]byte, len(data))
	f.ReadAt(got, 0)
	if got[99] != 'x' || got[100] != 0 || got[100+2*pageSize-1] != 0 || got[100+2*pageSize] != 'x' {
		t.Fatalf("hole edges: %q %q %q %q", got[99], got[100], got[100+2*pageSize-1], got[100+2*pageSize])
	}
	if f.Stat().Size != 3*pageSize+10 {
		t.Fatalf("a punch changed the size to %d", f.Stat().Size)
	}
	if err := f.Allocate(0x10, 0, pageSize); err != unix.EOPNOTSUPP {
		t.Fatalf("zero range on tmpfs: %v, want EOPNOTSUPP", err)
	}
}

// TestPunchPastEnd punches a hole that starts past the end of a file whose
// last page is partly written: nothing changes (a hole from 8 bytes past
// the end of a 4097-byte file sliced a page backwards, found by the
// resource fuzzer).
func TestPunchPastEnd(t *testing.T) {
	tree := NewTree(NewDir(0o755))
	n, _, err := tree.Open(nil, "/f", OpenFlags{Create: true, Perm: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	f := tree.OpenNode(n, "/f")
	data := make([]byte, pageSize+1)
	for i := range data {
		data[i] = 'x'
	}
	f.WriteAt(data, 0)
	if err := f.Allocate(FallocPunchHole|FallocKeepSize, pageSize+8, 2); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(data))
	f.ReadAt(got, 0)
	if got[pageSize] != 'x' || f.Stat().Size != pageSize+1 {
		t.Fatalf("a hole past the end changed the file: last byte %q, size %d", got[pageSize], f.Stat().Size)
	}
}
