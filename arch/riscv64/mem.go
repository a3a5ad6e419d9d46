//go:build riscv64

package riscv64

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// The kernel's half of every address space, [kernelHalf, kernelHalfEnd)
// of Sv39's lower half (user memory lies below, mm.MaxUserVA): the direct
// map of RAM and devices (gigapages at directMap + physical address; the
// ELF our own M-mode code boots is linked there), then the runtime's mmap
// window, demand-paged, and the half's last gigabyte, where the Image is
// linked (the Makefile's IMAGE_LDFLAGS) and mapped wherever the firmware
// loaded it (imageTable). The runtime reserves far more address space than it
// touches (a 32 MiB arena index, page-allocator summaries of hundreds of
// MiB), so the window hands out address space freely and a frame backs a
// page only when the page is first touched. Every root entry of the half
// exists from boot (the window's next-level tables are made then), so a
// user table copies them once and sees every later kernel mapping. No
// entry has the U bit: U-mode cannot touch them.
const (
	kernelHalf     = mm.KernelDirectMap
	kernelHalfEnd  = 0x40_0000_0000
	directMapSize  = 0x10_0000_0000             // 64 GiB of physical addresses
	kvaBase        = kernelHalf + directMapSize // start of the runtime's mmap window
	kvaLimit       = kvaBase + 0x8_0000_0000    // 32 GiB of it
	kernelPagePerm = mm.PTERead | mm.PTEWrite | mm.PTEAccessed | mm.PTEDirty | mm.PTEGlobal
	directMapPerm  = kernelPagePerm | mm.PTEExec
)

var (
	frames     mm.Frames
	kernelRoot uintptr
	kernelSatp uint64
	kvaNext    uintptr
	ramBase    uintptr
	ramSize    uintptr
	initrdBase uintptr
	initrdEnd  uintptr
)

// earlyInit runs on the boot stack before the Go runtime, in S-mode on
// Entry's boot table: it reads the device tree, gives free RAM to the frame
// allocator, builds the kernel page table and switches to it, enables
// interrupts, and makes the boot code thread 0.
//
//go:nosplit
func earlyInit() {
	dtb := bootDTB
	bootNode := initHarts(dtb)
	h := &harts[0]
	h.current = 0
	findConsole(dtb)
	if sbiBoot {
		initSBI(dtb, bootNode)
	}

	var ok bool
	if ramBase, ramSize, ok = fdtReg(dtb, "memory@"); !ok {
		fatal("the device tree has no memory node")
	}
	// The CLINT serves our own M-mode code (sendSoft, machineTrap), whose
	// Entry found it where QEMU's virt machine has it; under SBI firmware
	// the kernel never touches it.
	if b, _, ok := fdtCompatibleReg(dtb, "riscv,clint0"); ok {
		clintBase = b
	} else if b, _, ok := fdtCompatibleReg(dtb, "sifive,clint0"); ok {
		clintBase = b
	}
	if b, _, ok := fdtCompatibleReg(dtb, "sifive,test0"); ok {
		testBase = b
	}
	if f, ok := fdtNumber(dtb, "cpus", "timebase-frequency"); ok && f != 0 {
		timebase = f
	}
	quantumTicks = timebase / 100
	initKernelVDSO()
	if s, ok := fdtNumber(dtb, "chosen", "linux,initrd-start"); ok {
		if e, ok := fdtNumber(dtb, "chosen", "linux,initrd-end"); ok && e > s {
			initrdBase, initrdEnd = uintptr(s), uintptr(e)
		}
	}

	// Free RAM: after the kernel image (what lies below it is the
	// firmware's, or our trampoline's), minus the device tree, the initrd
	// and what the tree reserves.
	var reserved [16]memRange
	reserved[0] = memRange{dtb, dtb + fdtSize(dtb)}
	reserved[1] = memRange{initrdBase, initrdEnd}
	n := 2 + fdtReserved(dtb, reserved[2:])
	addFreeRAM(kernelEnd()-imageOffset, ramBase+ramSize, reserved[:n])

	kernelRoot = frames.Alloc()
	mm.MapGiga(kernelRoot, directMap, 0, directMapPerm) // devices
	for pa := ramBase &^ (mm.GigaPageSize - 1); pa < ramBase+ramSize && pa < directMapSize; pa += mm.GigaPageSize {
		mm.MapGiga(kernelRoot, directMap+pa, pa, directMapPerm)
	}
	mapImage()
	for va := uintptr(kvaBase); va < kvaLimit; va += mm.GigaPageSize {
		t := frames.Alloc()
		if t == 0 {
			fatal("out of memory for the kernel page table")
		}
		mm.MapTable(kernelRoot, va, t)
	}
	kernelSatp = mm.SatpSv39(kernelRoot)
	probeASIDs() // leaves the kernel table loaded
	sfenceVMA()
	kvaNext = kvaBase

	setTimer(h, ^uint64(0))
	h.newSlice = true
	clearSoft(h)
	writeSie(1<<irqSoft | 1<<irqTimer | 1<<irqExternal)

	t := &threads[0]
	t.state = threadRunning
	t.tid = 1
	t.frame.Status = kernelStatus | sstatusSPIE
	h.save = uintptr(unsafe.Pointer(&t.frame))
	kernelTableLoaded(h)
	nextTID = 2
	// The other harts may start: they need the kernel page table, the
	// trap stacks and the device addresses found above.
	atomic.StoreUint32(&smpRelease, 1)
	startHarts()
}

