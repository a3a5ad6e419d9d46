package mm

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
)

// Memory is where an address space gets frames and edits its page table.
// The kernel's implementation masks interrupts around the frame allocator
// it shares with the trap handler; tests use a Frames over a Go buffer.
type Memory interface {
	AllocFrame() uintptr
	// NewRoot returns a zeroed root table for an address space, holding
	// whatever the platform maps above MaxUserVA (the kernel's half).
	NewRoot() uintptr
	FreeFrame(pa uintptr)
	Map(root, va, pa uintptr, perm uint64) bool
	// FreeTables frees a page table; the address space has unmapped
	// every page first.
	FreeTables(root uintptr)
	// Flush makes changes to the page table rooted at root visible to
	// every processor that may use it; FlushPage does so for one page.
	Flush(root uintptr)
	FlushPage(root, va uintptr)
	// SyncICache makes code written to memory for root's table (by the
	// kernel or by a program that says so) visible to instruction fetch
	// on every processor that may run it; called before the code is
	// mapped executable, so that no processor running the table reaches
	// it first.
	SyncICache(root uintptr)
}

// Errors of address-space operations; the syscall layer turns them into errnos.
var (
	ErrNoMemory = errors.New("out of memory")
	ErrFault    = errors.New("bad address")
	ErrInvalid  = errors.New("invalid argument")
	ErrExists   = errors.New("range already mapped")
	ErrAccess   = errors.New("permission denied")
	ErrBusy     = errors.New("locked memory")
	// ErrBus is an access to a file mapping's page that lies wholly past
	// the end of the file: SIGBUS for a fault, EFAULT for a system call.
	ErrBus = errors.New("past the end of the mapped file")
)

// Access is the kind of access that faulted.
type Access int

const (
	Read Access = iota
	Write
	Execute
)

// User address-space layout (the lower half of Sv39's lower half; the
// kernel is mapped above MaxUserVA).
const (
	UserMmapTop  = uintptr(0x1f_0000_0000) // non-fixed mmaps grow down from here
	UserStackTop = uintptr(0x1f_8000_0000)
	UserMin      = uintptr(0x10000) // nothing is mapped below: null pointers fault

	// MaxMapCount is Linux's default vm.max_map_count: more VMAs than
	// this and mmap, mprotect and munmap fail with ENOMEM.
	MaxMapCount = 65530
)

// VMA is a range of virtual memory with one protection. Its pages are
// backed by frames on first touch: zero-filled anonymous memory, the
// contents of a privately mapped file, or the frames of shared memory.
type VMA struct {
	Start, End uintptr
	Perm       uint64 // PTERead | PTEWrite | PTEExec
	// Shared is the memory of an anonymous MAP_SHARED mapping; nil for
	// private memory, whose frames fork shares copy-on-write.
	Shared *SharedMemory
	// Cache is the memory of the file a private mapping maps
	// (NewFileMemory): its pages are mapped read-only (pteFilePage) and
	// see the file's changes until the mapping writes one and gets a copy.
	Cache *SharedMemory
	// Offset is where Start lies in Shared or Cache, in bytes.
	Offset uintptr
	// Locked: mlock(2), mlockall(2) or MAP_LOCKED locked it (mlock.go).
	Locked bool
	// NoWrite: the mapping can never be made writable (Linux's VMA
	// without VM_MAYWRITE): a segment attached SHM_RDONLY, or a shared
	// file mapping whose file is not open for writing or is sealed.
	NoWrite bool
	// WipeOnFork (MADV_WIPEONFORK): a forked child's copy starts zeroed.
	// DontFork (MADV_DONTFORK): a forked child does not get the mapping.
	// DontDump (MADV_DONTDUMP): a core dump leaves it out.
	WipeOnFork, DontFork, DontDump bool
	// GrowsDown (MAP_GROWSDOWN): a fault below it extends it (growDown).
	GrowsDown bool
	// Path is the path of the file it maps, as it was opened, which
	// /proc/PID/maps shows; "" for anonymous memory.
	Path string
	// Uffd is the userfaultfd the range is registered with, for the
	// faults UffdMode names (userfault.go); nil for nearly all memory.
	Uffd     UffdContext
	UffdMode uint8
}

// slice is the part [start, end) of v.
func (v *VMA) slice(start, end uintptr) VMA {
	s := *v
	s.Start, s.End, s.Offset = start, end, v.Offset+(start-v.Start)
	return s
}

// mergeable reports whether b continues a seamlessly. A segment's
// mappings never merge: each counts as an attachment (Linux merges no
// VMA whose vm_ops has a close).
func mergeable(a, b *VMA) bool {
	if a.Shared != nil && a.Shared.detached != nil {
		return false
	}
	return a.End == b.Start && a.Perm == b.Perm && a.Shared == b.Shared && a.Cache == b.Cache && a.Locked == b.Locked && a.NoWrite == b.NoWrite &&
		a.WipeOnFork == b.WipeOnFork && a.DontFork == b.DontFork && a.DontDump == b.DontDump && a.GrowsDown == b.GrowsDown && a.Path == b.Path &&
		a.Uffd == b.Uffd && a.UffdMode == b.UffdMode &&
		(a.Shared == nil && a.Cache == nil || b.Offset == a.Offset+(a.End-a.Start))
}

// hold and release take and drop the reference of v, a VMA of as, to the
// memory it maps.
func (v *VMA) hold(as *AddressSpace) {
	if v.Shared != nil {
		v.Shared.hold()
		v.Shared.enter(as)
	}
	if v.Cache != nil {
		v.Cache.holdPrivate()
		v.Cache.enter(as)
	}
}

func (v *VMA) release(as *AddressSpace) {
	if v.Shared != nil {
		v.Shared.leave(as)
		v.Shared.release()
	}
	if v.Cache != nil {
		v.Cache.leave(as)
		v.Cache.releasePrivate()
	}
}

// Layout is where exec put a program's parts, as Linux's mm_struct
// keeps them (the code, the data, the stack's start, the arguments and
// the environment), which /proc/PID/stat shows and prctl(PR_SET_MM) moves.
type Layout struct {
	StartCode, EndCode, StartData, EndData uintptr
	StartStack, ArgStart, ArgEnd           uintptr
	EnvStart, EnvEnd                       uintptr
}

// AddressSpace is a user program's memory: its VMAs and its Sv39 page table.
// It is not safe for concurrent use; the process holds its lock.
type AddressSpace struct {
	mem     Memory
	root    uintptr
	vmas    vmaTree
	refs    *frameRefs // shared with the address spaces fork made from this one
	BrkBase uintptr
	Brk     uintptr
	Layout  Layout
	// SavedAuxv is the auxiliary vector exec gave the program (or
	// PR_SET_MM set), which /proc/PID/auxv shows.
	SavedAuxv []byte
	mmapNext  uintptr
	// lockFuture: mlockall(MCL_FUTURE) locks every new mapping.
	lockFuture bool
	// unmapped holds frames taken out of the page table and not yet
	// flushed from other processors' TLBs; flush frees them.
	unmapped []uintptr

	// truncated lists the mapped files truncated since user code last
	// ran here (SharedMemory.Truncated), written by the truncating task
	// under truncMu; truncPending says the list is not empty.
	truncMu      sync.Mutex
	truncated    []truncation
	truncPending atomic.Bool

	// poisoned holds the absent pages UFFDIO_POISON marked, until unmapped.
	poisoned map[uintptr]struct{}

	recentPaths recentStrings // CopyInPath's
}

