package mm

import (
	"testing"
	"unsafe"
)

// ram returns a page-aligned region of n pages of Go memory that stands in
// for physical memory (the code under test uses addresses directly).
func ram(t *testing.T, pages int) (uintptr, uintptr, []byte) {
	t.Helper()
	buf := make([]byte, (pages+1)*PageSize)
	base := (uintptr(unsafe.Pointer(&buf[0])) + PageSize - 1) &^ (PageSize - 1)
	return base, base + uintptr(pages)*PageSize, buf
}

func TestFramesAllocFreeZero(t *testing.T) {
	start, end, buf := ram(t, 8)
	var f Frames
	if !f.AddRange(start+1, end) { // rounded up: 7 usable frames
		t.Fatal("AddRange failed")
	}
	if _, total := f.Stats(); total != 7 {
		t.Fatalf("total = %d, want 7", total)
	}
	seen := map[uintptr]bool{}
	var got []uintptr
	for {
		pa := f.Alloc()
		if pa == 0 {
			break
		}
		if pa%PageSize != 0 || pa < start || pa >= end || seen[pa] {
			t.Fatalf("bad frame %#x", pa)
		}
		seen[pa] = true
		got = append(got, pa)
		*(*uint64)(Ptr(pa + 64)) = 0xdeadbeef
	}
	if len(got) != 7 {
		t.Fatalf("allocated %d frames, want 7", len(got))
	}
	f.Free(got[3])
	again := f.Alloc()
	if again != got[3] {
		t.Fatalf("freed frame not reused: %#x vs %#x", again, got[3])
	}
	if v := *(*uint64)(Ptr(again + 64)); v != 0 {
		t.Fatalf("reused frame not zeroed: %#x", v)
	}
	if inUse, _ := f.Stats(); inUse != 7 {
		t.Fatalf("inUse = %d", inUse)
	}
	_ = buf
}

func TestMapTranslateUnmap(t *testing.T) {
	start, end, buf := ram(t, 64)
	var f Frames
	f.AddRange(start, end)
	root := f.Alloc()
	data := f.Alloc()
	va := uintptr(0x12_3456_7000)
	if !Map(root, va, data, PTERead|PTEWrite|PTEUser, &f) {
		t.Fatal("Map failed")
	}
	pa, perm, ok := Translate(root, va+0x123)
	if !ok || pa != data+0x123 || perm&(PTERead|PTEWrite|PTEUser|PTEValid) != PTERead|PTEWrite|PTEUser|PTEValid {
		t.Fatalf("Translate = %#x %#x %v", pa, perm, ok)
	}
	if _, _, ok := Translate(root, va+PageSize); ok {
		t.Fatal("neighbouring page mapped")
	}
	inUse, _ := f.Stats()
	Unmap(root, va-MegaPageSize*3, va+GigaPageSize, &f)
	if _, _, ok := Translate(root, va); ok {
		t.Fatal("still mapped after Unmap")
	}
	if after, _ := f.Stats(); after != inUse-1 {
		t.Fatalf("Unmap freed %d frames, want 1", inUse-after)
	}
	_ = buf
}

func TestGigaPage(t *testing.T) {
	start, end, buf := ram(t, 4)
	var f Frames
	f.AddRange(start, end)
	root := f.Alloc()
	MapGiga(root, 0x8000_0000, 0x8000_0000, PTERead|PTEWrite|PTEExec)
	pa, _, ok := Translate(root, 0x8765_4321)
	if !ok || pa != 0x8765_4321 {
		t.Fatalf("Translate = %#x %v", pa, ok)
	}
	if Walk(root, 0x8765_4000, &f) != 0 {
		t.Fatal("Walk went below a superpage")
	}
	if got := SatpSv39(0x8020_0000); got != 8<<60|0x80200 {
		t.Fatalf("satp = %#x", got)
	}
	_ = buf
}

func TestFreeTables(t *testing.T) {
	start, end, buf := ram(t, 64)
	var f Frames
	f.AddRange(start, end)
	root := f.Alloc()
	for i := uintptr(0); i < 4; i++ {
		Map(root, 0x1000_0000+i*GigaPageSize, f.Alloc(), PTERead, &f)
	}
	FreeTables(root, true, f.Free)
	if inUse, _ := f.Stats(); inUse != 0 {
		t.Fatalf("%d frames leaked", inUse)
	}
	_ = buf
}

// A user table holds the kernel's half (root entries above MaxUserVA,
// copied from the kernel's table, whose lower tables every address space
// shares): FreeTables frees the user part and leaves the kernel's.
func TestFreeTablesLeavesTheKernelHalf(t *testing.T) {
	start, end, buf := ram(t, 64)
	var f Frames
	f.AddRange(start, end)
	kernel := f.Alloc()
	const window = KernelDirectMap + 64*GigaPageSize
	MapGiga(kernel, KernelDirectMap, 0, PTERead|PTEWrite)
	MapTable(kernel, window, f.Alloc())
	kernelPage := f.Alloc()
	Map(kernel, window+5*PageSize, kernelPage, PTERead|PTEWrite, &f)
	kernelFrames, _ := f.Stats()

	user := f.Alloc()
	CopyRootEntries(user, kernel, KernelDirectMap, 2*KernelDirectMap)
	Map(user, 0x1_0000, f.Alloc(), PTERead|PTEUser, &f)
	if pa, _, ok := Translate(user, window+5*PageSize); !ok || pa != kernelPage {
		t.Fatalf("the kernel's page through the user table: %#x %v, want %#x", pa, ok, kernelPage)
	}
	if pa, _, ok := Translate(user, KernelDirectMap+0x1234); !ok || pa != 0x1234 {
		t.Fatalf("the direct map through the user table: %#x %v", pa, ok)
	}
	FreeTables(user, true, f.Free)
	if inUse, _ := f.Stats(); inUse != kernelFrames {
		t.Fatalf("%d frames in use after freeing the user table, want the kernel's %d", inUse, kernelFrames)
	}
	if pa, _, ok := Translate(kernel, window+5*PageSize); !ok || pa != kernelPage {
		t.Fatalf("the kernel's page after the user table went: %#x %v", pa, ok)
	}
	_ = buf
}
