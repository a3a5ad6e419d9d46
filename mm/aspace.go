package mm

import (
	"errors"
	"sort"
)

// Memory is where an address space gets frames and edits its page table.
// The kernel's implementation masks interrupts around the frame allocator
// it shares with the trap handler; tests use a Frames over a Go buffer.
type Memory interface {
	AllocFrame() uintptr
	FreeFrame(pa uintptr)
	Map(root, va, pa uintptr, perm uint64) bool
	// Unmap removes the mappings in [start, end) and frees their frames.
	Unmap(root, start, end uintptr)
	FreeTables(root uintptr)
	// Flush makes page-table changes visible to the processor; FlushPage
	// does so for one page.
	Flush()
	FlushPage(va uintptr)
}

// Errors of address-space operations; the syscall layer turns them into errnos.
var (
	ErrNoMemory = errors.New("out of memory")
	ErrFault    = errors.New("bad address")
	ErrInvalid  = errors.New("invalid argument")
	ErrExists   = errors.New("range already mapped")
)

// Access is the kind of access that faulted.
type Access int

const (
	Read Access = iota
	Write
	Execute
)

// User address-space layout (Sv39 lower half).
const (
	UserMmapTop  = uintptr(0x3f_0000_0000) // non-fixed mmaps grow down from here
	UserStackTop = uintptr(0x3f_8000_0000)
	UserMin      = uintptr(0x10000) // nothing is mapped below: null pointers fault
)

// VMA is a range of virtual memory with one protection. Its pages are
// backed by frames on first touch (anonymous memory, zero-filled) or when
// populated by the loader.
type VMA struct {
	Start, End uintptr
	Perm       uint64 // PTERead | PTEWrite | PTEExec
}

// AddressSpace is a user program's memory: its VMAs and its Sv39 page table.
// It is not safe for concurrent use; the process holds its lock.
type AddressSpace struct {
	mem      Memory
	root     uintptr
	vmas     []VMA // sorted by Start, never overlapping
	BrkBase  uintptr
	Brk      uintptr
	mmapNext uintptr
}

// NewAddressSpace returns an empty address space.
func NewAddressSpace(mem Memory) (*AddressSpace, error) {
	root := mem.AllocFrame()
	if root == 0 {
		return nil, ErrNoMemory
	}
	return &AddressSpace{mem: mem, root: root, mmapNext: UserMmapTop}, nil
}

// Satp is the satp value that runs code in this address space.
func (as *AddressSpace) Satp() uint64 { return SatpSv39(as.root) }

// Root is the page table's physical address.
func (as *AddressSpace) Root() uintptr { return as.root }

// VMAs returns a copy of the mappings.
func (as *AddressSpace) VMAs() []VMA { return append([]VMA(nil), as.vmas...) }

// Clone returns a copy of the address space for fork: the same mappings,
// each present page copied to a new frame.
func (as *AddressSpace) Clone() (*AddressSpace, error) {
	c, err := NewAddressSpace(as.mem)
	if err != nil {
		return nil, err
	}
	c.vmas = append([]VMA(nil), as.vmas...)
	c.BrkBase, c.Brk, c.mmapNext = as.BrkBase, as.Brk, as.mmapNext
	for _, v := range as.vmas {
		for va := v.Start; va < v.End; va += PageSize {
			pa, perm, ok := Translate(as.root, va)
			if !ok {
				continue
			}
			frame := as.mem.AllocFrame()
			if frame == 0 {
				c.Release()
				return nil, ErrNoMemory
			}
			copy((*[PageSize]byte)(Ptr(frame))[:], (*[PageSize]byte)(Ptr(pa))[:])
			if !as.mem.Map(c.root, va, frame, perm&(PTERead|PTEWrite|PTEExec)) {
				as.mem.FreeFrame(frame)
				c.Release()
				return nil, ErrNoMemory
			}
		}
	}
	return c, nil
}

// Release frees every frame and page table of the address space.
func (as *AddressSpace) Release() {
	as.mem.FreeTables(as.root)
	as.vmas = nil
	as.root = 0
}

func pageDown(v uintptr) uintptr { return v &^ (PageSize - 1) }
func pageUp(v uintptr) uintptr   { return (v + PageSize - 1) &^ (PageSize - 1) }

// find returns the VMA containing va.
func (as *AddressSpace) find(va uintptr) (*VMA, bool) {
	i := sort.Search(len(as.vmas), func(i int) bool { return as.vmas[i].End > va })
	if i < len(as.vmas) && as.vmas[i].Start <= va {
		return &as.vmas[i], true
	}
	return nil, false
}

// IsFree reports whether no VMA overlaps [addr, addr+length).
func (as *AddressSpace) IsFree(addr, length uintptr) bool { return as.free(addr, addr+pageUp(length)) }