// truncation is a file's memory whose pages from page on are past its end.
type truncation struct {
	mem  *SharedMemory
	page uintptr
}

// NewAddressSpace returns an empty address space.
func NewAddressSpace(mem Memory) (*AddressSpace, error) {
	root := mem.NewRoot()
	if root == 0 {
		return nil, ErrNoMemory
	}
	return &AddressSpace{mem: mem, root: root, refs: newFrameRefs(), mmapNext: UserMmapTop}, nil
}

// Satp is the satp value that runs code in this address space.
func (as *AddressSpace) Satp() uint64 { return SatpSv39(as.root) }

// Root is the page table's physical address.
func (as *AddressSpace) Root() uintptr { return as.root }

// SyncICache makes the code the program wrote visible to instruction
// fetch on every processor that runs or will run it (riscv_flush_icache).
func (as *AddressSpace) SyncICache() { as.mem.SyncICache(as.root) }

// VMAs returns a copy of the mappings in address order.
func (as *AddressSpace) VMAs() []VMA {
	out := make([]VMA, 0, as.vmas.count)
	as.vmas.each(func(v *VMA) bool { out = append(out, *v); return true })
	return out
}

// MapCount is the number of VMAs.
func (as *AddressSpace) MapCount() int { return as.vmas.count }

func pageDown(v uintptr) uintptr { return v &^ (PageSize - 1) }
func pageUp(v uintptr) uintptr   { return (v + PageSize - 1) &^ (PageSize - 1) }

// Page-table entries of user pages. A page of a PROT_NONE VMA keeps its
// frame under a leaf without the U bit (RISC-V gives a PTE with no R, W or
// X the meaning "pointer to the next table", so R marks it a leaf), which
// U-mode cannot touch. A private frame that fork shared is mapped without
// W until a write fault copies it, and so is a frame of a private file
// mapping's Cache, which pteFilePage (a bit the hardware leaves to
// software) marks as the file's, not the address space's.
const (
	pteFilePage = 1 << 8
	leafAccess  = PTERead | PTEWrite | PTEExec | PTEUser | pteFilePage
)

// filePage reports whether the entry e maps a frame of a VMA's Cache.
func filePage(e uint64) bool { return e&pteFilePage != 0 }

// pte returns the valid level-0 entry that maps va, or nil. It is Walk's
// descent without tables made, written out for Sv39's three levels (a
// loop over them shifted by a computed amount): every page of every user
// copy comes here.
func (as *AddressSpace) pte(va uintptr) *uint64 {
	top := *entry(as.root, vpn(va, 2))
	if top&PTEValid == 0 || top&pteLeafMask != 0 {
		return nil
	}
	mid := *entry(pteAddr(top), vpn(va, 1))
	if mid&PTEValid == 0 || mid&pteLeafMask != 0 {
		return nil
	}
	e := entry(pteAddr(mid), vpn(va, 0))
	if *e&PTEValid == 0 {
		return nil
	}
	return e
}

// leafBits is the access a page of v backed by the frame pa, a frame of
// v.Cache when file, gets.
func (as *AddressSpace) leafBits(v *VMA, pa uintptr, file bool) uint64 {
	var mark uint64
	if file {
		mark = pteFilePage
	}
	rwx := pteBits(v.Perm)
	if rwx == 0 {
		return PTERead | mark
	}
	if v.Shared == nil && rwx&PTEWrite != 0 && (file || as.refs.shared(pa)) {
		rwx &^= PTEWrite
	}
	return rwx | PTEUser | mark
}

// entryBits is the access the page of v mapped by e gets.
func (as *AddressSpace) entryBits(v *VMA, e uint64) uint64 {
	return as.leafBits(v, pteAddr(e), filePage(e))
}

func setLeaf(e *uint64, bits uint64) { *e = *e&^leafAccess | bits }

// mapPage maps va to pa with exactly the access bits given.
func (as *AddressSpace) mapPage(va, pa uintptr, bits uint64) bool {
	if !as.mem.Map(as.root, va, pa, bits&pteLeafMask) {
		return false
	}
	setLeaf(as.pte(va), bits)
	return true
}

// eachPage calls fn on every valid level-0 entry in [start, end), skipping
// absent tables whole so that a large, sparse range costs little.
func (as *AddressSpace) eachPage(start, end uintptr, fn func(va uintptr, e *uint64)) {
	for va := start; va < end; {
		table, level := as.root, levels-1
		var e *uint64
		for ; ; level-- {
			e = entry(table, vpn(va, level))
			if *e&PTEValid == 0 || *e&pteLeafMask != 0 || level == 0 {
				break
			}
			table = pteAddr(*e)
		}
		if level == 0 && *e&PTEValid != 0 {
			fn(va, e)
		}
		span := uintptr(1) << (12 + entryBits*uint(level))
		next := (va + span) &^ (span - 1)
		if next <= va {
			return
		}
		va = next
	}
}

// dropPages unmaps the pages of v in [start, end); a private frame is
// freed at the next flush when this was its last owner, a shared or file
// one stays with its memory.
func (as *AddressSpace) dropPages(v *VMA, start, end uintptr) {
	as.eachPage(start, end, func(_ uintptr, e *uint64) {
		pa, file := pteAddr(*e), filePage(*e)
		*e = 0
		if v.Shared == nil && !file && as.refs.drop(pa) {
			as.unmapped = append(as.unmapped, pa)
		}
	})
}

// flush makes the page-table changes visible everywhere, then frees the
// frames they unmapped: a thread of this process in U-mode on another hart
// may write through a stale translation until then.
func (as *AddressSpace) flush() {
	as.mem.Flush(as.root)
	for _, pa := range as.unmapped {
		as.mem.FreeFrame(pa)
	}
	as.unmapped = as.unmapped[:0]
}