// mapImage gives the kernel table the Image's gigabyte, with the table
// bootPaging filled; the ELF our own M-mode code boots lies in the direct map.
//
//go:nosplit
func mapImage() {
	if imageOffset != directMap {
		table := (uintptr(unsafe.Pointer(&imageTable)) + pageMask) &^ pageMask
		mm.MapTable(kernelRoot, kernelStart(), table-imageOffset)
	}
}

// addFreeRAM gives [start, end) minus the reserved ranges to the frame
// allocator (it sorts them).
//
//go:nosplit
func addFreeRAM(start, end uintptr, reserved []memRange) {
	for i := 1; i < len(reserved); i++ {
		for j := i; j > 0 && reserved[j].start < reserved[j-1].start; j-- {
			reserved[j], reserved[j-1] = reserved[j-1], reserved[j]
		}
	}
	for _, r := range reserved {
		if r.end <= r.start || r.end <= start {
			continue
		}
		if r.start > start {
			frames.AddRange(start, min(r.start, end))
		}
		start = r.end
	}
	if start < end {
		frames.AddRange(start, end)
	}
}

// unmapKernel removes the kernel's pages in [start, end) and makes every
// hart forget them before their frames go back to the allocator: another
// hart's stale translation would otherwise write into a frame that Go code
// there may already have been given.
//
//go:nosplit
func unmapKernel(start, end uintptr) {
	if mm.Invalidate(kernelRoot, start, end) == 0 {
		return
	}
	kernelShootdown(thisHart())
	mm.Release(kernelRoot, start, end, &frames)
}

// kernelFault serves a page fault taken by a kernel thread: a first touch
// of the mmap window gets a zeroed frame. It reports false for any other
// address, which is a kernel bug.
//
//go:nosplit
func kernelFault(va uintptr) bool {
	if va < kvaBase || va >= kvaNext {
		return false
	}
	if _, _, ok := mm.Translate(kernelRoot, va); ok {
		// Another hart faulted on the same page first, or this hart's
		// translation cache kept the entry invalid (below).
		sfenceVMA()
		return true
	}
	pa := frames.Alloc()
	if pa == 0 {
		fatal("out of memory for the kernel heap")
	}
	if !mm.Map(kernelRoot, va&^(mm.PageSize-1), pa, kernelPagePerm, &frames) {
		fatal("out of memory for kernel page tables")
	}
	// No fence: an implementation that caches invalid entries faults
	// again and fences above (Linux's flush_tlb_fix_spurious_fault). QEMU
	// caches none, and its sfence.vma, whatever its operands, empties the
	// hart's whole TLB and its cache of jump targets; the heap grows by a
	// page or two per fresh connection until it reaches its goal.
	return true
}

