package mm_test

import (
	"errors"
	"testing"

	. "github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

// hugeSize is the test pool's page size: four frames keep the test's
// memory small; the code does not depend on 2 MiB.
const hugeSize = 4 * PageSize

func checkCounts(t *testing.T, p *HugePool, total, free, reserved int) {
	t.Helper()
	if gt, gf, gr := p.Counts(); gt != total || gf != free || gr != reserved {
		t.Fatalf("pool: total %d free %d reserved %d, want %d %d %d", gt, gf, gr, total, free, reserved)
	}
}

// hugeSetup returns an address space and a pool of pages of hugeSize
// holding pages, over memory of frames frames.
func hugeSetup(t *testing.T, frames, pages int) (*mmtest.Memory, *AddressSpace, *HugePool) {
	t.Helper()
	m := mmtest.New(t, frames)
	as, err := NewAddressSpace(m)
	must(t, err)
	pool := NewHugePool(m, hugeSize)
	pool.SetPages(pages)
	return m, as, pool
}

// hugeTeardown releases as and empties pool, and checks that every frame
// came back.
func hugeTeardown(t *testing.T, m *mmtest.Memory, as *AddressSpace, pool *HugePool) {
	t.Helper()
	as.Release()
	pool.SetPages(0)
	if n := inUse(m.Frames); n != 0 {
		t.Fatalf("%d frames leaked", n)
	}
}

func TestHugePages(t *testing.T) {
	m := mmtest.New(t, 256)
	as, err := NewAddressSpace(m)
	must(t, err)
	pool := NewHugePool(m, hugeSize)
	pool.SetPages(4)
	checkCounts(t, pool, 4, 4, 0)
	if n := inUse(m.Frames); n != 1+16 { // the root table and the pool
		t.Fatalf("%d frames in use, want 17", n)
	}

	// Five base pages round up to two huge pages, reserved, not taken.
	shared, err := as.Mmap(0, 5*PageSize, Mapping{Perm: rw, Shared: true, Huge: pool})
	must(t, err)
	if shared%hugeSize != 0 {
		t.Fatalf("huge mapping at %#x, not aligned", shared)
	}
	checkCounts(t, pool, 4, 4, 2)
	if _, err := as.Mmap(0, 3*hugeSize, Mapping{Perm: rw, Huge: pool}); err != ErrNoMemory {
		t.Fatalf("three pages from two unpromised: %v, want ErrNoMemory", err)
	}
	if _, err := as.Mmap(hugeSize*100+PageSize, hugeSize, Mapping{Perm: rw, Fixed: true, Huge: pool}); err != ErrInvalid {
		t.Fatalf("fixed at an unaligned address: %v, want ErrInvalid", err)
	}
	checkCounts(t, pool, 4, 4, 2)
	put(t, as, shared+PageSize, "shared")
	checkCounts(t, pool, 4, 3, 1)

	// Boundaries inside a huge page are refused.
	if err := as.Unmap(shared, PageSize); err != ErrInvalid {
		t.Fatalf("munmap of a base page: %v", err)
	}
	if err := as.Protect(shared+PageSize, hugeSize, PTERead); err != ErrInvalid {
		t.Fatalf("mprotect from inside a page: %v", err)
	}
	if _, err := as.Remap(shared, 2*hugeSize, 3*hugeSize, RemapMayMove, 0); err != ErrInvalid {
		t.Fatalf("mremap growing huge memory: %v", err)
	}
	must(t, as.Protect(shared+hugeSize, hugeSize, PTERead))

	// A private page is the child's own after fork; a shared one is not.
	private, err := as.Mmap(0, hugeSize, Mapping{Perm: rw, Huge: pool})
	must(t, err)
	put(t, as, private, "parent")
	checkCounts(t, pool, 4, 2, 1)
	c, err := as.Clone()
	must(t, err)
	checkCounts(t, pool, 4, 1, 1) // the child's copy of the touched page
	if get(t, c, private, 6) != "parent" {
		t.Fatal("the child's private copy lost the parent's data")
	}
	put(t, c, private, "child!")
	put(t, c, shared+PageSize+6, "+child")
	if get(t, as, private, 6) != "parent" || get(t, as, shared+PageSize, 12) != "shared+child" {
		t.Fatal("private huge memory shared with the child, or shared memory not")
	}
	if _, err := c.Clone(); err != ErrNoMemory {
		t.Fatalf("a fork whose private pages the pool cannot promise: %v, want ErrNoMemory", err)
	}
	c.Release()
	checkCounts(t, pool, 4, 2, 1)

	// MADV_DONTNEED drops whole private pages from a page's start, which
	// come back zeroed; shared ones keep their data.
	if err := as.Advise(private+PageSize, hugeSize, AdviseDontNeed); err != ErrInvalid {
		t.Fatalf("MADV_DONTNEED from inside a page: %v", err)
	}
	must(t, as.Advise(private, hugeSize+PageSize, AdviseDontNeed))
	checkCounts(t, pool, 4, 3, 2)
	if get(t, as, private, 6) != "\x00\x00\x00\x00\x00\x00" {
		t.Fatal("private huge memory kept its data after MADV_DONTNEED")
	}
	checkCounts(t, pool, 4, 2, 1)
	must(t, as.Advise(shared, hugeSize, AdviseDontNeed))
	if get(t, as, shared+PageSize, 12) != "shared+child" {
		t.Fatal("shared huge memory lost its data to MADV_DONTNEED")
	}

	// Unmapping private memory gives its page back at once.
	must(t, as.Unmap(private, hugeSize))
	checkCounts(t, pool, 4, 3, 1)
	// Shrinking the pool frees only what no mapping holds or was promised.
	pool.SetPages(0)
	checkCounts(t, pool, 2, 1, 1)
	as.Release()
	checkCounts(t, pool, 2, 2, 0)
	pool.SetPages(0)
	checkCounts(t, pool, 0, 0, 0)
	if n := inUse(m.Frames); n != 0 {
		t.Fatalf("%d frames leaked", n)
	}
}

func TestHugePagesNoReserve(t *testing.T) {
	m := mmtest.New(t, 64)
	as, err := NewAddressSpace(m)
	must(t, err)
	pool := NewHugePool(m, hugeSize)
	addr, err := as.Mmap(0, hugeSize, Mapping{Perm: rw, Shared: true, Huge: pool, HugeNoReserve: true})
	must(t, err)
	if err := as.Fault(addr, Write); !errors.Is(err, ErrBus) {
		t.Fatalf("touch with no page free: %v, want ErrBus", err)
	}
	pool.SetPages(1)
	put(t, as, addr, "x")
	checkCounts(t, pool, 1, 0, 0)
	as.Release()
	checkCounts(t, pool, 1, 1, 0)
	// A pool asked for more than memory holds gets what it can.
	pool.SetPages(1000)
	if total, _, _ := pool.Counts(); total < 2 || total >= 1000 {
		t.Fatalf("pool of %d pages from 64 frames", total)
	}
	pool.SetPages(0)
	if n := inUse(m.Frames); n != 0 {
		t.Fatalf("%d frames leaked", n)
	}
}

func TestHugeFileMemory(t *testing.T) {
	m, as, pool := hugeSetup(t, 256, 3)
	size := int64(hugeSize)
	file := NewHugeFileMemory(pool, func() int64 { return size })

	// A shared mapping promises the file's pages in its range once.
	must(t, file.ReserveHuge(0, 2*hugeSize))
	must(t, file.ReserveHuge(0, hugeSize))
	checkCounts(t, pool, 3, 3, 2)
	shared, err := as.Mmap(0, 2*hugeSize, Mapping{Perm: rw, Held: file})
	must(t, err)
	put(t, as, shared, "file")
	checkCounts(t, pool, 3, 2, 1)
	if err := as.Fault(shared+hugeSize, Read); !errors.Is(err, ErrBus) {
		t.Fatalf("a page past the end of the file: %v, want ErrBus", err)
	}
	buf := make([]byte, 6)
	file.ReadHuge(buf, 0)
	if string(buf) != "file\x00\x00" || file.HugeTaken() != 1 {
		t.Fatalf("file reads %q with %d pages", buf, file.HugeTaken())
	}

	// A private mapping starts with the file's bytes and keeps its own.
	mem, err := NewHugePrivateCopy(file, 0, hugeSize, false)
	must(t, err)
	private, err := as.Mmap(0, hugeSize, Mapping{Perm: rw, HugeMemory: mem})
	must(t, err)
	if _, err := NewHugePrivateCopy(file, 0, hugeSize, false); err != ErrNoMemory {
		t.Fatalf("a private copy the pool cannot promise: %v", err)
	}
	if get(t, as, private, 4) != "file" {
		t.Fatal("a private mapping of the file does not start as the file")
	}
	put(t, as, private, "mine")
	if get(t, as, shared, 4) != "file" {
		t.Fatal("a private mapping's write reached the file")
	}
	checkCounts(t, pool, 3, 1, 1)
	must(t, as.Unmap(private, hugeSize))
	checkCounts(t, pool, 3, 2, 1)

	// A private mapping keeps the file's pages when the file is closed
	// and its shared mapping gone, as Linux's mapping keeps the file.
	mem, err = NewHugePrivateCopy(file, 0, hugeSize, false)
	must(t, err)
	late, err := as.Mmap(0, hugeSize, Mapping{Perm: rw, HugeMemory: mem})
	must(t, err)
	file.Release()
	must(t, as.Unmap(shared, 2*hugeSize))
	if get(t, as, late, 4) != "file" {
		t.Fatal("a private mapping lost the closed file's data")
	}
	must(t, as.Unmap(late, hugeSize))
	checkCounts(t, pool, 3, 3, 0)
	hugeTeardown(t, m, as, pool)
}

func TestHugeFileTruncate(t *testing.T) {
	m, as, pool := hugeSetup(t, 256, 3)
	size := int64(2 * hugeSize)
	file := NewHugeFileMemory(pool, func() int64 { return size })
	must(t, file.ReserveHuge(0, 2*hugeSize))
	shared, err := as.Mmap(0, 2*hugeSize, Mapping{Perm: rw, Held: file})
	must(t, err)
	put(t, as, shared, "file")
	checkCounts(t, pool, 3, 2, 1)

	// Truncation waits for the mappings; the file's last hold frees all.
	file.TruncateHuge(0)
	checkCounts(t, pool, 3, 2, 1)
	must(t, as.Unmap(shared, 2*hugeSize))
	file.TruncateHuge(0)
	checkCounts(t, pool, 3, 3, 0)
	file.Release()
	hugeTeardown(t, m, as, pool)
}