// Clone returns the address space for a forked child: the same mappings,
// private pages shared copy-on-write (read-only in both until one writes),
// shared memory shared.
func (as *AddressSpace) Clone() (*AddressSpace, error) {
	root := as.mem.NewRoot()
	if root == 0 {
		return nil, ErrNoMemory
	}
	c := &AddressSpace{mem: as.mem, root: root, refs: as.refs, BrkBase: as.BrkBase, Brk: as.Brk, Layout: as.Layout,
		SavedAuxv: as.SavedAuxv, mmapNext: as.mmapNext}
	var err error
	as.vmas.each(func(v *VMA) bool {
		if v.DontFork {
			return true
		}
		copied := *v
		copied.Locked = false // memory locks are not inherited
		// Without UFFD_FEATURE_EVENT_FORK the child's memory is its own.
		copied.Uffd, copied.UffdMode = nil, 0
		if v.Shared != nil && v.Shared.hugePrivate() {
			// Private huge memory is copied now, into pages the child
			// reserves (Linux copies it on the first write instead).
			if copied.Shared, err = v.Shared.copyHuge(v.Offset, v.End-v.Start); err != nil {
				return false
			}
			copied.Offset = 0
			copied.Shared.enter(c)
			c.vmas.insert(copied)
			return true
		}
		for va := range as.poisoned {
			if va >= v.Start && va < v.End {
				if c.poisoned == nil {
					c.poisoned = map[uintptr]struct{}{}
				}
				c.poisoned[va] = struct{}{}
			}
		}
		c.vmas.insert(copied)
		v.hold(c)
		if v.WipeOnFork {
			return true // the child faults in zeros
		}
		as.eachPage(v.Start, v.End, func(va uintptr, e *uint64) {
			if err != nil {
				return
			}
			pa, file := pteAddr(*e), filePage(*e)
			owned := v.Shared == nil && !file
			if owned {
				as.refs.share(pa)
				setLeaf(e, as.leafBits(v, pa, false))
			}
			if !c.mapPage(va, pa, c.leafBits(v, pa, file)) {
				if owned {
					as.refs.drop(pa)
				}
				err = ErrNoMemory
			}
		})
		return err == nil
	})
	as.flush()
	if err != nil {
		c.Release()
		return nil, err
	}
	return c, nil
}

// Release frees every frame and page table of the address space.
func (as *AddressSpace) Release() {
	if as.root == 0 {
		return
	}
	as.vmas.each(func(v *VMA) bool {
		as.dropPages(v, v.Start, v.End)
		v.release(as)
		return true
	})
	as.flush()
	as.vmas = vmaTree{}
	as.mem.FreeTables(as.root)
	as.root = 0
}

// free reports whether [start, end) overlaps no VMA.
func (as *AddressSpace) free(start, end uintptr) bool {
	v := as.vmas.floor(end - 1)
	return v == nil || v.End <= start
}

// splitAt makes x a VMA boundary if a VMA spans it.
func (as *AddressSpace) splitAt(x uintptr) {
	v := as.vmas.find(x)
	if v == nil || v.Start == x {
		return
	}
	right := v.slice(x, v.End)
	v.End = x
	right.hold(as)
	as.vmas.insert(right)
}

// splits is how many VMAs cutting out [start, end) splits in two.
func (as *AddressSpace) splits(start, end uintptr) int {
	n := 0
	if v := as.vmas.find(start); v != nil && v.Start != start {
		n++
	}
	if v := as.vmas.find(end); v != nil && v.Start != end {
		n++
	}
	return n
}

// mergeAt joins the VMAs on either side of the boundary at x when they
// continue each other.
func (as *AddressSpace) mergeAt(x uintptr) {
	if x == 0 {
		return
	}
	left, right := as.vmas.find(x-1), as.vmas.find(x)
	if left == nil || right == nil || left == right || !mergeable(left, right) {
		return
	}
	r := as.vmas.cut(x, x+1)[0]
	left.End = r.End
	r.release(as)
}

// eachIn calls fn with every VMA overlapping [start, end), in order, and
// reports whether the VMAs cover the whole range.
func (as *AddressSpace) eachIn(start, end uintptr, fn func(v *VMA)) (covered bool) {
	covered = true
	at := start
	v := as.vmas.find(start)
	if v == nil {
		v = as.vmas.ceil(start)
	}
	for ; v != nil && v.Start < end; v = as.vmas.ceil(v.End) {
		if v.Start > at {
			covered = false
		}
		at = v.End
		fn(v)
	}
	return covered && at >= end
}

// Mapping says what Mmap maps.
type Mapping struct {
	Perm      uint64
	Fixed     bool // exactly at addr, replacing what is there
	NoReplace bool // exactly at addr, ErrExists if anything is there
	Shared    bool // anonymous MAP_SHARED memory
	NoWrite   bool // never to be made writable (VMA.NoWrite)
	// Held is shared memory its maker holds and maps into address spaces
	// as it pleases: the kernel's (NewKernelMemory, mapped read-only:
	// Perm must not allow writes) or a System V segment's
	// (NewSegmentMemory). The mapping takes a reference of its own.
	Held *SharedMemory
	// FileShared is a file's shared memory (NewFileMemory), held for
	// this mapping (HoldLocked); the mapping takes that reference.
	FileShared *SharedMemory
	// FilePrivate is a file's memory too, held for this private mapping
	// (HoldPrivateLocked), which takes that reference.
	FilePrivate *SharedMemory
	Offset      uintptr // of the mapping in the file
	Locked      bool    // MAP_LOCKED
	GrowsDown   bool    // MAP_GROWSDOWN, for private anonymous memory
	Path        string  // the mapped file's path (VMA.Path)
	// Huge is the pool whose pages make anonymous MAP_HUGETLB memory
	// (hugetlb.go): the length and a fixed address align to its page
	// size, and the pages are reserved now unless HugeNoReserve
	// (MAP_NORESERVE). Held huge memory (a huge page file's, or a
	// private copy of it) aligns the same way.
	Huge          *HugePool
	HugeNoReserve bool
	// HugeMemory is huge memory made for this mapping (a private mapping
	// of a huge page file, NewHugePrivateCopy), whose reference the
	// mapping takes.
	HugeMemory *SharedMemory
}

// Map maps anonymous private memory; see Mmap.
func (as *AddressSpace) Map(addr, length uintptr, perm uint64, fixed bool) (uintptr, error) {
	return as.Mmap(addr, length, Mapping{Perm: perm, Fixed: fixed})
}

