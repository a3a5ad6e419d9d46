package mm_test

import (
	"errors"
	"sync"
	"testing"

	. "github.com/jiege-go/jiege/mm"
)

// testFile is a file's data behind file mappings, as fs.Node keeps it.
type testFile struct {
	sync.Mutex
	data     []byte
	shared   *SharedMemory
	unmapped bool
}

func (f *testFile) Sync() {
	if f.shared != nil {
		f.shared.Pull()
	}
}

func (f *testFile) Size() int64 { return int64(len(f.data)) }

func (f *testFile) ReadPage(i uintptr, p []byte) {
	k := 0
	if off := i * PageSize; off < uintptr(len(f.data)) {
		k = copy(p, f.data[off:])
	}
	clear(p[k:])
}

func (f *testFile) WritePage(i uintptr, p []byte) {
	if off := i * PageSize; off < uintptr(len(f.data)) {
		copy(f.data[off:], p)
	}
}

func (f *testFile) Unmapped() { f.shared, f.unmapped = nil, true }

// write is write(2) on the file: pull the mappings' stores, change the
// data, push the page to the mappings.
func (f *testFile) write(off int, s string) {
	f.Lock()
	defer f.Unlock()
	f.Sync()
	copy(f.data[off:], s)
	if f.shared != nil {
		f.shared.Push(int64(off), int64(off+len(s)))
	}
}

// privateFile returns a file of size zero bytes held for n private
// mappings of as.
func privateFile(as *AddressSpace, size, n int) *testFile {
	f := &testFile{data: make([]byte, size)}
	f.Lock()
	f.shared = as.NewFileMemory(f)
	for range n {
		f.shared.HoldPrivateLocked()
	}
	f.Unlock()
	return f
}

func (f *testFile) read(off, n int) string {
	f.Lock()
	defer f.Unlock()
	f.Sync()
	return string(f.data[off : off+n])
}

func TestFileSharedMapping(t *testing.T) {
	as, frames := newTestAS(t, 64)
	file := &testFile{data: make([]byte, PageSize+100)}
	copy(file.data, "original")
	before := inUse(frames)
	hold := func(shared bool) *SharedMemory {
		file.Lock()
		defer file.Unlock()
		if file.shared == nil {
			file.shared = as.NewFileMemory(file)
		}
		if shared {
			file.shared.HoldLocked()
		} else {
			file.shared.HoldPrivateLocked()
		}
		return file.shared
	}
	a, err := as.Mmap(0, 2*PageSize, Mapping{Perm: rw, FileShared: hold(true)})
	must(t, err)
	b, err := as.Mmap(0, 2*PageSize, Mapping{Perm: rw, FileShared: hold(true)})
	must(t, err)
	priv, err := as.Mmap(0, PageSize, Mapping{Perm: rw, FilePrivate: hold(false)})
	must(t, err)
	if got := get(t, as, a, 8); got != "original" {
		t.Fatalf("mapping shows %q", got)
	}
	file.write(0, "written")
	if got := get(t, as, b, 7); got != "written" {
		t.Errorf("a write shows %q through the mapping", got)
	}
	put(t, as, a+PageSize+10, "stored")
	if got := get(t, as, b+PageSize+10, 6); got != "stored" {
		t.Errorf("the other mapping shows %q", got)
	}
	if got := file.read(PageSize+10, 6); got != "stored" {
		t.Errorf("a read shows %q", got)
	}
	if got := get(t, as, priv, 7); got != "written" {
		t.Errorf("the private mapping's first touch shows %q", got)
	}
	file.write(0, "rewrite")
	put(t, as, a+1, "E")
	if got := get(t, as, priv, 7); got != "rEwrite" {
		t.Errorf("a private page only read shows %q after a write and a store", got)
	}
	put(t, as, priv, "private")
	file.write(0, "again")
	if got := get(t, as, priv, 7); got != "private" {
		t.Errorf("the private page shows %q after its copy", got)
	}
	put(t, as, a+PageSize+200, "past the end") // beyond the file's 100 bytes there
	must(t, as.Unmap(a, 2*PageSize))
	if file.unmapped {
		t.Fatal("unmapped while the second mapping is there")
	}
	must(t, as.Unmap(b, 2*PageSize))
	must(t, as.Unmap(priv, PageSize))
	if !file.unmapped || string(file.data[PageSize+10:PageSize+16]) != "stored" || len(file.data) != PageSize+100 {
		t.Errorf("written back: unmapped %v, %q, %d bytes", file.unmapped, file.data[PageSize+10:PageSize+16], len(file.data))
	}
	if n := inUse(frames); n > before+3 { // page tables may stay
		t.Errorf("%d frames in use, %d before", n, before)
	}
}

