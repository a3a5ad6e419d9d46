package mm_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

const rw = PTERead | PTEWrite

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mapAt(t *testing.T, as *AddressSpace, addr uintptr, pages int) uintptr {
	t.Helper()
	got, err := as.Map(addr, uintptr(pages)*PageSize, rw, true)
	if err != nil || got != addr {
		t.Fatalf("Map(%#x) = %#x, %v", addr, got, err)
	}
	return got
}

func put(t *testing.T, as *AddressSpace, va uintptr, s string) {
	t.Helper()
	if err := as.CopyOut(va, []byte(s)); err != nil {
		t.Fatalf("CopyOut(%#x): %v", va, err)
	}
}

func get(t *testing.T, as *AddressSpace, va uintptr, n int) string {
	t.Helper()
	b := make([]byte, n)
	if err := as.CopyIn(va, b); err != nil {
		t.Fatalf("CopyIn(%#x): %v", va, err)
	}
	return string(b)
}

func inUse(f *Frames) uint64 { n, _ := f.Stats(); return n }

func TestUserRange(t *testing.T) {
	for _, c := range []struct {
		addr, length uintptr
		start, end   uintptr
		err          error
	}{
		{0x1000, 1, 0x1000, 0x2000, nil},
		{0x1000, 0, 0x1000, 0x1000, nil},
		{0x1001, 4096, 0, 0, ErrUnaligned},
		{0x1000, ^uintptr(0), 0, 0, ErrWraps},        // rounding up wraps to 0
		{0xfffffffffff00000, 4096, 0, 0, ErrOutside}, // issue 7: the walk wrapped
		{0xfffffffffffff000, 4096, 0, 0, ErrWraps},   // ends at 2^64
		{0x1000 + 1<<39, 4096, 0, 0, ErrOutside},     // issue 7: aliased the page at 0x1000
		{MaxUserVA - 4096, 4096, MaxUserVA - 4096, MaxUserVA, nil},
		{MaxUserVA - 4096, 8192, 0, 0, ErrOutside},
		{MaxUserVA, 4096, 0, 0, ErrOutside},
		{0x1000, 1 << 40, 0, 0, ErrOutside},
	} {
		s, e, err := UserRange(c.addr, c.length)
		if !errors.Is(err, c.err) || s != c.start || e != c.end {
			t.Errorf("UserRange(%#x, %#x) = %#x, %#x, %v; want %#x, %#x, %v", c.addr, c.length, s, e, err, c.start, c.end, c.err)
		}
	}
}