// Mmap creates a VMA as mmap(2) does. With Fixed or NoReplace it goes
// exactly at addr; otherwise addr is a hint, taken when the range there is
// free and inside user memory. Errors are Linux's: ErrInvalid for a zero
// length or an unaligned fixed address, ErrNoMemory for a length or a fixed
// range that does not fit in user memory or too many VMAs.
func (as *AddressSpace) Mmap(addr, length uintptr, m Mapping) (uintptr, error) {
	if length == 0 {
		return 0, ErrInvalid
	}
	align := uintptr(PageSize)
	switch {
	case m.Huge != nil:
		align = m.Huge.Size
	case m.Held != nil && m.Held.huge != nil:
		align = m.Held.huge.pool.Size
	case m.HugeMemory != nil:
		align = m.HugeMemory.huge.pool.Size
	}
	size := (length + align - 1) &^ (align - 1)
	if size == 0 || size > MaxUserVA {
		return 0, ErrNoMemory
	}
	if as.vmas.count > MaxMapCount {
		return 0, ErrNoMemory
	}
	if m.Held != nil && m.Held.kernelOwned && m.Perm&PTEWrite != 0 {
		return 0, ErrAccess
	}
	if (m.Fixed || m.NoReplace) && addr%align != 0 {
		return 0, ErrInvalid
	}
	huge, made := m.HugeMemory, false
	if m.Huge != nil {
		var err error
		if huge, err = NewHugeMemory(m.Huge, size, !m.Shared, m.HugeNoReserve); err != nil {
			return 0, err
		}
		made = true
	}
	if m.Fixed || m.NoReplace {
		start, end, err := UserRange(addr, size)
		switch {
		case errors.Is(err, ErrUnaligned):
			err = ErrInvalid
		case err != nil:
			err = ErrNoMemory
		case start < UserMin:
			err = ErrInvalid
		case m.NoReplace && !as.free(start, end):
			err = ErrExists
		default:
			err = as.unmap(start, end)
		}
		if err != nil {
			if made {
				huge.release()
			}
			return 0, err
		}
	} else {
		hint := (addr + align - 1) &^ (align - 1)
		start, end, err := UserRange(hint, size)
		if err != nil || start < UserMin || end > UserMmapTop || !as.free(start, end) {
			var ok bool
			if start, ok = as.findGap(size, align); !ok {
				if made {
					huge.release()
				}
				return 0, ErrNoMemory
			}
		}
		addr = start
	}
	v := VMA{Start: addr, End: addr + size, Perm: m.Perm, Cache: m.FilePrivate, Offset: m.Offset, Shared: m.FileShared,
		Locked: m.Locked || as.lockFuture && (m.Held == nil || !m.Held.kernelOwned), NoWrite: m.NoWrite, GrowsDown: m.GrowsDown, Path: m.Path}
	if m.Shared && huge == nil {
		v.Shared = newSharedMemory(as.mem)
	}
	if huge != nil {
		v.Shared = huge
	}
	if m.Held != nil {
		m.Held.hold()
		v.Shared = m.Held
	}
	if m.FileShared != nil {
		m.FileShared.enter(as)
	}
	if m.FilePrivate != nil {
		m.FilePrivate.enter(as)
	}
	as.vmas.insert(v)
	as.mergeAt(v.Start)
	as.mergeAt(v.End)
	return addr, nil
}

// findGap finds room for size bytes starting at a multiple of align,
// top down from the mmap cursor, then from the top of the mmap area.
func (as *AddressSpace) findGap(size, align uintptr) (uintptr, bool) {
	if a, ok := as.gapBelow(as.mmapNext, size, align); ok {
		as.mmapNext = a
		return a, true
	}
	if a, ok := as.gapBelow(UserMmapTop, size, align); ok {
		as.mmapNext = a
		return a, true
	}
	return 0, false
}

// gapBelow returns the highest free range of size bytes at a multiple of
// align ending at or below top.
func (as *AddressSpace) gapBelow(top, size, align uintptr) (uintptr, bool) {
	floor := max(UserMin, pageUp(as.Brk)+PageSize) // room for brk to grow a little
	for top >= floor && top-floor >= size {
		start := (top - size) &^ (align - 1)
		if start < floor {
			break
		}
		v := as.vmas.floor(top - 1)
		if v == nil || v.End <= start {
			return start, true
		}
		top = v.Start
	}
	return 0, false
}

// Unmap removes [addr, addr+length) as munmap(2) does: the range errors of
// UserRange, ErrInvalid for a zero length, ErrNoMemory when splitting a
// VMA would pass MaxMapCount.
func (as *AddressSpace) Unmap(addr, length uintptr) error {
	start, end, err := UserRange(addr, length)
	if err != nil {
		return err
	}
	if start == end || as.splitsHugePage(start) || as.splitsHugePage(end) {
		return ErrInvalid
	}
	return as.unmap(start, end)
}

func (as *AddressSpace) unmap(start, end uintptr) error {
	if v := as.vmas.find(start); v != nil && v.Start < start && end < v.End && as.vmas.count >= MaxMapCount {
		return ErrNoMemory
	}
	as.splitAt(start)
	as.splitAt(end)
	for _, v := range as.vmas.cut(start, end) {
		as.dropPages(&v, v.Start, v.End)
		if v.Shared != nil && v.Shared.hugePrivate() {
			v.Shared.dropHugeRange(v.Offset, v.End-v.Start, false)
		}
		v.release(as)
	}
	for va := range as.poisoned {
		if va >= start && va < end {
			delete(as.poisoned, va)
		}
	}
	as.flush()
	return nil
}

// Protect changes the protection of [addr, addr+length) as mprotect(2)
// does, keeping the pages' contents. Like Linux it changes the mapped part
// that starts at addr and fails with ErrNoMemory at the first hole.
func (as *AddressSpace) Protect(addr, length uintptr, perm uint64) error {
	start, end, err := UserRange(addr, length)
	switch {
	case errors.Is(err, ErrUnaligned):
		return ErrInvalid
	case err != nil:
		return ErrNoMemory
	case start == end:
		return nil
	case as.splitsHugePage(start) || as.splitsHugePage(end):
		return ErrInvalid
	}
	mapped := start
	for v := as.vmas.find(start); v != nil && mapped < end; v = as.vmas.find(mapped) {
		if perm&PTEWrite != 0 && (v.NoWrite || v.Shared != nil && v.Shared.kernelOwned) {
			return ErrAccess
		}
		mapped = v.End
	}
	if mapped == start {
		return ErrNoMemory
	}
	stop := min(mapped, end)
	if as.vmas.count+as.splits(start, stop) > MaxMapCount {
		return ErrNoMemory
	}
	// Only the VMAs whose protection changes are split, as Linux's
	// mprotect_fixup leaves one alone when its flags stay.
	var changes [][2]uintptr
	as.eachIn(start, stop, func(v *VMA) {
		if v.Perm != perm {
			changes = append(changes, [2]uintptr{max(v.Start, start), min(v.End, stop)})
		}
	})
	if perm&PTEExec != 0 && len(changes) > 0 {
		// The pages may hold code written as data (read(2), the loader).
		as.mem.SyncICache(as.root)
	}
	for _, c := range changes {
		as.splitAt(c[0])
		as.splitAt(c[1])
		for _, v := range as.vmas.cut(c[0], c[1]) {
			v.Perm = perm
			as.eachPage(v.Start, v.End, func(_ uintptr, e *uint64) { setLeaf(e, as.entryBits(&v, *e)) })
			as.vmas.insert(v)
			as.mergeAt(v.Start)
		}
		as.mergeAt(c[1])
	}
	as.flush()
	if stop < end {
		return ErrNoMemory
	}
	return nil
}

// stackGuardGap is Linux's stack_guard_gap: a MAP_GROWSDOWN mapping grows
// no closer than this to the mapping below it.
const stackGuardGap = 256 * PageSize

// growDown extends the MAP_GROWSDOWN mapping above va down to va's page,
// as Linux's expand_downwards, and returns it; nil when no such mapping is
// above va or it would come within stackGuardGap of the one below.
func (as *AddressSpace) growDown(va uintptr) *VMA {
	v := as.vmas.ceil(va)
	if v == nil || !v.GrowsDown || va < stackGuardGap {
		return nil
	}
	page := pageDown(va)
	if below := as.vmas.floor(va); below != nil && below.End > page-stackGuardGap {
		return nil
	}
	// Nothing lies between page and v.Start, so v keeps its place in the
	// tree, which is ordered by Start.
	v.Start = page
	return v
}

// Advice is what madvise(2) asks of a range, in the terms of this
// package: the hints that change nothing here are AdviseNothing.
type Advice int

