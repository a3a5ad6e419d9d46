package fs

import (
	"math"
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

// TestHugeRanges allocates and punches ranges of up to 2^63 bytes in a
// sparse file: ENOSPC at once for the allocation, and a hole that frees
// the pages it covers, each going through the pages held, not the range
// (fallocate(KEEP_SIZE, 4095, 1.8e17) on a memfd counted its pages one by
// one under the file's lock, which SIGKILL could not end; found by the
// resource fuzzer).
func TestHugeRanges(t *testing.T) {
	tree := NewTree(NewDir(0o755))
	tree.SetSizeLimit(64 * pageSize)
	n, _, err := tree.Open(nil, "/f", OpenFlags{Create: true, Perm: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	f := tree.OpenNode(n, "/f")
	if _, err := f.WriteAt([]byte("x"), 1<<40); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{4095, 176949815885074172}, {1, 245132422179962583}, {0, math.MaxInt64}, {1 << 40, math.MaxInt64 - 1<<40}} {
		if err := f.Allocate(FallocKeepSize, r[0], r[1]); err != unix.ENOSPC {
			t.Fatalf("allocating %d bytes at %d: %v, want ENOSPC", r[1], r[0], err)
		}
	}
	if used, _ := tree.Usage(); used != pageSize {
		t.Fatalf("failed allocations left %d bytes charged, want one page", used)
	}
	if err := f.Truncate(math.MaxInt64 - pageSize); err != nil {
		t.Fatal(err)
	}
	if err := f.Allocate(FallocPunchHole|FallocKeepSize, 1, math.MaxInt64-2); err != nil {
		t.Fatal(err)
	}
	if used, _ := tree.Usage(); used != 0 {
		t.Fatalf("a hole over the whole file left %d bytes charged", used)
	}
}
