package mm_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"unsafe"

	. "github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

func newTestAS(t *testing.T, pages int) (*AddressSpace, *Frames) {
	t.Helper()
	m := mmtest.New(t, pages)
	as, err := NewAddressSpace(m)
	if err != nil {
		t.Fatal(err)
	}
	return as, m.Frames
}

func TestAddressSpaceMapCopyFault(t *testing.T) {
	as, f := newTestAS(t, 256)
	addr, err := as.Map(0x40_0000, 3*PageSize, PTERead|PTEWrite, true)
	if err != nil || addr != 0x40_0000 {
		t.Fatalf("Map = %#x, %v", addr, err)
	}
	msg := []byte("across a page boundary")
	va := addr + PageSize - 5
	if err := as.CopyOut(va, msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if err := as.CopyIn(va, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("CopyIn = %q, %v", got, err)
	}
	if inUse, _ := f.Stats(); inUse < 3 {
		t.Fatalf("pages not backed: %d frames in use", inUse)
	}
	if err := as.CopyIn(0x1000, got); !errors.Is(err, ErrFault) {
		t.Fatalf("CopyIn of unmapped memory: %v", err)
	}
	if err := as.Fault(addr+2*PageSize, Write); err != nil {
		t.Fatalf("write fault in RW VMA: %v", err)
	}
	before, _ := f.Stats()
	// Two threads fault on one page: the second finds it backed already.
	if err := as.Fault(addr+2*PageSize, Write); err != nil {
		t.Fatalf("second fault on a page backed meanwhile: %v", err)
	}
	if after, _ := f.Stats(); after != before {
		t.Fatalf("second fault backed the page again: %d frames, was %d", after, before)
	}
	s, err := as.CopyInString(va, 100)
	if err != nil || s != string(msg) {
		t.Fatalf("CopyInString = %q, %v", s, err)
	}
}

// Reading an untouched private anonymous mapping (a write(2) from it)
// reads zeros and takes no frame, as Linux's zero page; a write backs it.
func TestAddressSpaceReadUntouchedTakesNoFrame(t *testing.T) {
	as, f := newTestAS(t, 64)
	addr, err := as.Map(0x40_0000, 1024*PageSize, PTERead|PTEWrite, true)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := f.Stats()
	buf := bytes.Repeat([]byte{0xff}, 3*PageSize)
	for va := addr; va < addr+1024*PageSize; va += 3 * PageSize {
		n := min(uintptr(len(buf)), addr+1024*PageSize-va)
		if err := as.CopyIn(va, buf[:n]); err != nil {
			t.Fatalf("CopyIn at %#x: %v", va, err)
		}
		if i := bytes.IndexFunc(buf[:n], func(r rune) bool { return r != 0 }); i >= 0 {
			t.Fatalf("untouched memory at %#x reads %#x", va+uintptr(i), buf[i])
		}
	}
	if s, err := as.CopyInString(addr, 10); err != nil || s != "" {
		t.Fatalf("CopyInString of untouched memory = %q, %v", s, err)
	}
	if after, _ := f.Stats(); after != before {
		t.Fatalf("reading 1024 untouched pages took %d frames", after-before)
	}
	if err := as.CopyOut(addr+5*PageSize, []byte("x")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 2)
	if err := as.CopyIn(addr+5*PageSize, got); err != nil || string(got) != "x\x00" {
		t.Fatalf("after a write: %q, %v", got, err)
	}
}

func TestAddressSpaceResidentPages(t *testing.T) {
	as, _ := newTestAS(t, 64)
	priv, err := as.Map(0x40_0000, 8*PageSize, PTERead|PTEWrite, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []uintptr{0, 3, 7} {
		if err := as.CopyOut(priv+p*PageSize, []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	if n := as.ResidentPages(); n != 3 {
		t.Fatalf("ResidentPages = %d, want 3", n)
	}
	if err := as.Unmap(priv+3*PageSize, PageSize); err != nil {
		t.Fatal(err)
	}
	if n := as.ResidentPages(); n != 2 {
		t.Fatalf("after unmapping one touched page: ResidentPages = %d, want 2", n)
	}
}

func TestAddressSpaceProtectAndPopulate(t *testing.T) {
	as, _ := newTestAS(t, 256)
	code, _ := as.Map(0x10000, PageSize, PTERead|PTEExec, true)
	if err := as.CopyOut(code, []byte{1}); !errors.Is(err, ErrFault) {
		t.Fatalf("CopyOut to read-only code: %v", err)
	}
	if err := as.Populate(code, []byte{0x13, 0, 0, 0}); err != nil {
		t.Fatalf("Populate: %v", err)
	}
	if err := as.Fault(code, Write); !errors.Is(err, ErrFault) {
		t.Fatalf("write fault on RX: %v", err)
	}
	if err := as.Protect(code, PageSize, PTERead|PTEWrite); err != nil {
		t.Fatal(err)
	}
	_, perm, ok := Translate(as.Root(), code)
	if !ok || perm&PTEWrite == 0 || perm&PTEExec != 0 {
		t.Fatalf("PTE after Protect: %#x %v", perm, ok)
	}
	if err := as.Protect(0x5000_0000, PageSize, PTERead); err == nil {
		t.Fatal("Protect of unmapped range succeeded")
	}
}

func TestAddressSpaceUnmapSplitsAndFrees(t *testing.T) {
	as, f := newTestAS(t, 256)
	addr, _ := as.Map(0x100000, 4*PageSize, PTERead|PTEWrite, true)
	for i := uintptr(0); i < 4; i++ {
		if err := as.CopyOut(addr+i*PageSize, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := f.Stats()
	if err := as.Unmap(addr+PageSize, 2*PageSize); err != nil {
		t.Fatal(err)
	}
	if after, _ := f.Stats(); before-after != 2 {
		t.Fatalf("Unmap freed %d frames, want 2", before-after)
	}
	v := as.VMAs()
	if len(v) != 2 || v[0].End != addr+PageSize || v[1].Start != addr+3*PageSize {
		t.Fatalf("VMAs after split: %+v", v)
	}
	b := []byte{0}
	if err := as.CopyIn(addr+3*PageSize, b); err != nil || b[0] != 3 {
		t.Fatalf("data after split: %v %v", b, err)
	}
}

func TestAddressSpaceMmapBrk(t *testing.T) {
	as, f := newTestAS(t, 256)
	as.BrkBase, as.Brk = 0x20_0000, 0x20_0000
	if got := as.SetBrk(0x20_3000); got != 0x20_3000 {
		t.Fatalf("SetBrk = %#x", got)
	}
	if err := as.CopyOut(0x20_2ff0, []byte("brk")); err != nil {
		t.Fatal(err)
	}
	if got := as.SetBrk(0x10_0000); got != 0x20_3000 {
		t.Fatalf("SetBrk below base = %#x", got)
	}
	a, err := as.Map(0, 2*PageSize, PTERead|PTEWrite, false)
	if err != nil || a+2*PageSize > UserMmapTop || a < UserMin {
		t.Fatalf("mmap = %#x, %v", a, err)
	}
	b, _ := as.Map(0, PageSize, PTERead, false)
	if b+PageSize > a {
		t.Fatalf("second mmap %#x overlaps first %#x", b, a)
	}
	if _, err := as.Map(0x1001, PageSize, PTERead, true); err == nil {
		t.Fatal("unaligned fixed mmap accepted")
	}
	as.Release()
	if inUse, _ := f.Stats(); inUse != 0 {
		t.Fatalf("%d frames leaked after Release", inUse)
	}
}

func TestAddressSpaceClone(t *testing.T) {
	as, f := newTestAS(t, 512)
	addr, _ := as.Map(0x400000, 2*PageSize, PTERead|PTEWrite, true)
	if err := as.CopyOut(addr, []byte("parent")); err != nil {
		t.Fatal(err)
	}
	as.BrkBase, as.Brk = 0x600000, 0x601000
	c, err := as.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CopyOut(addr, []byte("child!")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	as.CopyIn(addr, b)
	if string(b) != "parent" {
		t.Fatalf("parent sees %q after the child wrote", b)
	}
	c.CopyIn(addr, b)
	if string(b) != "child!" || c.Brk != 0x601000 || len(c.VMAs()) != len(as.VMAs()) {
		t.Fatalf("child: %q brk %#x", b, c.Brk)
	}
	c.Release()
	as.Release()
	if inUse, _ := f.Stats(); inUse != 0 {
		t.Fatalf("%d frames leaked", inUse)
	}
}

// TestCopyInPathReusesRecent: a path copied in again is the string of
// the first copy, while what the memory holds now is what comes back,
// and a path among nine others is a copy again.
func TestCopyInPathReusesRecent(t *testing.T) {
	as, _ := newTestAS(t, 64)
	addr, err := as.Map(0x40_0000, PageSize, PTERead|PTEWrite, true)
	if err != nil {
		t.Fatal(err)
	}
	put := func(s string) {
		if err := as.CopyOut(addr, []byte(s+"\x00")); err != nil {
			t.Fatal(err)
		}
	}
	put("/var/www/html/index.html")
	first, _ := as.CopyInPath(addr, 100)
	again, _ := as.CopyInPath(addr, 100)
	if again != first || unsafe.StringData(again) != unsafe.StringData(first) {
		t.Fatalf("a path copied in again: %q at %p, first %q at %p", again, unsafe.StringData(again), first, unsafe.StringData(first))
	}
	put("/var/www/html/index.htmx")
	if s, _ := as.CopyInPath(addr, 100); s != "/var/www/html/index.htmx" {
		t.Fatalf("after the memory changed: %q", s)
	}
	for i := range 8 {
		put(fmt.Sprintf("/other/%d", i))
		as.CopyInPath(addr, 100)
	}
	put("/var/www/html/index.html")
	if s, _ := as.CopyInPath(addr, 100); s != first || unsafe.StringData(s) == unsafe.StringData(first) {
		t.Fatalf("a path pushed out of the recent ones: %q, the same string as before: %v", s, unsafe.StringData(s) == unsafe.StringData(first))
	}
}

// TestCopyInStringLimits: the NUL must come within max bytes; a string
// that runs into an unmapped page is a fault; one across two pages reads
// whole.
func TestCopyInStringLimits(t *testing.T) {
	as, _ := newTestAS(t, 64)
	addr, err := as.Map(0x40_0000, PageSize, PTERead|PTEWrite, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := as.CopyOut(addr, []byte("hello\x00")); err != nil {
		t.Fatal(err)
	}
	for max, want := range map[int]error{5: ErrInvalid, 6: nil, 100: nil} {
		s, err := as.CopyInString(addr, max)
		if !errors.Is(err, want) || (want == nil && s != "hello") {
			t.Errorf("CopyInString(max %d) = %q, %v; want %v", max, s, err, want)
		}
	}
	end := addr + PageSize - 3
	if err := as.CopyOut(end, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if s, err := as.CopyInString(end, 100); !errors.Is(err, ErrFault) {
		t.Errorf("a string into an unmapped page = %q, %v; want a fault", s, err)
	}
	if _, err := as.Map(addr+PageSize, PageSize, PTERead|PTEWrite, true); err != nil {
		t.Fatal(err)
	}
	if err := as.CopyOut(addr+PageSize, []byte("def\x00")); err != nil {
		t.Fatal(err)
	}
	if s, err := as.CopyInString(end, 100); err != nil || s != "abcdef" {
		t.Errorf("a string across two pages = %q, %v", s, err)
	}
	if s, err := as.CopyInString(end, 5); !errors.Is(err, ErrInvalid) {
		t.Errorf("a string across two pages, max 5 = %q, %v", s, err)
	}
}

// A segment's mappings (memory with a detach hook) never merge, so each
// VMA counts as an attachment; mprotect splits only the VMAs whose
// protection changes; a NoWrite mapping is never made writable; and
// DetachSegment removes every piece of the segment laid out from its
// start.
func TestSegmentMappings(t *testing.T) {
	m := mmtest.New(t, 64)
	as, err := NewAddressSpace(m)
	if err != nil {
		t.Fatal(err)
	}
	detached := 0
	seg := NewSegmentMemory(m, func() { detached++ })
	addr, err := as.Mmap(0, 3*PageSize, Mapping{Perm: PTERead | PTEWrite, Held: seg})
	if err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(addr+PageSize, PageSize, PTERead|PTEWrite); err != nil || as.MapCount() != 1 {
		t.Fatalf("mprotect to the same protection: %v, %d VMAs, want 1", err, as.MapCount())
	}
	if err := as.Protect(addr+PageSize, PageSize, PTERead); err != nil || as.MapCount() != 3 {
		t.Fatalf("mprotect of the middle page: %v, %d VMAs, want 3", err, as.MapCount())
	}
	if err := as.Protect(addr+PageSize, PageSize, PTERead|PTEWrite); err != nil || as.MapCount() != 3 {
		t.Fatalf("mprotect back: %v, %d VMAs, want 3 (no merge)", err, as.MapCount())
	}
	if seg.References() != 4 {
		t.Fatalf("references %d, want 3 VMAs and the maker's", seg.References())
	}
	ro, err := as.Mmap(0, PageSize, Mapping{Perm: PTERead, Held: seg, NoWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := as.Protect(ro, PageSize, PTERead|PTEWrite); !errors.Is(err, ErrAccess) {
		t.Fatalf("mprotect of a NoWrite mapping writable: %v, want ErrAccess", err)
	}
	size := func(s *SharedMemory) (uintptr, bool) { return 3 * PageSize, s == seg }
	if _, err := as.DetachSegment(addr, size); err != nil {
		t.Fatal(err)
	}
	if seg.References() != 2 || detached != 3 {
		t.Fatalf("after the detach: references %d, hook ran %d times; want 2 and 3", seg.References(), detached)
	}
	if _, err := as.DetachSegment(addr, size); !errors.Is(err, ErrInvalid) {
		t.Fatalf("second detach: %v, want ErrInvalid", err)
	}
	as.Release()
	seg.Release()
}

// TestCopiesFollowMapChanges checks that a copy finds each page's VMA as
// it is now, though find remembers the VMAs of recent pages: after
// munmap, a mapping made anew in the hole, mprotect, mremap, and with
// three pages of one set of find's memory in turn.
func TestCopiesFollowMapChanges(t *testing.T) {
	as, _ := newTestAS(t, 256)
	const base = 0x40_0000
	b := []byte{1}
	if _, err := as.Map(base, 24*PageSize, PTERead|PTEWrite, true); err != nil {
		t.Fatal(err)
	}
	// Pages 8 apart fall in one set: every one is found, in turn.
	for range 2 {
		for _, p := range []uintptr{0, 8, 16} {
			if err := as.CopyOut(base+p*PageSize, b); err != nil {
				t.Fatalf("page %d: %v", p, err)
			}
		}
	}
	if err := as.Unmap(base+8*PageSize, PageSize); err != nil {
		t.Fatal(err)
	}
	if err := as.CopyIn(base+8*PageSize, b); !errors.Is(err, ErrFault) {
		t.Fatalf("CopyIn of a page unmapped: %v", err)
	}
	if _, err := as.Map(base+8*PageSize, PageSize, PTERead, true); err != nil {
		t.Fatal(err)
	}
	if err := as.CopyIn(base+8*PageSize, b); err != nil {
		t.Fatalf("CopyIn of a page mapped anew: %v", err)
	}
	if err := as.CopyOut(base+8*PageSize, b); !errors.Is(err, ErrFault) {
		t.Fatalf("CopyOut to a read-only page mapped anew: %v", err)
	}
	if err := as.Protect(base+16*PageSize, PageSize, PTERead); err != nil {
		t.Fatal(err)
	}
	if err := as.CopyOut(base+16*PageSize, b); !errors.Is(err, ErrFault) {
		t.Fatalf("CopyOut after mprotect to read-only: %v", err)
	}
	if err := as.CopyOut(base+17*PageSize, b); err != nil {
		t.Fatalf("CopyOut to the writable rest of the split: %v", err)
	}
	to := uintptr(0x80_0000)
	if got, err := as.Remap(base, PageSize, PageSize, RemapMayMove|RemapFixed, to); err != nil || got != to {
		t.Fatalf("mremap = %#x, %v", got, err)
	}
	if err := as.CopyIn(base, b); !errors.Is(err, ErrFault) {
		t.Fatalf("CopyIn of the page mremap moved away: %v", err)
	}
	if err := as.CopyIn(to, b); err != nil || b[0] != 1 {
		t.Fatalf("CopyIn where mremap moved the page = %d, %v", b[0], err)
	}
}
