package mm

import "bytes"

// CoreSegment is a mapping as a core dump records it: its range, its
// protection and how many of its bytes from Start the dump holds.
type CoreSegment struct {
	Start, End uintptr
	Perm       uint64
	DumpSize   uintptr
}

// CoreSegments lists the mappings for a core dump, each with what Linux's
// vma_dump_size gives it under the default coredump_filter (0x33):
// anonymous memory whole, private anonymous memory only once touched, a
// private file mapping whole once written to, else its first page when it
// maps the start of an ELF file; the kernel's pages (the vDSO) always,
// MADV_DONTDUMP ones never.
func (as *AddressSpace) CoreSegments() []CoreSegment {
	var segs []CoreSegment
	as.vmas.each(func(v *VMA) bool {
		segs = append(segs, CoreSegment{Start: v.Start, End: v.End, Perm: v.Perm, DumpSize: as.dumpSize(v)})
		return true
	})
	return segs
}

func (as *AddressSpace) dumpSize(v *VMA) uintptr {
	whole := v.End - v.Start
	switch {
	case v.Shared != nil && v.Shared.kernelOwned:
		return whole
	case v.DontDump:
		return 0
	case v.Shared != nil && v.Shared.file == nil:
		return whole
	case v.Shared == nil && v.Cache == nil:
		if as.anyPage(v, func(uint64) bool { return true }) {
			return whole
		}
		return 0
	case v.Cache != nil && as.anyPage(v, func(e uint64) bool { return !filePage(e) }):
		return whole
	}
	if v.Offset == 0 && v.Perm&PTERead != 0 {
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