// free reports whether [start, end) overlaps no VMA.
func (as *AddressSpace) free(start, end uintptr) bool {
	for _, v := range as.vmas {
		if v.Start < end && start < v.End {
			return false
		}
	}
	return true
}

// Map creates a VMA. With fixed, it goes exactly at addr, replacing what
// was there; otherwise addr is a hint and the range goes where it fits.
func (as *AddressSpace) Map(addr, length uintptr, perm uint64, fixed bool) (uintptr, error) {
	if length == 0 {
		return 0, ErrInvalid
	}
	length = pageUp(length)
	if fixed {
		if addr%PageSize != 0 || addr < UserMin || addr+length > MaxUserVA || addr+length < addr {
			return 0, ErrInvalid
		}
		as.unmap(addr, addr+length)
	} else {
		addr = pageDown(addr)
		if addr < UserMin || addr+length > UserMmapTop || !as.free(addr, addr+length) {
			var ok bool
			if addr, ok = as.findGap(length); !ok {
				return 0, ErrNoMemory
			}
		}
	}
	as.insert(VMA{Start: addr, End: addr + length, Perm: perm})
	return addr, nil
}

// findGap finds room for length bytes below the mmap area's cursor, top down.
func (as *AddressSpace) findGap(length uintptr) (uintptr, bool) {
	top := as.mmapNext
	for i := len(as.vmas) - 1; i >= -1; i-- {
		lo := UserMin
		if i >= 0 {
			v := as.vmas[i]
			if v.Start >= top {
				continue
			}
			lo = max(v.End, lo)
		}
		if lo < as.Brk+PageSize {
			lo = max(lo, pageUp(as.Brk)+PageSize) // keep brk room to grow a little
		}
		if top >= lo+length {
			as.mmapNext = top - length
			return top - length, true
		}
		if i >= 0 {
			top = as.vmas[i].Start
		}
	}
	return 0, false
}

func (as *AddressSpace) insert(v VMA) {
	i := sort.Search(len(as.vmas), func(i int) bool { return as.vmas[i].Start >= v.Start })
	as.vmas = append(as.vmas, VMA{})
	copy(as.vmas[i+1:], as.vmas[i:])
	as.vmas[i] = v
}

// Unmap removes [addr, addr+length) from the address space.
func (as *AddressSpace) Unmap(addr, length uintptr) error {
	if addr%PageSize != 0 || length == 0 {
		return ErrInvalid
	}
	as.unmap(addr, addr+pageUp(length))
	return nil
}

func (as *AddressSpace) unmap(start, end uintptr) {
	var kept []VMA
	for _, v := range as.vmas {
		if v.End <= start || v.Start >= end {
			kept = append(kept, v)
			continue
		}
		if v.Start < start {
			kept = append(kept, VMA{v.Start, start, v.Perm})
		}
		if v.End > end {
			kept = append(kept, VMA{end, v.End, v.Perm})
		}
	}
	as.vmas = kept
	as.mem.Unmap(as.root, start, end)
	as.mem.Flush()
}

// Protect changes the protection of [addr, addr+length), which must be mapped.
func (as *AddressSpace) Protect(addr, length uintptr, perm uint64) error {
	if addr%PageSize != 0 {
		return ErrInvalid
	}
	end := addr + pageUp(length)
	for va := addr; va < end; {
		v, ok := as.find(va)
		if !ok {
			return ErrNoMemory
		}
		va = v.End
	}
	var out []VMA
	for _, v := range as.vmas {
		if v.End <= addr || v.Start >= end {
			out = append(out, v)
			continue
		}
		if v.Start < addr {
			out = append(out, VMA{v.Start, addr, v.Perm})
		}
		out = append(out, VMA{max(v.Start, addr), min(v.End, end), perm})
		if v.End > end {
			out = append(out, VMA{end, v.End, v.Perm})
		}
	}
	as.vmas = out
	if perm&(PTERead|PTEWrite|PTEExec) == 0 {
		// A PTE with no permission would be a pointer to a page table, and
		// an invalid PTE cannot keep its frame: the pages are dropped, and
		// read as zeros when access is allowed again.
		as.mem.Unmap(as.root, addr, end)
	} else {
		for va := addr; va < end; va += PageSize {
			if pa, _, ok := Translate(as.root, va); ok {
				as.mem.Map(as.root, va, pa, pteBits(perm))
			}
		}
	}
	as.mem.Flush()
	return nil
}

// Perm is the protection with the given accesses allowed.
func Perm(read, write, exec bool) uint64 {
	var perm uint64
	if read {
		perm |= PTERead
	}
	if write {
		perm |= PTEWrite
	}
	if exec {
		perm |= PTEExec
	}
	return perm
}

