package mm_test

import (
	"testing"

	. "github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

// TestCodeIsSyncedBeforeItIsMapped: every way a page the kernel wrote
// becomes executable (a fault of an executable file mapping and its
// fault-around, a fresh anonymous page, a copy-on-write copy, mprotect
// adding PROT_EXEC) asks for an instruction-cache sync while the page is
// not yet mapped executable: a hart running the program's other threads
// must not reach the code before its fence.i. Pages that do not become
// executable ask for none.
func TestCodeIsSyncedBeforeItIsMapped(t *testing.T) {
	m := mmtest.New(t, 256)
	as, err := NewAddressSpace(m)
	must(t, err)
	rx, rwx := uint64(PTERead|PTEExec), uint64(PTERead|PTEWrite|PTEExec)
	var watched []uintptr // pages that must not be executable at a sync
	syncs := 0
	m.OnSyncICache = func(root uintptr) {
		syncs++
		if root != as.Root() {
			t.Errorf("sync of table %#x, want %#x", root, as.Root())
		}
		for _, va := range watched {
			if _, perm, ok := Translate(root, va); ok && perm&PTEExec != 0 {
				t.Errorf("page %#x was executable before the sync", va)
			}
		}
	}
	expect := func(what string, want int, watch []uintptr, op func() error) {
		t.Helper()
		syncs, watched = 0, watch
		must(t, op())
		if syncs != want {
			t.Errorf("%s: %d syncs, want %d", what, syncs, want)
		}
	}
	file := privateFile(as, 8*PageSize, 2)

	code, err := as.Mmap(0x40_0000, 8*PageSize, Mapping{Perm: rx, FilePrivate: file.shared})
	must(t, err)
	pages := make([]uintptr, 8)
	for i := range pages {
		pages[i] = code + uintptr(i)*PageSize
	}
	expect("an executable file page and its window", 1, pages, func() error { return as.Fault(code+3*PageSize, Execute) })

	data, err := as.Mmap(0x80_0000, 8*PageSize, Mapping{Perm: PTERead, FilePrivate: file.shared})
	must(t, err)
	expect("a read-only file page", 0, nil, func() error { return as.Fault(data, Read) })

	anon, err := as.Map(0, 2*PageSize, rwx, false)
	must(t, err)
	expect("a fresh anonymous page", 1, []uintptr{anon}, func() error { return as.Fault(anon, Write) })

	heap, err := as.Map(0, PageSize, rw, false)
	must(t, err)
	expect("a data page", 0, nil, func() error { return as.Fault(heap, Write) })
	expect("mprotect adding PROT_EXEC", 1, []uintptr{heap}, func() error { return as.Protect(heap, PageSize, rx) })

	cow, err := as.Mmap(0xc0_0000, PageSize, Mapping{Perm: rwx, FilePrivate: file.shared})
	must(t, err)
	expect("a read of a writable code page", 1, []uintptr{cow}, func() error { return as.Fault(cow, Read) })
	shared, _, _ := Translate(as.Root(), cow)
	m.OnSyncICache = func(root uintptr) {
		syncs++
		if pa, _, _ := Translate(root, cow); pa != shared {
			t.Errorf("the copy was mapped before the sync")
		}
	}
	expect("the copy-on-write copy of a code page", 1, nil, func() error { return as.Fault(cow, Write) })
	if pa, _, _ := Translate(as.Root(), cow); pa == shared {
		t.Error("the write fault made no copy")
	}
}