// The examples of issue 7, one call each: none touches memory it does not
// name, and each returns at once.
func TestIssue7Ranges(t *testing.T) {
	as, f := newTestAS(t, 256)
	addr := mapAt(t, as, 0x40_0000, 2)
	put(t, as, addr, "keep me")
	before := inUse(f)
	done := make(chan error, 1)
	go func() { done <- as.Unmap(0xfffffffffff00000, PageSize) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrOutside) {
			t.Errorf("munmap(0xfffffffffff00000) = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("munmap(0xfffffffffff00000) does not return")
	}
	for _, a := range []uintptr{addr + 1<<39, addr + 1<<38, ^uintptr(0) - PageSize + 1} {
		if err := as.Unmap(a, PageSize); err == nil {
			t.Errorf("munmap(%#x) succeeded", a)
		}
	}
	if err := as.Protect(addr+1<<39, PageSize, PTERead); !errors.Is(err, ErrNoMemory) {
		t.Errorf("mprotect beyond user space = %v", err)
	}
	if got := get(t, as, addr, 7); got != "keep me" || inUse(f) != before {
		t.Fatalf("after the bad calls: %q, frames %d -> %d", got, before, inUse(f))
	}

	as.BrkBase, as.Brk = 0x20_0000, 0x20_0000
	if got := as.SetBrk(0x20_3000); got != 0x20_3000 {
		t.Fatalf("brk grow = %#x", got)
	}
	put(t, as, 0x20_0000, "heap")
	for _, b := range []uintptr{^uintptr(0), 0xfffffffffff00000, MaxUserVA + PageSize, 0x1000} {
		if got := as.SetBrk(b); got != 0x20_3000 {
			t.Errorf("brk(%#x) = %#x, want the current break", b, got)
		}
	}
	if got := get(t, as, 0x20_0000, 4); got != "heap" {
		t.Fatalf("brk(-1) lost the heap: %q", got)
	}

	for _, hint := range []uintptr{0xfffffffffffff000, 0xfffffffffff00000, MaxUserVA - PageSize, 1 << 39} {
		got, err := as.Map(hint, 2*PageSize, rw, false)
		if err != nil || got < UserMin || got+2*PageSize > MaxUserVA {
			t.Errorf("mmap hint %#x = %#x, %v", hint, got, err)
		}
	}
	for _, fixed := range []uintptr{0xfffffffffff00000, MaxUserVA - PageSize, 1 << 39} {
		if _, err := as.Map(fixed, 2*PageSize, rw, true); !errors.Is(err, ErrNoMemory) {
			t.Errorf("MAP_FIXED at %#x = %v, want ErrNoMemory", fixed, err)
		}
	}
	for _, length := range []uintptr{^uintptr(0), 1 << 40, MaxUserVA + PageSize} {
		if _, err := as.Map(0, length, rw, false); !errors.Is(err, ErrNoMemory) {
			t.Errorf("mmap of %#x bytes = %v, want ErrNoMemory", length, err)
		}
	}
	if _, err := as.Map(0, 0, rw, false); !errors.Is(err, ErrInvalid) {
		t.Errorf("mmap of 0 bytes = %v", err)
	}
	if _, err := as.Mmap(addr, PageSize, Mapping{Perm: rw, NoReplace: true}); !errors.Is(err, ErrExists) {
		t.Errorf("MAP_FIXED_NOREPLACE over a mapping = %v", err)
	}
}

func TestAdviseErrors(t *testing.T) {
	as, _ := newTestAS(t, 64)
	addr := mapAt(t, as, 0x40_0000, 2)
	for _, c := range []struct {
		addr, length uintptr
		err          error
	}{
		{addr + 1, PageSize, ErrInvalid},
		{addr, 0, nil},
		{0xfffffffffff00000, 2 << 20, ErrInvalid}, // wraps
		{1 << 39, PageSize, ErrNoMemory},
		{addr, 3 * PageSize, ErrNoMemory}, // the third page is a hole
		{addr, 2 * PageSize, nil},
	} {
		if err := as.Advise(c.addr, c.length, AdviseNothing); !errors.Is(err, c.err) && !(err == nil && c.err == nil) {
			t.Errorf("Advise(%#x, %#x) = %v, want %v", c.addr, c.length, err, c.err)
		}
	}
}

// mprotect keeps pages, whatever protections they pass through.
func TestProtectKeepsContents(t *testing.T) {
	as, f := newTestAS(t, 64)
	addr := mapAt(t, as, 0x40_0000, 3)
	for i := uintptr(0); i < 3; i++ {
		put(t, as, addr+i*PageSize, string(rune('a'+i)))
	}
	frames := inUse(f)
	must(t, as.Protect(addr, 3*PageSize, 0))
	if err := as.CopyIn(addr, make([]byte, 1)); !errors.Is(err, ErrFault) {
		t.Fatalf("read of PROT_NONE = %v", err)
	}
	if err := as.Fault(addr+PageSize, Read); !errors.Is(err, ErrFault) {
		t.Fatalf("user read fault on PROT_NONE = %v", err)
	}
	if _, perm, ok := Translate(as.Root(), addr); !ok || perm&PTEUser != 0 {
		t.Fatalf("PROT_NONE page: present %v, perm %#x (U-mode must not reach it)", ok, perm)
	}
	must(t, as.Protect(addr+PageSize, PageSize, PTERead))
	must(t, as.Protect(addr, 3*PageSize, rw))
	if got := get(t, as, addr, 1) + get(t, as, addr+PageSize, 1) + get(t, as, addr+2*PageSize, 1); got != "abc" || inUse(f) != frames {
		t.Fatalf("after NONE, R, RW: %q, frames %d -> %d", got, frames, inUse(f))
	}
	if n := len(as.VMAs()); n != 1 {
		t.Fatalf("%d VMAs after protecting all back alike, want 1 (merged)", n)
	}
	// A hole: the mapped prefix changes, then ErrNoMemory.
	must(t, as.Unmap(addr+2*PageSize, PageSize))
	if err := as.Protect(addr, 3*PageSize, PTERead); !errors.Is(err, ErrNoMemory) {
		t.Fatalf("Protect over a hole = %v", err)
	}
	if err := as.CopyOut(addr+PageSize, []byte{1}); !errors.Is(err, ErrFault) {
		t.Fatalf("prefix still writable: %v", err)
	}
}

func TestCopyOnWriteFork(t *testing.T) {
	as, f := newTestAS(t, 512)
	addr := mapAt(t, as, 0x40_0000, 4)
	for i := uintptr(0); i < 4; i++ {
		put(t, as, addr+i*PageSize, "parent")
	}
	before := inUse(f)
	c, err := as.Clone()
	if err != nil {
		t.Fatal(err)
	}
	copied := inUse(f) - before // page tables only
	if copied > 4 {
		t.Fatalf("fork used %d frames: data pages were copied", copied)
	}
	pp, pperm, _ := Translate(as.Root(), addr)
	cp, cperm, _ := Translate(c.Root(), addr)
	if pp != cp || pperm&PTEWrite != 0 || cperm&PTEWrite != 0 {
		t.Fatalf("after fork: frames %#x/%#x, perms %#x/%#x; want one read-only frame", pp, cp, pperm, cperm)
	}
	// The child writes by a user fault: it gets its own frame.
	must(t, c.Fault(addr, Write))
	if cp2, perm, _ := Translate(c.Root(), addr); cp2 == pp || perm&PTEWrite == 0 {
		t.Fatalf("child after write fault: frame %#x perm %#x", cp2, perm)
	}
	put(t, c, addr, "child!")
	// The parent writes through the kernel (read(2) into its buffer).
	put(t, as, addr+PageSize, "PARENT")
	if get(t, as, addr, 6) != "parent" || get(t, c, addr, 6) != "child!" ||
		get(t, as, addr+PageSize, 6) != "PARENT" || get(t, c, addr+PageSize, 6) != "parent" {
		t.Fatal("a write after fork is seen by the other process")
	}
	// The last owner of a page writes in place: no copy.
	must(t, c.Fault(addr+PageSize, Write)) // child copies page 1; parent already has its own
	p2, _, _ := Translate(as.Root(), addr+2*PageSize)
	c.Release()
	must(t, as.Fault(addr+2*PageSize, Write))
	if p3, perm, _ := Translate(as.Root(), addr+2*PageSize); p3 != p2 || perm&PTEWrite == 0 {
		t.Fatalf("sole owner copied its page: %#x -> %#x, perm %#x", p2, p3, perm)
	}
	as.Release()
	if n := inUse(f); n != 0 {
		t.Fatalf("%d frames leaked", n)
	}
}

func TestCopyOnWriteChainAndUnmap(t *testing.T) {
	as, f := newTestAS(t, 512)
	addr := mapAt(t, as, 0x40_0000, 2)
	put(t, as, addr, "one")
	c1, err := as.Clone()
	must(t, err)
	c2, err := c1.Clone()
	must(t, err)
	must(t, c1.Unmap(addr, 2*PageSize))
	put(t, c2, addr, "two")
	if get(t, as, addr, 3) != "one" || get(t, c2, addr, 3) != "two" {
		t.Fatal("three owners: a write leaked")
	}
	// PROT_NONE then RW in a child keeps the shared frame read-only for it.
	must(t, c2.Protect(addr+PageSize, PageSize, 0))
	must(t, c2.Protect(addr+PageSize, PageSize, rw))
	put(t, as, addr+PageSize, "mine")
	must(t, c2.Fault(addr+PageSize, Write))
	if get(t, c2, addr+PageSize, 4) == "mine" {
		t.Fatal("child sees the parent's write after mprotect")
	}
	for _, s := range []*AddressSpace{c2, as, c1} {
		s.Release()
	}
	if n := inUse(f); n != 0 {
		t.Fatalf("%d frames leaked", n)
	}
}

func TestSharedMemoryAcrossFork(t *testing.T) {
	as, f := newTestAS(t, 256)
	addr, err := as.Mmap(0, 3*PageSize, Mapping{Perm: rw, Shared: true})
	must(t, err)
	put(t, as, addr, "before")
	c, err := as.Clone()
	must(t, err)
	put(t, c, addr, "child")
	put(t, c, addr+PageSize, "untouched at fork")
	put(t, as, addr+2*PageSize, "parent late")
	if get(t, as, addr, 5) != "child" || get(t, as, addr+PageSize, 17) != "untouched at fork" ||
		get(t, c, addr+2*PageSize, 11) != "parent late" {
		t.Fatal("shared memory is not shared")
	}
	// MADV_DONTNEED keeps shared data; private data reads back as zeros.
	must(t, as.Advise(addr, PageSize, AdviseDontNeed))
	if get(t, as, addr, 5) != "child" {
		t.Fatal("MADV_DONTNEED lost shared data")
	}
	// Unmapping the middle splits the VMA; both halves still share.
	must(t, c.Unmap(addr+PageSize, PageSize))
	put(t, c, addr+2*PageSize, "split")
	if get(t, as, addr+2*PageSize, 5) != "split" {
		t.Fatal("after a split, the tail is not shared")
	}
	c.Release()
	if get(t, as, addr+PageSize, 9) != "untouched" {
		t.Fatal("the child's exit freed shared pages the parent maps")
	}
	as.Release()
	if n := inUse(f); n != 0 {
		t.Fatalf("%d frames leaked", n)
	}
}

func TestDontNeedZeroesPrivate(t *testing.T) {
	as, f := newTestAS(t, 64)
	addr := mapAt(t, as, 0x40_0000, 2)
	put(t, as, addr, "gone")
	put(t, as, addr+PageSize, "kept")
	before := inUse(f)
	must(t, as.Advise(addr, PageSize, AdviseDontNeed))
	if inUse(f) != before-1 || get(t, as, addr, 4) != "\x00\x00\x00\x00" || get(t, as, addr+PageSize, 4) != "kept" {
		t.Fatal("MADV_DONTNEED did not drop exactly the first page")
	}
	file := &testFile{data: bytes.Repeat([]byte("F"), 2*PageSize)}
	file.Lock()
	file.shared = as.NewFileMemory(file)
	file.shared.HoldPrivateLocked()
	file.Unlock()
	fa, err := as.Mmap(0, PageSize, Mapping{Perm: rw, FilePrivate: file.shared, Offset: PageSize})
	must(t, err)
	put(t, as, fa, "w")
	must(t, as.Advise(fa, PageSize, AdviseDontNeed))
	if get(t, as, fa, 1) != "F" || file.read(PageSize, 1) != "F" {
		t.Fatal("private file page not refilled from the file, or the file was written")
	}
}

func TestRemap(t *testing.T) {
	as, f := newTestAS(t, 256)
	a := mapAt(t, as, 0x40_0000, 2)
	put(t, as, a, "first")
	put(t, as, a+PageSize, "second")
	// Grow in place into free space.
	got, err := as.Remap(a, 2*PageSize, 4*PageSize, 0, 0)
	if err != nil || got != a || len(as.VMAs()) != 1 {
		t.Fatalf("grow in place = %#x, %v, %d VMAs", got, err, len(as.VMAs()))
	}
	// Blocked: grow fails without MayMove, moves with it.
	mapAt(t, as, a+4*PageSize, 1)
	if _, err := as.Remap(a, 4*PageSize, 8*PageSize, 0, 0); !errors.Is(err, ErrNoMemory) {
		t.Fatalf("blocked grow = %v", err)
	}
	// Not in one VMA (a+4 pages is another mapping, merged: use a hole).
	if _, err := as.Remap(a+16*PageSize, PageSize, 2*PageSize, RemapMayMove, 0); !errors.Is(err, ErrFault) {
		t.Fatalf("remap of unmapped = %v", err)
	}
	must(t, as.Protect(a+4*PageSize, PageSize, PTERead))
	if _, err := as.Remap(a, 5*PageSize, 8*PageSize, RemapMayMove, 0); !errors.Is(err, ErrFault) {
		t.Fatalf("remap across two VMAs = %v", err)
	}
	frames := inUse(f)
	b, err := as.Remap(a, 4*PageSize, 8*PageSize, RemapMayMove, 0)
	if err != nil || b == a {
		t.Fatalf("move = %#x, %v", b, err)
	}
	if got := inUse(f) - frames; got > 2 {
		t.Fatalf("move used %d frames: more than the new page tables", got)
	}
	if get(t, as, b, 5) != "first" || get(t, as, b+PageSize, 6) != "second" {
		t.Fatal("move lost contents")
	}
	if err := as.CopyIn(a, make([]byte, 1)); !errors.Is(err, ErrFault) {
		t.Fatal("old range still mapped after a move")
	}
	// Shrink, then move to a fixed address over an existing mapping.
	if got, err := as.Remap(b, 8*PageSize, 2*PageSize, 0, 0); err != nil || got != b {
		t.Fatalf("shrink = %#x, %v", got, err)
	}
	target := mapAt(t, as, 0x80_0000, 4)
	if got, err := as.Remap(b, 2*PageSize, 2*PageSize, RemapMayMove|RemapFixed, target); err != nil || got != target {
		t.Fatalf("fixed move = %#x, %v", got, err)
	}
	if get(t, as, target+PageSize, 6) != "second" {
		t.Fatal("fixed move lost contents")
	}
	// DONTUNMAP leaves the old range mapped and empty.
	d, err := as.Remap(target, PageSize, PageSize, RemapMayMove|RemapDontUnmap, 0)
	if err != nil || get(t, as, d, 5) != "first" || get(t, as, target, 5) != "\x00\x00\x00\x00\x00" {
		t.Fatalf("DONTUNMAP = %#x, %v", d, err)
	}
	for _, c := range []struct {
		old, oldLen, newLen uintptr
		flags               int
		to                  uintptr
	}{
		{target, PageSize, PageSize, RemapFixed, 0x90_0000},                                // fixed without maymove
		{target + 1, PageSize, PageSize, 0, 0},                                             // unaligned
		{target, PageSize, 0, 0, 0},                                                        // new length 0
		{target, PageSize, PageSize, 0x100, 0},                                             // unknown flag
		{target, 2 * PageSize, 2 * PageSize, RemapMayMove | RemapFixed, target + PageSize}, // overlap
		{target, PageSize, PageSize, RemapMayMove | RemapFixed, MaxUserVA},                 // outside
		{target, PageSize, 2 * PageSize, RemapMayMove | RemapDontUnmap, 0},                 // dontunmap resizes
	} {
		if _, err := as.Remap(c.old, c.oldLen, c.newLen, c.flags, c.to); !errors.Is(err, ErrInvalid) {
			t.Errorf("Remap(%#x, %#x, %#x, %#x, %#x) = %v, want ErrInvalid", c.old, c.oldLen, c.newLen, c.flags, c.to, err)
		}
	}
	as.Release()
	if n := inUse(f); n != 0 {
		t.Fatalf("%d frames leaked", n)
	}
}

func TestResident(t *testing.T) {
	as, _ := newTestAS(t, 64)
	addr := mapAt(t, as, 0x40_0000, 4)
	put(t, as, addr, "x")
	put(t, as, addr+2*PageSize, "x")
	vec, err := as.Resident(addr, 4*PageSize)
	if err != nil || !bytes.Equal(vec, []byte{1, 0, 1, 0}) {
		t.Fatalf("Resident = %v, %v", vec, err)
	}
	if _, err := as.Resident(addr, 5*PageSize); !errors.Is(err, ErrNoMemory) {
		t.Fatalf("Resident past the mapping = %v", err)
	}
}

// Many VMAs: every operation keeps the tree equal to a simple model.
func TestManyVMAsAgainstModel(t *testing.T) {
	as, f := newTestAS(t, 4096)
	const n = 7000
	base := uintptr(0x100_0000)
	model := make([]bool, 2*n) // page i mapped (every page its own VMA: alternate protections)
	perm := func(i int) uint64 {
		if i%2 == 0 {
			return rw
		}
		return PTERead
	}
	for i := 0; i < 2*n; i += 2 {
		for _, j := range []int{i, i + 1} {
			if _, err := as.Map(base+uintptr(j)*PageSize, PageSize, perm(j), true); err != nil {
				t.Fatal(err)
			}
			model[j] = true
		}
	}
	if as.MapCount() != 2*n {
		t.Fatalf("%d VMAs, want %d", as.MapCount(), 2*n)
	}
	put(t, as, base+2*PageSize*100, "page 200")
	rng := rand.New(rand.NewPCG(1, 2))
	for step := 0; step < 3000; step++ {
		i := rng.IntN(2 * n)
		switch rng.IntN(3) {
		case 0:
			must(t, as.Unmap(base+uintptr(i)*PageSize, PageSize))
			model[i] = false
		case 1:
			if _, err := as.Map(base+uintptr(i)*PageSize, PageSize, perm(i), true); err != nil {
				t.Fatal(err)
			}
			model[i] = true
		case 2:
			err := as.Protect(base+uintptr(i)*PageSize, PageSize, perm(i))
			if model[i] != (err == nil) {
				t.Fatalf("Protect of page %d (mapped %v) = %v", i, model[i], err)
			}
		}
	}
	vmas := as.VMAs()
	var pages []int
	for k, v := range vmas {
		if k > 0 && vmas[k-1].End > v.Start {
			t.Fatalf("VMAs overlap or are out of order: %+v %+v", vmas[k-1], v)
		}
		for va := v.Start; va < v.End; va += PageSize {
			i := int((va - base) / PageSize)
			if v.Perm != perm(i) {
				t.Fatalf("page %d has perm %#x", i, v.Perm)
			}
			pages = append(pages, i)
		}
	}
	var want []int
	for i, m := range model {
		if m {
			want = append(want, i)
		}
	}
	if len(pages) != len(want) {
		t.Fatalf("%d pages mapped, model %d", len(pages), len(want))
	}
	for k := range want {
		if pages[k] != want[k] {
			t.Fatalf("page %d mapped, model says %d", pages[k], want[k])
		}
	}
	if model[200] {
		if got := get(t, as, base+200*PageSize, 8); got != "page 200" {
			t.Fatalf("page 200 holds %q", got)
		}
	}
	// Unmap them all one by one, then nothing is left.
	for i := 0; i < 2*n; i++ {
		must(t, as.Unmap(base+uintptr(i)*PageSize, PageSize))
	}
	if as.MapCount() != 0 {
		t.Fatalf("%d VMAs left", as.MapCount())
	}
	as.Release()
	if used := inUse(f); used != 0 {
		t.Fatalf("%d frames leaked", used)
	}
}

func TestMapCountLimit(t *testing.T) {
	as, _ := newTestAS(t, 2048)
	base := uintptr(0x100_0000)
	for i := 0; i <= MaxMapCount; i++ {
		if _, err := as.Map(base+uintptr(2*i)*PageSize, PageSize, rw, true); err != nil {
			t.Fatalf("mapping %d: %v", i, err)
		}
	}
	// Linux lets the count reach MaxMapCount+1, then refuses.
	if _, err := as.Map(0, PageSize, rw, false); !errors.Is(err, ErrNoMemory) {
		t.Fatalf("mmap past vm.max_map_count = %v", err)
	}
	big := base + uintptr(4*MaxMapCount)*PageSize
	must(t, as.Unmap(base, PageSize))
	must(t, as.Unmap(base+2*PageSize, PageSize))
	if _, err := as.Map(big, 3*PageSize, rw, true); err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(big+PageSize, PageSize, PTERead); !errors.Is(err, ErrNoMemory) {
		t.Fatalf("mprotect splitting into too many VMAs = %v", err)
	}
	if err := as.Unmap(big+PageSize, PageSize); !errors.Is(err, ErrNoMemory) {
		t.Fatalf("munmap splitting past the limit = %v", err)
	}
	must(t, as.Unmap(big, PageSize)) // trimming an end never adds a VMA
}

// BenchmarkUnmapManyVMAs unmaps 6000 VMAs one by one (issue 7: seconds with
// a slice rebuilt per call; Linux takes about 30 ms).
func BenchmarkUnmapManyVMAs(b *testing.B) {
	m := mmtest.New(b, 64)
	for b.Loop() {
		b.StopTimer()
		as, err := NewAddressSpace(m)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 6000; i++ {
			if _, err := as.Map(uintptr(0x100_0000+2*i*PageSize), PageSize, rw, true); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		for i := 0; i < 6000; i++ {
			if err := as.Unmap(uintptr(0x100_0000+2*i*PageSize), PageSize); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		as.Release()
		b.StartTimer()
	}
}

// Moving shared memory with mremap moves the mapping's reference to it:
// its frames stay allocated and hold the data.
func TestRemapMovesSharedMemory(t *testing.T) {
	as, f := newTestAS(t, 64)
	a, err := as.Mmap(0x40_0000, 2*PageSize, Mapping{Perm: rw, Shared: true})
	must(t, err)
	put(t, as, a, "shared")
	mapAt(t, as, a+2*PageSize, 1) // no room to grow in place
	to, err := as.Remap(a, 2*PageSize, 4*PageSize, RemapMayMove, 0)
	must(t, err)
	other := mapAt(t, as, 0x80_0000, 1)
	put(t, as, other, "xxxxxx") // would reuse a frame freed too early
	if got := get(t, as, to, 6); got != "shared" {
		t.Fatalf("moved shared memory reads %q", got)
	}
	as.Release()
	if n := inUse(f); n != 0 {
		t.Fatalf("%d frames leaked", n)
	}
}