// pteBits turns a protection into leaf PTE bits: RISC-V reserves
// write-without-read, so write implies read.
func pteBits(perm uint64) uint64 {
	if perm&PTEWrite != 0 {
		perm |= PTERead
	}
	return perm
}

// SetBrk moves the program break, returning the new (or, on failure, the old) break.
func (as *AddressSpace) SetBrk(brk uintptr) uintptr {
	if brk < as.BrkBase {
		return as.Brk
	}
	oldEnd, newEnd := pageUp(as.Brk), pageUp(brk)
	switch {
	case newEnd > oldEnd:
		if !as.free(oldEnd, newEnd) {
			return as.Brk
		}
		as.insert(VMA{Start: oldEnd, End: newEnd, Perm: PTERead | PTEWrite})
		as.merge()
	case newEnd < oldEnd:
		as.unmap(newEnd, oldEnd)
	}
	as.Brk = brk
	return brk
}

// merge joins adjacent VMAs with equal protection.
func (as *AddressSpace) merge() {
	out := as.vmas[:0]
	for _, v := range as.vmas {
		if n := len(out); n > 0 && out[n-1].End == v.Start && out[n-1].Perm == v.Perm {
			out[n-1].End = v.End
			continue
		}
		out = append(out, v)
	}
	as.vmas = out
}

// Fault backs the page at va with a zeroed frame if a VMA allows the access.
func (as *AddressSpace) Fault(va uintptr, access Access) error {
	v, ok := as.find(va)
	if !ok || !allows(v.Perm, access) {
		return ErrFault
	}
	if _, perm, present := Translate(as.root, va); present {
		if allows(perm, access) {
			return nil // another thread of the address space backed it first
		}
		return ErrFault // present but the access is not allowed by the PTE
	}
	return as.back(pageDown(va), v.Perm)
}

func allows(perm uint64, a Access) bool {
	switch a {
	case Write:
		return perm&PTEWrite != 0
	case Execute:
		return perm&PTEExec != 0
	}
	return perm&PTERead != 0
}

func (as *AddressSpace) back(va uintptr, perm uint64) error {
	pa := as.mem.AllocFrame()
	if pa == 0 {
		return ErrNoMemory
	}
	if !as.mem.Map(as.root, va, pa, pteBits(perm)) {
		as.mem.FreeFrame(pa)
		return ErrNoMemory
	}
	as.mem.FlushPage(va)
	return nil
}

// frameFor returns the physical address behind va, backing the page if the
// VMA allows access (or, with force, whatever its protection).
func (as *AddressSpace) frameFor(va uintptr, access Access, force bool) (uintptr, error) {
	v, ok := as.find(va)
	if !ok || (!force && !allows(v.Perm, access)) {
		return 0, ErrFault
	}
	if pa, _, present := Translate(as.root, va); present {
		return pa, nil
	}
	if err := as.back(pageDown(va), v.Perm); err != nil {
		return 0, err
	}
	pa, _, _ := Translate(as.root, va)
	return pa, nil
}

// CopyIn reads user memory at va into buf.
func (as *AddressSpace) CopyIn(va uintptr, buf []byte) error {
	return as.copy(va, buf, Read, false)
}

// CopyOut writes data to user memory at va.
func (as *AddressSpace) CopyOut(va uintptr, data []byte) error {
	return as.copy(va, data, Write, false)
}

// Populate writes data at va whatever the protection: the loader fills
// read-only and executable segments with it.
func (as *AddressSpace) Populate(va uintptr, data []byte) error {
	return as.copy(va, data, Write, true)
}

func (as *AddressSpace) copy(va uintptr, buf []byte, access Access, force bool) error {
	for len(buf) > 0 {
		pa, err := as.frameFor(va, access, force)
		if err != nil {
			return err
		}
		n := min(uintptr(len(buf)), PageSize-va%PageSize)
		page := (*[PageSize]byte)(Ptr(pa - pa%PageSize))
		off := va % PageSize
		if access == Read {
			copy(buf[:n], page[off:off+n])
		} else {
			copy(page[off:off+n], buf[:n])
		}
		buf, va = buf[n:], va+n
	}
	return nil
}

// CopyInString reads a NUL-terminated string of at most max bytes.
func (as *AddressSpace) CopyInString(va uintptr, max int) (string, error) {
	var out []byte
	for len(out) < max {
		pa, err := as.frameFor(va, Read, false)
		if err != nil {
			return "", err
		}
		page := (*[PageSize]byte)(Ptr(pa - pa%PageSize))
		for off := va % PageSize; off < PageSize && len(out) < max; off++ {
			if page[off] == 0 {
				return string(out), nil
			}
			out = append(out, page[off])
			va++
		}
	}
	return "", ErrInvalid
}