// TestFilePrivateMapping: a private file mapping maps the file's frames
// read-only, in a forked child too, until a write copies the page; pages
// wholly past the end of the file are ErrBus for a fault and ErrFault for
// the kernel's copies; the frames go with the last mapping.
func TestFilePrivateMapping(t *testing.T) {
	as, frames := newTestAS(t, 64)
	before := inUse(frames)
	file := privateFile(as, PageSize+100, 1)
	copy(file.data, "original")
	priv, err := as.Mmap(0, 3*PageSize, Mapping{Perm: rw, FilePrivate: file.shared})
	must(t, err)
	must(t, as.Fault(priv, Read))
	child, err := as.Clone()
	must(t, err)
	file.write(0, "changed")
	if got, gotChild := get(t, as, priv, 7), get(t, child, priv, 7); got != "changed" || gotChild != "changed" {
		t.Errorf("after a write to the file the mapping shows %q, the child's %q", got, gotChild)
	}
	put(t, child, priv, "child")
	file.write(0, "again")
	if got, gotChild := get(t, as, priv, 7), get(t, child, priv, 7); got != "agained" || gotChild != "childed" {
		t.Errorf("after the child's store: %q, the child's %q", got, gotChild)
	}
	if got := file.read(0, 7); got != "agained" {
		t.Errorf("the child's store reached the file: %q", got)
	}
	if err := as.Fault(priv+2*PageSize, Read); !errors.Is(err, ErrBus) {
		t.Errorf("a fault past the end of the file: %v, want ErrBus", err)
	}
	if err := as.CopyOut(priv+2*PageSize, []byte("x")); !errors.Is(err, ErrFault) {
		t.Errorf("a copy past the end of the file: %v, want ErrFault", err)
	}
	must(t, as.Fault(priv+PageSize+200, Write)) // in the file's last page
	child.Release()
	must(t, as.Unmap(priv, 3*PageSize))
	if !file.unmapped {
		t.Error("the file's frames outlived its mappings")
	}
	if n := inUse(frames); n > before+3 { // page tables may stay
		t.Errorf("%d frames in use, %d before", n, before)
	}
}

// TestFileTruncateDropsPages: after a file shrinks, every address space
// that maps it, a forked one too, drops its pages past the new end, the
// file's and private copies, so that touching them is ErrBus; the part of
// the last page past the end stays mapped and reads zeros.
func TestFileTruncateDropsPages(t *testing.T) {
	as, _ := newTestAS(t, 64)
	file := &testFile{data: make([]byte, 3*PageSize)}
	file.Lock()
	file.shared = as.NewFileMemory(file)
	file.shared.HoldLocked()
	file.shared.HoldPrivateLocked()
	file.Unlock()
	shared, err := as.Mmap(0, 3*PageSize, Mapping{Perm: rw, FileShared: file.shared})
	must(t, err)
	priv, err := as.Mmap(0, 3*PageSize, Mapping{Perm: rw, FilePrivate: file.shared})
	must(t, err)
	for i := uintptr(0); i < 3; i++ {
		put(t, as, shared+i*PageSize+1, "s")
		put(t, as, priv+i*PageSize+2, "p")
	}
	child, err := as.Clone()
	must(t, err)
	file.Lock()
	file.Sync()
	file.data = file.data[:PageSize/2]
	file.shared.Push(0, 3*PageSize)
	file.shared.Truncated(int64(len(file.data)))
	file.Unlock()
	for _, s := range []*AddressSpace{as, child} {
		if !s.TruncationPending() {
			t.Fatal("no truncation pending")
		}
		s.DropTruncated()
		if s.TruncationPending() {
			t.Error("a truncation still pending after DropTruncated")
		}
		for _, va := range []uintptr{shared + PageSize, shared + 2*PageSize, priv + PageSize, priv + 2*PageSize} {
			if err := s.Fault(va, Read); !errors.Is(err, ErrBus) {
				t.Errorf("a page past the new end: %v, want ErrBus", err)
			}
		}
		if got := get(t, s, shared+1, 1) + get(t, s, priv+2, 1); got != "sp" {
			t.Errorf("the first page shows %q", got)
		}
		if got := get(t, s, shared+PageSize/2+1, 1); got != "\x00" {
			t.Errorf("past the end in the last page: %q", got)
		}
	}
	child.Release()
	as.Release()
	if !file.unmapped {
		t.Error("the file's frames outlived its mappings")
	}
}

// TestFaultAround: a read fault of a private file mapping maps, with its
// page, the other pages of its 16-page window, never one past the end of
// the file or outside the mapping; a write fault maps only its page.
func TestFaultAround(t *testing.T) {
	as, frames := newTestAS(t, 256)
	file := privateFile(as, 20*PageSize+100, 2) // pages 0-20
	resident := func(va uintptr, pages int) string {
		t.Helper()
		r, err := as.Resident(va, uintptr(pages)*PageSize)
		must(t, err)
		s := ""
		for _, b := range r {
			s += string("01"[b&1])
		}
		return s
	}
	m, err := as.Mmap(0x40_0000, 24*PageSize, Mapping{Perm: PTERead, FilePrivate: file.shared})
	must(t, err)
	if m != 0x40_0000 {
		t.Fatalf("mapped at %#x", m)
	}
	before := inUse(frames)
	must(t, as.Fault(m+17*PageSize, Read))
	// Page 17's window is 16-31: pages 21-23 lie past the end of the file.
	if got, want := resident(m, 24), "000000000000000011111000"; got != want {
		t.Errorf("after a read fault of page 17: resident %s, want %s", got, want)
	}
	if n := inUse(frames) - before; n < 5 {
		t.Errorf("%d frames taken for the 5 pages", n)
	}
	must(t, as.Fault(m+3*PageSize, Read))
	if got, want := resident(m, 24), "111111111111111111111000"; got != want {
		t.Errorf("after a read fault of page 3: resident %s, want %s", got, want)
	}
	w, err := as.Mmap(0x80_0000, 4*PageSize, Mapping{Perm: rw, FilePrivate: file.shared, Offset: 2 * PageSize})
	must(t, err)
	must(t, as.Fault(w+PageSize, Write))
	if got, want := resident(w, 4), "0100"; got != want {
		t.Errorf("after a write fault: resident %s, want %s", got, want)
	}
	put(t, as, w+PageSize, "w")
	must(t, as.Fault(w, Read))
	if got, want := resident(w, 4), "1111"; got != want {
		t.Errorf("after a read fault of a 4-page mapping: resident %s, want %s", got, want)
	}
	if got := get(t, as, w+PageSize, 1) + get(t, as, m+3*PageSize, 1); got != "w\x00" {
		t.Errorf("read %q: the private copy, and the file", got)
	}
}