const (
	AdviseNothing       Advice = iota
	AdviseDontNeed             // drop the pages (MADV_DONTNEED)
	AdviseFree                 // they may be dropped: private anonymous memory only
	AdviseRemove               // free the backing store: shared writable mappings only
	AdviseWipeOnFork           // a forked child gets zeros: private anonymous memory only
	AdviseKeepOnFork           // undoes AdviseWipeOnFork
	AdviseDontFork             // a forked child does not get the mapping
	AdviseDoFork               // undoes AdviseDontFork
	AdvisePopulateRead         // fault the pages in for reading
	AdvisePopulateWrite        // fault them in for writing
	AdviseCold                 // MADV_COLD, MADV_PAGEOUT: hints, refused on locked memory
	AdviseDontDump             // leave it out of core dumps
	AdviseDoDump               // undoes AdviseDontDump
)

// Advise applies advice to [addr, addr+length) as madvise(2) does: VMA by
// VMA, stopping at the first that the advice does not apply to (its
// error; the ones before are advised). Holes are skipped and give
// ErrNoMemory at the end. With AdviseDontNeed private memory reads back as
// zeros (or the file's contents), shared memory keeps its data.
func (as *AddressSpace) Advise(addr, length uintptr, advice Advice) error {
	start, end, err := UserRange(addr, length)
	switch {
	case errors.Is(err, ErrOutside):
		return ErrNoMemory
	case err != nil:
		return ErrInvalid
	case start == end:
		return nil
	}
	var refused error
	stop := end
	covered := as.eachIn(start, end, func(v *VMA) {
		if refused == nil {
			if refused = v.refuses(advice, max(v.Start, start)); refused != nil {
				stop = max(v.Start, start)
			}
		}
	})
	if stop > start {
		switch advice {
		case AdviseDontNeed:
			as.eachIn(start, stop, func(v *VMA) {
				from, to := max(v.Start, start), min(v.End, stop)
				if hs := v.HugePageSize(); hs != 0 {
					to = from + (to-from)&^(hs-1) // whole huge pages only, as Linux's
				}
				as.dropPages(v, from, to)
				if v.Shared != nil && v.Shared.hugePrivate() {
					v.Shared.dropHugeRange(v.Offset+(from-v.Start), to-from, true)
				}
			})
			as.flush()
		case AdviseWipeOnFork, AdviseKeepOnFork:
			as.setFlags(start, stop, func(v *VMA) { v.WipeOnFork = advice == AdviseWipeOnFork })
		case AdviseDontFork, AdviseDoFork:
			as.setFlags(start, stop, func(v *VMA) { v.DontFork = advice == AdviseDontFork })
		case AdviseDontDump, AdviseDoDump:
			as.setFlags(start, stop, func(v *VMA) { v.DontDump = advice == AdviseDontDump })
		}
	}
	if refused != nil {
		return refused
	}
	if !covered {
		return ErrNoMemory
	}
	return nil
}

// refuses is the error advice gets on v from start on, as Linux's
// madvise_vma_behavior.
func (v *VMA) refuses(advice Advice, start uintptr) error {
	privateAnon := v.Shared == nil && v.Cache == nil
	switch advice {
	case AdviseDontNeed, AdviseFree, AdviseCold:
		if v.Locked { // Linux's can_madv_lru_vma
			return ErrInvalid
		}
	}
	if advice == AdviseDontNeed && v.HugePageSize() != 0 && (start-v.Start)%v.HugePageSize() != 0 {
		return ErrInvalid // huge memory is dropped from a page's start
	}
	switch advice {
	case AdviseFree, AdviseWipeOnFork:
		if !privateAnon {
			return ErrInvalid
		}
	case AdviseRemove:
		switch {
		case v.Locked || privateAnon:
			return ErrInvalid
		case v.Shared == nil || v.NoWrite:
			return ErrAccess
		}
	case AdvisePopulateRead, AdvisePopulateWrite:
		if v.Perm&PTERead == 0 || advice == AdvisePopulateWrite && v.Perm&PTEWrite == 0 {
			return ErrInvalid
		}
	}
	return nil
}

// setFlags applies set to the VMAs of [start, end), split at its ends
// and merged again where they continue each other.
func (as *AddressSpace) setFlags(start, end uintptr, set func(v *VMA)) {
	as.splitAt(start)
	as.splitAt(end)
	for _, v := range as.vmas.cut(start, end) {
		set(&v)
		as.vmas.insert(v)
		as.mergeAt(v.Start)
	}
	as.mergeAt(end)
}

// Sync checks [addr, addr+length) as msync(2) does, memory being the
// only copy: a hole is ErrNoMemory, at once when stopAtHole (MS_SYNC
// alone), else once the rest was looked at; invalidating a locked mapping
// is ErrBusy.
func (as *AddressSpace) Sync(addr, length uintptr, stopAtHole, invalidate bool) error {
	start, end, err := UserRange(addr, length)
	switch {
	case errors.Is(err, ErrUnaligned):
		return ErrInvalid
	case err != nil:
		return ErrNoMemory
	case start == end:
		return nil
	}
	var refused error
	at := start
	covered := as.eachIn(start, end, func(v *VMA) {
		if refused != nil {
			return
		}
		if v.Start > at && stopAtHole {
			refused = ErrNoMemory
		} else if invalidate && v.Locked {
			refused = ErrBusy
		}
		at = v.End
	})
	if refused != nil {
		return refused
	}
	if !covered {
		return ErrNoMemory
	}
	return nil
}

// Resident reports, as mincore(2) does, which pages of [addr,
// addr+length) are in memory: one byte per page, 1 when resident.
func (as *AddressSpace) Resident(addr, length uintptr) ([]byte, error) {
	start, end, err := UserRange(addr, length)
	switch {
	case errors.Is(err, ErrUnaligned):
		return nil, ErrInvalid
	case err != nil:
		return nil, ErrNoMemory
	}
	if !as.eachIn(start, end, func(*VMA) {}) {
		return nil, ErrNoMemory
	}
	vec := make([]byte, (end-start)/PageSize)
	as.eachIn(start, end, func(v *VMA) {
		lo, hi := max(v.Start, start), min(v.End, end)
		if v.Shared != nil {
			v.Shared.mu.Lock()
			for va := lo; va < hi; va += PageSize {
				if _, ok := v.Shared.pages[(v.Offset+va-v.Start)/PageSize]; ok {
					vec[(va-start)/PageSize] = 1
				}
			}
			v.Shared.mu.Unlock()
			return
		}
		as.eachPage(lo, hi, func(va uintptr, _ *uint64) { vec[(va-start)/PageSize] = 1 })
	})
	return vec, nil
}

// InCore is mincore(2)'s answer: Resident, and for a private file
// mapping also the pages the file's memory holds, mapped here or not, as
// Linux looks in the page cache.
func (as *AddressSpace) InCore(addr, length uintptr) ([]byte, error) {
	vec, err := as.Resident(addr, length)
	if err != nil {
		return nil, err
	}
	start := pageDown(addr)
	end := start + uintptr(len(vec))*PageSize
	as.eachIn(start, end, func(v *VMA) {
		if v.Cache == nil {
			return
		}
		v.Cache.mu.Lock()
		defer v.Cache.mu.Unlock()
		for va := max(v.Start, start); va < min(v.End, end); va += PageSize {
			if _, ok := v.Cache.pages[(v.Offset+va-v.Start)/PageSize]; ok {
				vec[(va-start)/PageSize] = 1
			}
		}
	})
	return vec, nil
}

