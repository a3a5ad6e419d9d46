package mm_test

import (
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
		f.shared.Pull(f.data)
	}
}

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
		f.shared.Push(f.data, int64(off), int64(off+len(s)))
	}
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
	hold := func() *SharedMemory {
		file.Lock()
		defer file.Unlock()
		if file.shared == nil {
			file.shared = as.NewFileMemory(file)
		}
		file.shared.HoldLocked()
		return file.shared
	}
	a, err := as.Mmap(0, 2*PageSize, Mapping{Perm: rw, FileShared: hold()})
	must(t, err)
	b, err := as.Mmap(0, 2*PageSize, Mapping{Perm: rw, FileShared: hold()})
	must(t, err)
	priv, err := as.Mmap(0, PageSize, Mapping{Perm: rw, Source: file})
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