// kva returns the physical address behind a kernel virtual address, faulting
// the page in when the runtime has not touched it yet; 0 when va is invalid.
//
//go:nosplit
func kva(va uintptr) uintptr {
	if va < kvaBase || va >= kvaLimit {
		if va >= directMap+ramBase && va < directMap+ramBase+ramSize {
			return va - directMap
		}
		if va >= kernelStart() && va < kernelEnd() {
			return va - imageOffset
		}
		return 0
	}
	pa, _, ok := mm.Translate(kernelRoot, va)
	if !ok {
		if !kernelFault(va) {
			return 0
		}
		pa, _, _ = mm.Translate(kernelRoot, va)
	}
	return pa
}

//go:nosplit
func storeU64(va uintptr, v uint64) bool {
	pa := kva(va)
	if pa == 0 {
		return false
	}
	*(*uint64)(mm.Ptr(pa)) = v
	return true
}

//go:nosplit
func loadU64(va uintptr) (uint64, bool) {
	pa := kva(va)
	if pa == 0 {
		return 0, false
	}
	return *(*uint64)(mm.Ptr(pa)), true
}

// mmap flags and advice (Linux).
const (
	pageMask       = mm.PageSize - 1
	maxMmapRequest = kvaLimit - kvaBase
)

//go:nosplit
func rtMmap(addr, length, flags uintptr) int64 {
	if flags&unix.MAP_ANONYMOUS == 0 {
		return -errENODEV
	}
	if length == 0 || length > maxMmapRequest {
		return -errEINVAL
	}
	length = (length + pageMask) &^ pageMask
	if flags&unix.MAP_FIXED != 0 {
		if addr&pageMask != 0 || addr < kvaBase || addr+length > kvaNext {
			return -errENOMEM
		}
		unmapKernel(addr, addr+length)
		return int64(addr)
	}
	if kvaNext+length > kvaLimit {
		return -errENOMEM
	}
	p := kvaNext
	kvaNext += length
	return int64(p)
}

//go:nosplit
func rtMunmap(addr, length uintptr) int64 {
	if addr&pageMask != 0 {
		return -errEINVAL
	}
	end := (addr + length + pageMask) &^ pageMask
	if addr >= kvaBase && end <= kvaNext {
		unmapKernel(addr, end)
	}
	return 0
}

//go:nosplit
func rtMadvise(addr, length, advice uintptr) int64 {
	end := (addr + length) &^ pageMask
	if (advice == unix.MADV_DONTNEED || advice == unix.MADV_FREE) && addr&pageMask == 0 &&
		addr >= kvaBase && end <= kvaNext {
		// The range reads as zero again on its next touch, and its frames are free now.
		unmapKernel(addr, end)
	}
	return 0
}

// unusedImage is a range of the kernel's BSS that nothing touches unless
// the kernel's crypto runs in FIPS 140-3 mode: cmd/kimage writes it into
// the linked image (Marker, start, end; see internal/kimage).
var unusedImage = [3]uint64{0x6567_616d_6964_6e75, 0, 0}

// ReleaseUnusedImage gives the frames of the unused BSS range to the frame
// allocator and returns how many bytes it gave. The caller must know that
// FIPS 140-3 mode is off: after this, the range's frames hold other data.
func ReleaseUnusedImage() uintptr {
	start := (uintptr(unusedImage[1]) - imageOffset + pageMask) &^ pageMask
	end := (uintptr(unusedImage[2]) - imageOffset) &^ pageMask
	if end <= start || start < ramBase || end > kernelEnd()-imageOffset {
		return 0
	}
	old := disableInterrupts()
	ok := frames.AddRange(start, end)
	restoreInterrupts(old)
	if !ok {
		return 0
	}
	return end - start
}