// Pagemap entries' bits (Linux's /proc/PID/pagemap).
const (
	PagemapPresent    = 1 << 63
	PagemapFileShared = 1 << 61 // a file's page, or shared anonymous memory
)

// Pagemap is /proc/PID/pagemap's view of the n pages from start (the
// caller holds the address space's lock): for each page mapped by a
// present entry of the page table, PagemapPresent, with
// PagemapFileShared in a file or shared mapping; 0 for any other. No
// frame numbers are shown, as to a reader without CAP_SYS_ADMIN.
func (as *AddressSpace) Pagemap(start uintptr, n int) []uint64 {
	entries := make([]uint64, n)
	end := start + uintptr(n)*PageSize
	as.eachIn(start, end, func(v *VMA) {
		bits := uint64(PagemapPresent)
		if v.Shared != nil || v.Cache != nil {
			bits |= PagemapFileShared
		}
		as.eachPage(max(v.Start, start), min(v.End, end), func(va uintptr, _ *uint64) {
			entries[(va-start)/PageSize] = bits
		})
	})
	return entries
}

// ResidentPages counts the pages of the address space that have a frame
// (what the OOM killer weighs), without allocating.
func (as *AddressSpace) ResidentPages() int {
	n := 0
	as.vmas.each(func(v *VMA) bool {
		if v.Shared != nil {
			v.Shared.mu.Lock()
			for i := range v.Shared.pages {
				if va := v.Start + i*PageSize - v.Offset; i*PageSize >= v.Offset && va < v.End {
					n++
				}
			}
			v.Shared.mu.Unlock()
			return true
		}
		as.eachPage(v.Start, v.End, func(uintptr, *uint64) { n++ })
		return true
	})
	return n
}

// Flags of Remap, as mremap(2) takes them.
const (
	RemapMayMove   = 1
	RemapFixed     = 2
	RemapDontUnmap = 4
)

// Remap resizes or moves the mapping at [old, old+oldLen) as mremap(2)
// does: shrink in place, grow in place when the pages after it are free,
// otherwise move (RemapMayMove), or move to newAddr (RemapFixed). Pages
// move with their frames. Errors: ErrInvalid for bad flags, alignment or
// lengths; ErrFault when the old range is not inside one VMA; ErrNoMemory
// when it cannot grow or there is no room.
func (as *AddressSpace) Remap(old, oldLen, newLen uintptr, flags int, newAddr uintptr) (uintptr, error) {
	switch {
	case flags&^(RemapMayMove|RemapFixed|RemapDontUnmap) != 0,
		flags&RemapFixed != 0 && flags&RemapMayMove == 0,
		flags&RemapDontUnmap != 0 && (flags&RemapMayMove == 0 || oldLen != newLen),
		old%PageSize != 0:
		return 0, ErrInvalid
	}
	oldLen, newLen = pageUp(oldLen), pageUp(newLen)
	if newLen == 0 || oldLen == 0 {
		return 0, ErrInvalid
	}
	v := as.vmas.find(old)
	if v == nil {
		return 0, ErrFault
	}
	// Huge memory moves and shrinks by whole pages, and never grows (its
	// pages were reserved for its size), as Linux's.
	if hs := v.HugePageSize(); hs != 0 {
		oldLen, newLen = (oldLen+hs-1)&^(hs-1), (newLen+hs-1)&^(hs-1)
		if old%hs != 0 || flags&RemapFixed != 0 && newAddr%hs != 0 || newLen > oldLen {
			return 0, ErrInvalid
		}
	}
	if flags&(RemapFixed|RemapDontUnmap) != 0 {
		return as.remapTo(old, oldLen, newLen, flags, newAddr)
	}
	if oldLen >= newLen {
		if oldLen > newLen {
			if _, _, err := UserRange(old, oldLen); err != nil {
				return 0, ErrInvalid
			}
			if err := as.unmap(old+newLen, old+oldLen); err != nil {
				return 0, err
			}
		}
		return old, nil
	}
	if oldLen > v.End-old {
		return 0, ErrFault
	}
	if old+oldLen == v.End {
		if end := old + newLen; end > old && end <= MaxUserVA && as.free(v.End, end) {
			v.End = end
			as.mergeAt(end)
			return old, nil
		}
	}
	if flags&RemapMayMove == 0 {
		return 0, ErrNoMemory
	}
	if as.vmas.count+2 >= MaxMapCount-3 {
		return 0, ErrNoMemory
	}
	to, ok := as.findGap(newLen, PageSize)
	if !ok {
		return 0, ErrNoMemory
	}
	as.move(old, oldLen, to, newLen, false)
	return to, nil
}

func (as *AddressSpace) remapTo(old, oldLen, newLen uintptr, flags int, newAddr uintptr) (uintptr, error) {
	if flags&RemapFixed != 0 {
		if _, _, err := UserRange(newAddr, newLen); err != nil {
			return 0, ErrInvalid
		}
		if old+oldLen > newAddr && newAddr+newLen > old {
			return 0, ErrInvalid
		}
	}
	if as.vmas.count+2 >= MaxMapCount-3 {
		return 0, ErrNoMemory
	}
	if flags&RemapFixed != 0 {
		if err := as.unmap(newAddr, newAddr+newLen); err != nil {
			return 0, err
		}
	}
	if oldLen > newLen {
		if err := as.unmap(old+newLen, old+oldLen); err != nil {
			return 0, err
		}
		oldLen = newLen
	}
	v := as.vmas.find(old)
	if v == nil || oldLen > v.End-old {
		return 0, ErrFault
	}
	if flags&RemapDontUnmap != 0 && (v.Shared != nil || v.Cache != nil) {
		return 0, ErrInvalid
	}
	if flags&RemapFixed == 0 {
		var ok bool
		if newAddr, ok = as.findGap(newLen, PageSize); !ok {
			return 0, ErrNoMemory
		}
	}
	as.move(old, oldLen, newAddr, newLen, flags&RemapDontUnmap != 0)
	return newAddr, nil
}

// move moves [old, old+oldLen), inside one VMA, to a free range at to of
// newLen bytes, frames and all. With keep, the old range stays mapped, empty.
func (as *AddressSpace) move(old, oldLen, to, newLen uintptr, keep bool) {
	as.splitAt(old)
	as.splitAt(old + oldLen)
	v := as.vmas.cut(old, old+oldLen)[0]
	moved := v
	moved.Start, moved.End = to, to+newLen
	as.eachPage(old, old+oldLen, func(va uintptr, e *uint64) {
		pte := *e
		*e = 0
		if !as.mapPage(to+(va-old), pteAddr(pte), pte&leafAccess) && v.Shared == nil && !filePage(pte) && as.refs.drop(pteAddr(pte)) {
			as.mem.FreeFrame(pteAddr(pte)) // no page table for it: the page is lost, as on OOM
		}
	})
	as.vmas.insert(moved)
	as.mergeAt(moved.Start)
	as.mergeAt(moved.End)
	if keep { // private memory only (remapTo): no reference to take
		as.vmas.insert(v)
		as.mergeAt(v.Start)
		as.mergeAt(v.End)
	} // else the moved VMA took over v's reference to its shared memory
	as.flush()
}

