package mm

// PTE bits of the RISC-V Sv39 format (privileged spec, "Sv39").
const (
	PTEValid    = 1 << 0
	PTERead     = 1 << 1
	PTEWrite    = 1 << 2
	PTEExec     = 1 << 3
	PTEUser     = 1 << 4
	PTEGlobal   = 1 << 5
	PTEAccessed = 1 << 6
	PTEDirty    = 1 << 7

	pteLeafMask = PTERead | PTEWrite | PTEExec
)

// Sv39 geometry: three levels of 512 entries, 39-bit virtual addresses.
const (
	levels    = 3
	entryBits = 9
	// MaxUserVA is the top of user memory: the lower half of Sv39's lower
	// half. The kernel maps itself into every address space above it.
	MaxUserVA    = uintptr(1) << 37
	GigaPageSize = uintptr(1) << 30
	MegaPageSize = uintptr(1) << 21
)

// KernelDirectMap is where the riscv64 kernel maps physical memory (and
// its own image, linked there): just above user memory, in the kernel's
// half of every address space.
const KernelDirectMap = MaxUserVA

// SatpSv39 is the satp value that selects Sv39 with root table root.
//
//go:nosplit
func SatpSv39(root uintptr) uint64 { return 8<<60 | uint64(root>>12) }

//go:nosplit
func vpn(va uintptr, level int) uintptr { return (va >> (12 + entryBits*uint(level))) & 511 }

//go:nosplit
func pteAddr(pte uint64) uintptr { return uintptr(pte>>10) << 12 }

//go:nosplit
func makePTE(pa uintptr, perm uint64) uint64 { return uint64(pa>>12)<<10 | perm | PTEValid }

//go:nosplit
func entry(table uintptr, idx uintptr) *uint64 {
	return (*uint64)(Ptr(table + idx*8))
}

// Walk returns the physical address of the level-0 entry that maps va in the table
// rooted at root, creating intermediate tables from frames when it is not
// nil. It returns 0 when a table is missing and frames is nil or empty, or
// when va lies under a superpage.
//
//go:nosplit
func Walk(root, va uintptr, frames *Frames) uintptr {
	table := root
	for level := levels - 1; level > 0; level-- {
		e := entry(table, vpn(va, level))
		if *e&PTEValid == 0 {
			if frames == nil {
				return 0
			}
			next := frames.Alloc()
			if next == 0 {
				return 0
			}
			*e = makePTE(next, 0)
		} else if *e&pteLeafMask != 0 {
			return 0
		}
		table = pteAddr(*e)
	}
	return table + vpn(va, 0)*8
}

// Map maps the page at va to the frame pa with the permission bits perm.
// It reports false when a page table could not be allocated.
//
//go:nosplit
func Map(root, va, pa uintptr, perm uint64, frames *Frames) bool {
	e := Walk(root, va, frames)
	if e == 0 {
		return false
	}
	*(*uint64)(Ptr(e)) = makePTE(pa, perm)
	return true
}

// MapGiga maps the 1 GiB superpage at va (aligned) to pa.
//
//go:nosplit
func MapGiga(root, va, pa uintptr, perm uint64) {
	*entry(root, vpn(va, 2)) = makePTE(pa, perm)
}

// MapTable points root's entry for the gigabyte holding va at the
// next-level table at pa.
//
//go:nosplit
func MapTable(root, va, pa uintptr) {
	*entry(root, vpn(va, 2)) = makePTE(pa, 0)
}

// CopyRootEntries copies root entries [from, to) of src into dst: the
// kernel's half of every user table.
//
//go:nosplit
func CopyRootEntries(dst, src, from, to uintptr) {
	for i := vpn(from, levels-1); i < vpn(to-1, levels-1)+1; i++ {
		*entry(dst, i) = *entry(src, i)
	}
}

// Translate returns the physical address that va maps to and the PTE's
// permission bits, following superpages; ok is false when va is unmapped.
//
//go:nosplit
func Translate(root, va uintptr) (pa uintptr, perm uint64, ok bool) {
	table := root
	for level := levels - 1; level >= 0; level-- {
		e := *entry(table, vpn(va, level))
		if e&PTEValid == 0 {
			return 0, 0, false
		}
		if e&pteLeafMask != 0 {
			size := uintptr(1) << (12 + entryBits*uint(level))
			return pteAddr(e) + va&(size-1), e & 0x3ff, true
		}
		table = pteAddr(e)
	}
	return 0, 0, false
}

// Unmap removes the 4 KiB mappings in [start, end) and gives their frames
// to free when free is not nil. Missing tables are skipped a whole table
// at a time, so a large, sparsely used range is cheap.
//
//go:nosplit
func Unmap(root, start, end uintptr, free *Frames) {
	eachLeaf(root, start, end, free, unmapLeaf)
}

// Invalidate clears the valid bit of the 4 KiB mappings in [start, end)
// and keeps their frames in the entries, for a caller that must make other
// processors forget the mappings before the frames are reused; Release
// then frees them. It returns how many mappings it invalidated.
//
//go:nosplit
func Invalidate(root, start, end uintptr) int {
	return eachLeaf(root, start, end, nil, invalidateLeaf)
}

// Release frees the frames that Invalidate left in [start, end).
//
//go:nosplit
func Release(root, start, end uintptr, free *Frames) {
	eachLeaf(root, start, end, free, releaseLeaf)
}

const (
	unmapLeaf = iota
	invalidateLeaf
	releaseLeaf
)

//go:nosplit
func eachLeaf(root, start, end uintptr, free *Frames, op int) (count int) {
	for va := start; va < end; {
		table := root
		level := levels - 1
		var e *uint64
		for ; level >= 0; level-- {
			e = entry(table, vpn(va, level))
			if *e&PTEValid == 0 || *e&pteLeafMask != 0 || level == 0 {
				break
			}
			table = pteAddr(*e)
		}
		span := uintptr(1) << (12 + entryBits*uint(level))
		if level == 0 {
			switch {
			case op == invalidateLeaf && *e&PTEValid != 0:
				*e &^= PTEValid
				count++
			case op == unmapLeaf && *e&PTEValid != 0, op == releaseLeaf && *e != 0 && *e&PTEValid == 0:
				if free != nil {
					free.Free(pteAddr(*e))
				}
				*e = 0
				count++
			}
		}
		next := (va + span) &^ (span - 1)
		if next <= va {
			return count // wrapped past the top of the address space
		}
		va = next
	}
	return count
}

// FreeTables gives every page-table frame below root, and root itself, to
// free; leaf frames too when leaves is true. Superpage leaves are never
// freed (they map memory the tables do not own).
// Only the user part of root is walked: the kernel's entries above
// MaxUserVA are shared by every address space.
func FreeTables(root uintptr, leaves bool, free func(pa uintptr)) {
	freeTable(root, levels-1, leaves, free)
}

func freeTable(table uintptr, level int, leaves bool, free func(pa uintptr)) {
	n := uintptr(512)
	if level == levels-1 {
		n = vpn(MaxUserVA, levels-1)
	}
	for i := uintptr(0); i < n; i++ {
		e := *entry(table, i)
		if e&PTEValid == 0 {
			continue
		}
		if e&pteLeafMask == 0 {
			freeTable(pteAddr(e), level-1, leaves, free)
		} else if level == 0 && leaves {
			free(pteAddr(e))
		}
	}
	free(table)
}
