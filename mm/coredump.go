package mm

import "bytes"

// CoreSegment is a mapping as a core dump records it: its range, its
// protection and how many of its bytes from Start the dump holds.
type CoreSegment struct {
	Start, End uintptr
	Perm       uint64
	DumpSize   uintptr
}

// The bits of a coredump_filter (/proc/PID/coredump_filter): the kinds of
// mapping a core dump holds. Linux's default is 0x33.
const (
	DumpAnonPrivate       = 1 << 0
	DumpAnonShared        = 1 << 1
	DumpMappedPrivate     = 1 << 2
	DumpMappedShared      = 1 << 3
	DumpELFHeaders        = 1 << 4
	DefaultCoredumpFilter = 0x33
	CoredumpFilterBits    = 0x1ff // MMF_DUMP_FILTER_BITS: the ones kept
)

// CoreSegments lists the mappings for a core dump, each with what Linux's
// vma_dump_size gives it under filter: the kernel's pages (the vDSO)
// whole, MADV_DONTDUMP ones not at all; shared memory whole if its kind's
// bit is set; private anonymous memory whole once touched; a private
// file mapping whole once written to (anonymous bit) or with
// DumpMappedPrivate, else its first page when it maps the start of an
// ELF file (DumpELFHeaders).
func (as *AddressSpace) CoreSegments(filter uint32) []CoreSegment {
	var segs []CoreSegment
	as.vmas.each(func(v *VMA) bool {
		segs = append(segs, CoreSegment{Start: v.Start, End: v.End, Perm: v.Perm, DumpSize: as.dumpSize(v, filter)})
		return true
	})
	return segs
}

func (as *AddressSpace) dumpSize(v *VMA, filter uint32) uintptr {
	whole := v.End - v.Start
	switch {
	case v.Shared != nil && v.Shared.kernelOwned:
		return whole
	case v.DontDump:
		return 0
	case v.Shared != nil:
		if v.Shared.file == nil && filter&DumpAnonShared != 0 || v.Shared.file != nil && filter&DumpMappedShared != 0 {
			return whole
		}
		return 0
	case filter&DumpAnonPrivate != 0 && as.anyPage(v, func(e uint64) bool { return v.Cache == nil || !filePage(e) }):
		return whole // touched: Linux's anon_vma
	case v.Cache == nil:
		return 0
	case filter&DumpMappedPrivate != 0:
		return whole
	}
	if filter&DumpELFHeaders != 0 && v.Offset == 0 && v.Perm&PTERead != 0 {
		head := false
		as.eachPage(v.Start, v.Start+PageSize, func(_ uintptr, e *uint64) {
			head = bytes.HasPrefix((*[PageSize]byte)(Ptr(pteAddr(*e)))[:], []byte("\x7fELF"))
		})
		if head {
			return PageSize
		}
	}
	return 0
}

// anyPage reports whether a page of v is in memory whose entry is.
func (as *AddressSpace) anyPage(v *VMA, is func(entry uint64) bool) bool {
	found := false
	as.eachPage(v.Start, v.End, func(_ uintptr, e *uint64) { found = found || is(*e) })
	return found
}

// DumpPages calls fn with each page of [start, end) that is in memory and
// its contents, whatever the mapping's protection; the others are holes
// in a core file.
func (as *AddressSpace) DumpPages(start, end uintptr, fn func(va uintptr, page *[PageSize]byte)) {
	as.eachPage(start, end, func(va uintptr, e *uint64) { fn(va, (*[PageSize]byte)(Ptr(pteAddr(*e)))) })
}