// SharedOffset returns the shared memory (MAP_SHARED, anonymous or a
// file's) that va lies in and va's offset in it; nil for private memory or
// none.
func (as *AddressSpace) SharedOffset(va uintptr) (*SharedMemory, uintptr) {
	v := as.vmas.find(va)
	if v == nil || v.Shared == nil {
		return nil, 0
	}
	return v.Shared, v.Offset + (va - v.Start)
}

// noteTruncation records that mem's pages from page on are past the end
// of its file; the truncating task calls it. One entry per file keeps the
// list short however often a process that does not run sees it shrink.
func (as *AddressSpace) noteTruncation(mem *SharedMemory, page uintptr) {
	as.truncMu.Lock()
	defer as.truncMu.Unlock()
	as.truncPending.Store(true)
	for i := range as.truncated {
		if tr := &as.truncated[i]; tr.mem == mem {
			tr.page = min(tr.page, page)
			return
		}
	}
	as.truncated = append(as.truncated, truncation{mem, page})
}

// TruncationPending reports whether a mapped file was truncated since
// DropTruncated last ran; it takes no lock.
func (as *AddressSpace) TruncationPending() bool { return as.truncPending.Load() }

// DropTruncated unmaps the pages of truncated files past their new ends,
// private copies too, so that touching them faults (ErrBus) as on Linux.
// The run loop calls it before user code runs, when TruncationPending.
func (as *AddressSpace) DropTruncated() {
	as.truncMu.Lock()
	list := as.truncated
	as.truncated = nil
	as.truncPending.Store(false)
	as.truncMu.Unlock()
	for _, tr := range list {
		as.vmas.each(func(v *VMA) bool {
			if v.Shared != tr.mem && v.Cache != tr.mem {
				return true
			}
			from := v.Start
			if end := tr.page * PageSize; end > v.Offset {
				if end-v.Offset >= v.End-v.Start {
					return true
				}
				from += end - v.Offset
			}
			as.dropPages(v, from, v.End)
			return true
		})
	}
	as.flush()
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

// SetBrk moves the program break as brk(2) does, returning the new break,
// or the old one when brk is below the start, or the heap would leave user
// memory or come closer than a page to a mapping (Linux's guard).
func (as *AddressSpace) SetBrk(brk uintptr) uintptr {
	if brk < as.BrkBase || brk > MaxUserVA-PageSize {
		return as.Brk
	}
	oldEnd, newEnd := pageUp(as.Brk), pageUp(brk)
	switch {
	case newEnd > oldEnd:
		if !as.free(oldEnd, newEnd+PageSize) || as.vmas.count > MaxMapCount {
			return as.Brk
		}
		as.vmas.insert(VMA{Start: oldEnd, End: newEnd, Perm: PTERead | PTEWrite})
		as.mergeAt(oldEnd)
	case newEnd < oldEnd:
		if as.unmap(newEnd, oldEnd) != nil {
			return as.Brk
		}
	}
	as.Brk = brk
	return brk
}

// Fault handles a page fault from user mode at va: it backs the page with
// a frame, copies a copy-on-write page on a write, or refreshes a stale
// entry, when the VMA allows the access; ErrFault otherwise.
func (as *AddressSpace) Fault(va uintptr, access Access) error {
	v := as.vmas.find(va)
	if v == nil {
		v = as.growDown(va)
	}
	if v == nil || !allows(v.Perm, access) {
		return ErrFault
	}
	page := pageDown(va)
	e := as.pte(page)
	if e == nil {
		if v.Uffd != nil || as.poisoned != nil {
			if err := as.userfault(v, page, va, access); err != nil {
				return err
			}
		}
		if v.Cache != nil && access != Write {
			return as.mapWindow(v, page)
		}
		if err := as.back(v, page); err != nil || v.Cache == nil {
			return err
		}
		// A private file mapping's write copies the file's page it maps.
		e = as.pte(page)
	}
	if access == Write && v.Shared == nil {
		return as.unshare(v, page, e)
	}
	setLeaf(e, as.entryBits(v, *e))
	as.mem.FlushPage(as.root, page)
	return nil
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

// back maps a frame at the absent page va of v: shared memory's, the
// file's own (read-only) for a private file mapping, or a new one.
func (as *AddressSpace) back(v *VMA, va uintptr) error {
	var pa uintptr
	off := v.Offset + (va - v.Start)
	switch {
	case v.Shared != nil || v.Cache != nil:
		mem := v.Shared
		if mem == nil {
			mem = v.Cache
		}
		var err error
		if pa, err = mem.frame(off / PageSize); err != nil {
			return err
		}
	default:
		if pa = as.mem.AllocFrame(); pa == 0 {
			return ErrNoMemory
		}
	}
	if v.Perm&PTEExec != 0 {
		as.mem.SyncICache(as.root)
	}
	if !as.mapPage(va, pa, as.leafBits(v, pa, v.Cache != nil)) {
		if v.Shared == nil && v.Cache == nil {
			as.mem.FreeFrame(pa)
		}
		return ErrNoMemory
	}
	// An absent page became present: no fence. A processor that cached
	// the entry as invalid faults again, and Fault refreshes the entry
	// and fences then (Linux's flush_tlb_fix_spurious_fault); under QEMU
	// a fence empties the hart's whole TLB and its cache of jump targets.
	return nil
}

// unshare gives the private page at va, mapped by e, a frame of its own
// if fork shared it or it is the file's, and the VMA's access.
func (as *AddressSpace) unshare(v *VMA, va uintptr, e *uint64) error {
	if pa, file := pteAddr(*e), filePage(*e); file || as.refs.shared(pa) {
		n := as.mem.AllocFrame()
		if n == 0 {
			return ErrNoMemory
		}
		copy((*[PageSize]byte)(Ptr(n))[:], (*[PageSize]byte)(Ptr(pa))[:])
		if v.Perm&PTEExec != 0 {
			as.mem.SyncICache(as.root)
		}
		*e = makePTE(n, *e&0x3ff&^pteFilePage)
		setLeaf(e, as.leafBits(v, n, false))
		as.mem.FlushPage(as.root, va)
		if !file && as.refs.drop(pa) {
			as.mem.FreeFrame(pa)
		}
		return nil
	}
	setLeaf(e, as.leafBits(v, pteAddr(*e), false))
	as.mem.FlushPage(as.root, va)
	return nil
}

// zeroPage is what the kernel reads from a private anonymous page never
// touched: reading user memory does not give it a frame (a write(2) from a
// large untouched mapping must not fill RAM), as Linux's zero page.
var zeroPage [PageSize]byte

// pageFor returns the page behind va, backing it if the VMA allows access
// (or, with force, whatever its protection) and giving a copy-on-write page
// its own frame before a write. A read of an absent private anonymous page
// is the zero page.
func (as *AddressSpace) pageFor(va uintptr, access Access, force bool) (*[PageSize]byte, error) {
	v := as.vmas.find(va)
	if v == nil {
		v = as.growDown(va)
	}
	if v == nil || (!force && !allows(v.Perm, access)) {
		return nil, ErrFault
	}
	page := pageDown(va)
	e := as.pte(page)
	if e == nil {
		if _, ok := as.poisoned[page]; ok {
			return nil, ErrFault
		}
		if access == Read && v.Shared == nil && v.Cache == nil {
			return &zeroPage, nil
		}
		if err := as.back(v, page); errors.Is(err, ErrBus) {
			return nil, ErrFault
		} else if err != nil {
			return nil, err
		}
		e = as.pte(page)
	}
	// A writable entry maps a frame of this address space's own (a shared
	// or file frame is mapped read-only), as it is for the program's stores.
	if access == Write && v.Shared == nil && *e&PTEWrite == 0 && (filePage(*e) || as.refs.shared(pteAddr(*e))) {
		if err := as.unshare(v, page, e); err != nil {
			return nil, err
		}
	}
	return (*[PageSize]byte)(Ptr(pteAddr(*e))), nil
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
	err := as.copy(va, data, Write, true)
	as.mem.SyncICache(as.root) // the loader's code; no thread runs a new table yet
	return err
}

func (as *AddressSpace) copy(va uintptr, buf []byte, access Access, force bool) error {
	for len(buf) > 0 {
		page, err := as.pageFor(va, access, force)
		if err != nil {
			return err
		}
		n := min(uintptr(len(buf)), PageSize-va%PageSize)
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

// ForceCopy reads or writes user memory at va as a debugger does
// (ptrace's PEEK and POKE, Linux's FOLL_FORCE): whatever the protection,
// except that a shared mapping its protection does not let be written is
// not written, having no private copy to take the change.
func (as *AddressSpace) ForceCopy(va uintptr, buf []byte, write bool) error {
	if !write {
		return as.copy(va, buf, Read, true)
	}
	for a := va; a < va+uintptr(len(buf)); a = pageDown(a) + PageSize {
		if v := as.vmas.find(a); v != nil && v.Shared != nil && !allows(v.Perm, Write) {
			return ErrFault
		}
	}
	err := as.copy(va, buf, Write, true)
	as.mem.SyncICache(as.root) // it may be a breakpoint in the text
	return err
}

// CopyInString reads a NUL-terminated string of at most max bytes.
func (as *AddressSpace) CopyInString(va uintptr, max int) (string, error) {
	return as.copyInString(va, max, nil)
}

// CopyInPath is CopyInString for a path a system call names: a path as
// one of the last few copied in is that same string again, allocated
// once (nginx opens its files by the same names at each request). The
// caller holds the lock CopyInString needs, which guards them too.
func (as *AddressSpace) CopyInPath(va uintptr, max int) (string, error) {
	return as.copyInString(va, max, &as.recentPaths)
}

// recentStrings are the last short strings copied in, in a ring: the few
// bytes each keeps bound what a process holds.
type recentStrings struct {
	s    [8]string
	next int
}

// recentStringMax is the longest string kept.
const recentStringMax = 255

// get returns b as a string, one of the recent ones if it is one.
func (r *recentStrings) get(b []byte) string {
	if len(b) > recentStringMax {
		return string(b)
	}
	for _, s := range r.s {
		if s == string(b) { // compared without a copy
			return s
		}
	}
	s := string(b)
	r.s[r.next] = s
	r.next = (r.next + 1) % len(r.s)
	return s
}

// copyInString is CopyInString, taking a string that fits in one page
// from recent when it is given.
func (as *AddressSpace) copyInString(va uintptr, max int, recent *recentStrings) (string, error) {
	var out []byte
	for len(out) < max {
		page, err := as.pageFor(va, Read, false)
		if err != nil {
			return "", err
		}
		off := va % PageSize
		chunk := page[off:min(PageSize, off+uintptr(max-len(out)))]
		if end := bytes.IndexByte(chunk, 0); end >= 0 {
			if out == nil { // the whole string in one page: one copy
				if recent != nil {
					return recent.get(chunk[:end]), nil
				}
				return string(chunk[:end]), nil
			}
			return string(append(out, chunk[:end]...)), nil
		}
		out = append(out, chunk...)
		va += uintptr(len(chunk))
	}
	return "", ErrInvalid
}

// DetachSegment unmaps, as shmdt(2), the mappings of the System V segment
// that is mapped from its start at addr: the first mapping at or above
// addr that maps a segment (segmentSize reports its size) at its offset
// from addr, and the mappings of the same segment laid out from addr
// within its size. ErrInvalid when there is none.
func (as *AddressSpace) DetachSegment(addr uintptr, segmentSize func(*SharedMemory) (uintptr, bool)) (*SharedMemory, error) {
	var seg *SharedMemory
	var ranges [][2]uintptr
	size := uintptr(0)
	atOffset := func(v *VMA) bool { return v.Shared != nil && v.Start-addr == v.Offset }
	for v := as.vmas.ceil(addr); v != nil; v = as.vmas.ceil(v.End) {
		if seg == nil {
			if !atOffset(v) {
				continue
			}
			n, ok := segmentSize(v.Shared)
			if !ok {
				continue
			}
			seg, size = v.Shared, pageUp(n)
			ranges = append(ranges, [2]uintptr{v.Start, v.End})
			continue
		}
		if v.End-addr > size {
			break
		}
		if v.Shared == seg && atOffset(v) {
			ranges = append(ranges, [2]uintptr{v.Start, v.End})
		}
	}
	if seg == nil {
		return nil, ErrInvalid
	}
	for _, r := range ranges {
		as.unmap(r[0], r[1])
	}
	return seg, nil
}

// MapsAtOrAbove reports whether a mapping ends above addr (Linux's
// find_vma finds one).
func (as *AddressSpace) MapsAtOrAbove(addr uintptr) bool {
	found := false
	as.vmas.each(func(v *VMA) bool {
		found = v.End > addr
		return !found
	})
	return found
}

// MapsKernelMemory reports whether the page at addr maps memory the
// kernel owns (NewKernelMemory: the vDSO's data page).
func (as *AddressSpace) MapsKernelMemory(addr uintptr) bool {
	v := as.vmas.find(addr)
	return v != nil && v.Shared != nil && v.Shared.kernelOwned
}

// SharedRange returns the first of the VMAs covering all of [start, end)
// one after the other and mapping one shared memory: what
// remap_file_pages(2) may map again at other offsets. False when a page is
// unmapped or private, or the VMAs map different memory or the kernel's.
func (as *AddressSpace) SharedRange(start, end uintptr) (VMA, bool) {
	v := as.vmas.find(start)
	if v == nil || v.Shared == nil || v.Shared.kernelOwned {
		return VMA{}, false
	}
	for at := v.End; at < end; {
		w := as.vmas.find(at)
		if w == nil || w.Shared != v.Shared {
			return VMA{}, false
		}
		at = w.End
	}
	return *v, true
}
