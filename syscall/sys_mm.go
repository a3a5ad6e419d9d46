package syscall

import (
	"errors"
	"math"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.Brk, sysBrk)
	register(sysno.Mmap, sysMmap)
	register(sysno.Munmap, sysMunmap)
	register(sysno.Mprotect, sysMprotect)
	register(sysno.Madvise, sysMadvise)
	register(sysno.Mremap, sysMremap)
	register(sysno.Msync, sysMsync)
	register(sysno.Mincore, sysMincore)
	register(sysno.RiscvFlushIcache, sysRiscvFlushIcache)
	register(sysno.RemapFilePages, sysRemapFilePages)
}

// memErrno turns the memory manager's errors into errnos. The range
// errors of mm.UserRange default to EINVAL; calls that answer otherwise
// map them first (rangeErrno).
func memErrno(err error) unix.Errno {
	switch {
	case errors.Is(err, mm.ErrNoMemory):
		return unix.ENOMEM
	case errors.Is(err, mm.ErrFault):
		return unix.EFAULT
	case errors.Is(err, mm.ErrExists):
		return unix.EEXIST
	case errors.Is(err, mm.ErrAccess):
		return unix.EACCES
	case errors.Is(err, mm.ErrBusy):
		return unix.EBUSY
	case errors.Is(err, mm.ErrInvalid), errors.Is(err, mm.ErrUnaligned), errors.Is(err, mm.ErrWraps), errors.Is(err, mm.ErrOutside):
		return unix.EINVAL
	}
	return unix.EIO
}

func protPerm(prot uint64) uint64 {
	return mm.Perm(prot&unix.PROT_READ != 0, prot&unix.PROT_WRITE != 0, prot&unix.PROT_EXEC != 0)
}

// sysBrk implements brk(2): it returns the new break, or the old one on failure.
func sysBrk(t *kernel.Task, a Args) (uint64, error) {
	p := t.Proc
	p.Lock()
	defer p.Unlock()
	if a[0] == 0 {
		return uint64(p.AS.Brk), nil
	}
	return uint64(p.AS.SetBrk(uintptr(a[0]))), nil
}

// sysMmap implements mmap(2): anonymous private and shared memory, and
// mappings of files: shared ones map the file's page frames, which its
// reads and writes keep coherent (mm/filemem.go); private ones map the
// same frames read-only and copy a page when they first write it.
func sysMmap(t *kernel.Task, a Args) (uint64, error) {
	addr, length, prot, flags, fd, off := uintptr(a[0]), uintptr(a[1]), a[2], a[3], int(int32(a[4])), a[5]
	if off%mm.PageSize != 0 {
		return 0, unix.EINVAL
	}
	var node *fs.Node
	var path string // the mapped file's, for /proc/PID/maps
	anonymous := flags&unix.MAP_ANONYMOUS != 0
	mapType := flags & unix.MAP_TYPE
	shared := mapType == unix.MAP_SHARED || mapType == unix.MAP_SHARED_VALIDATE
	var f *fs.Description
	if !anonymous {
		var err error
		if f, err = t.Proc.Files.Get(fd); err != nil {
			return 0, err
		}
		defer f.DecRef() // the mapping holds the node, not the description
	}
	// Linux ignores flags it does not know unless MAP_SHARED_VALIDATE
	// asks it to check them. MAP_HUGETLB makes anonymous memory of huge
	// pages of a size the kernel offers; a file's mapping takes it only
	// when the file is of huge pages itself (which needs no flag).
	var huge *mm.HugePool
	var hugeFile *fs.HugeFile
	if f != nil {
		hugeFile, _ = f.File.(*fs.HugeFile)
	}
	if flags&unix.MAP_HUGETLB != 0 && hugeFile == nil {
		if !anonymous {
			return 0, unix.EINVAL
		}
		if huge = t.Kernel().HugePool(uint(flags >> unix.MAP_HUGE_SHIFT & unix.MAP_HUGE_MASK)); huge == nil {
			return 0, unix.EINVAL
		}
	}
	if length == 0 {
		return 0, unix.EINVAL
	}
	size := (length + mm.PageSize - 1) &^ (mm.PageSize - 1)
	if size == 0 {
		return 0, unix.ENOMEM
	}
	// Linux shifts the signed offset: -4096 is page offset 2^64-1.
	pgoff := uint64(int64(off) >> 12)
	if pgoff+uint64(size/mm.PageSize) < pgoff {
		return 0, unix.EOVERFLOW
	}
	// /dev/zero maps anonymous memory, which a read-only descriptor
	// can never make writable when shared.
	zeroDevice := false
	if anonymous {
		if mapType != unix.MAP_SHARED && mapType != unix.MAP_PRIVATE {
			return 0, unix.EINVAL
		}
	} else {
		if err := checkFileMapping(f, pgoff, uint64(size), prot, flags); err != nil {
			return 0, err
		}
		if nf, ok := f.NodeFile(); ok {
			node, path = nf.Node(), nf.Path()
		}
		zeroDevice = f.MapsAnonymous()
	}
	m := mm.Mapping{
		NoWrite:   !anonymous && shared && (!f.Writable() || node != nil && node.WriteSealed()),
		Perm:      protPerm(prot),
		Fixed:     flags&unix.MAP_FIXED != 0,
		NoReplace: flags&unix.MAP_FIXED_NOREPLACE != 0,
		Shared:    (anonymous || zeroDevice) && shared,
		Offset:    uintptr(off),
		Locked:    flags&unix.MAP_LOCKED != 0,
		GrowsDown: flags&unix.MAP_GROWSDOWN != 0 && anonymous && !shared,
		Path:      path,
		Huge:      huge,
		// MAP_NORESERVE reserves no huge pages (Linux's VM_NORESERVE);
		// ordinary memory is never reserved.
		HugeNoReserve: flags&unix.MAP_NORESERVE != 0,
	}
	if huge != nil {
		m.Path = "/anon_hugepage (deleted)"
	}
	p := t.Proc
	p.Lock()
	defer p.Unlock()
	if err := mapLockCheck(t, m.Locked, uint64(size)); err != nil {
		return 0, err
	}
	if hugeFile != nil {
		return mmapHugeFile(t, hugeFile, addr, length, prot, flags, m)
	}
	if !anonymous && f.MapsOwnMemory() {
		held, err := f.OwnMemory(uint64(off), uint64(size))
		if err != nil {
			return 0, err
		}
		m.Held, m.Offset = held, 0 // the memory's first page is the mapping's
	}
	if node != nil {
		fm := node.Map(func(src fs.MappedNode) fs.FileMapping { return p.AS.NewFileMemory(src) }, shared).(*mm.SharedMemory)
		if shared {
			m.FileShared = fm
		} else {
			m.FilePrivate = fm
		}
	}
	got, err := p.AS.Mmap(addr, length, m)
	if err != nil {
		if m.FileShared != nil {
			m.FileShared.Release()
		}
		if m.FilePrivate != nil {
			m.FilePrivate.ReleasePrivate()
		}
		return 0, err
	}
	// A locked mapping is faulted in, and so is one with MAP_POPULATE
	// (unless MAP_NONBLOCK); as Linux's mm_populate, a failure there
	// leaves the mapping made.
	if m.Locked || p.AS.LocksFuture() || flags&(unix.MAP_POPULATE|unix.MAP_NONBLOCK) == unix.MAP_POPULATE {
		p.AS.PopulateRange(got, got+size)
	}
	return uint64(got), nil
}

// mmapHugeFile maps a huge page file (a memfd made with MFD_HUGETLB), as
// hugetlbfs's mmap: the offset aligned to the page size (EINVAL), the
// pages of the range promised now unless MAP_NORESERVE (ENOMEM), a
// shared mapping mapping the file's own pages, a private one pages of
// its own that start as the file's, and a writable mapping reaching past
// the end growing the file. The process lock is held.
func mmapHugeFile(t *kernel.Task, f *fs.HugeFile, addr, length uintptr, prot, flags uint64, m mm.Mapping) (uint64, error) {
	pageSize, offset := f.Mem.HugePool().Size, m.Offset
	if offset%pageSize != 0 {
		return 0, unix.EINVAL
	}
	size := (length + pageSize - 1) &^ (pageSize - 1)
	if int64(offset+size) < 0 || offset+size < offset {
		return 0, unix.EINVAL // past the largest file offset, as hugetlbfs_file_mmap's loff_t check
	}
	noReserve := flags&unix.MAP_NORESERVE != 0
	m.Path, m.Huge, m.HugeNoReserve, m.Shared = f.Path(), nil, false, false
	if flags&unix.MAP_TYPE == unix.MAP_PRIVATE {
		mem, err := mm.NewHugePrivateCopy(f.Mem, offset, size, noReserve)
		if err != nil {
			return 0, unix.ENOMEM
		}
		m.HugeMemory, m.Offset = mem, 0
	} else {
		if !noReserve {
			if err := f.Mem.ReserveHuge(offset, size); err != nil {
				return 0, unix.ENOMEM
			}
		}
		m.Held = f.Mem
	}
	got, err := t.Proc.AS.Mmap(addr, length, m)
	if err != nil {
		if m.HugeMemory != nil {
			m.HugeMemory.Release()
		}
		return 0, err
	}
	if prot&unix.PROT_WRITE != 0 {
		f.Grow(int64(offset + size))
	}
	return uint64(got), nil
}

// legacyMapFlags are the flags Linux knew before MAP_SHARED_VALIDATE
// (LEGACY_MAP_MASK): the ones it accepts in a validated shared mapping of
// a file.
const legacyMapFlags = unix.MAP_SHARED | unix.MAP_PRIVATE | unix.MAP_FIXED | unix.MAP_ANONYMOUS |
	unix.MAP_DENYWRITE | unix.MAP_EXECUTABLE | mapUninitialized | unix.MAP_GROWSDOWN | unix.MAP_LOCKED |
	unix.MAP_NORESERVE | unix.MAP_POPULATE | unix.MAP_NONBLOCK | unix.MAP_STACK | unix.MAP_HUGETLB |
	unix.MAP_HUGE_MASK<<unix.MAP_HUGE_SHIFT

// mapUninitialized is MAP_UNINITIALIZED, which x/sys/unix does not name.
const mapUninitialized = 0x4000000

// checkFileMapping makes do_mmap's checks of a file mapping in Linux's
// order: an end past the largest file offset, the mapping type and its
// flags, then the description's access and whether the file maps at all.
func checkFileMapping(f *fs.Description, pgoff, size, prot, flags uint64) error {
	if f.Flags()&unix.O_PATH != 0 {
		return unix.EBADF // not an open file: Linux's fget finds none
	}
	nf, ok := f.NodeFile()
	maxSize := uint64(math.MaxUint64)
	if ok && nf.Node().Mode.IsRegular() {
		maxSize = math.MaxInt64 // MAX_LFS_FILESIZE
	}
	if size > maxSize || pgoff > (maxSize-size)>>12 {
		return unix.EOVERFLOW
	}
	switch flags & unix.MAP_TYPE {
	case unix.MAP_SHARED, unix.MAP_SHARED_VALIDATE:
		if flags&unix.MAP_TYPE == unix.MAP_SHARED_VALIDATE && flags&^legacyMapFlags != 0 {
			return unix.EOPNOTSUPP
		}
		if prot&unix.PROT_WRITE != 0 && !f.Writable() {
			return unix.EACCES
		}
		if ok && f.Writable() && nf.Node().Flags()&fs.FlagAppend != 0 {
			return unix.EACCES // an append-only file is never shared writably
		}
		if prot&unix.PROT_WRITE != 0 && ok && nf.Node().WriteSealed() {
			return unix.EPERM // a memfd sealed against writes
		}
	case unix.MAP_PRIVATE:
	default:
		return unix.EINVAL
	}
	if !f.Readable() {
		return unix.EACCES
	}
	if _, huge := f.File.(*fs.HugeFile); f.MapsAnonymous() || f.MapsOwnMemory() || huge {
		return nil
	}
	if !ok || nf.Node().IsDir() {
		return unix.ENODEV
	}
	return nil
}

// sysMunmap implements munmap(2).
func sysMunmap(t *kernel.Task, a Args) (uint64, error) {
	t.Proc.Lock()
	defer t.Proc.Unlock()
	return 0, t.Proc.AS.Unmap(uintptr(a[0]), uintptr(a[1]))
}

// protSem is PROT_SEM, which Linux accepts and ignores.
const protSem = 0x8

// sysMprotect implements mprotect(2). Linux checks the range before the
// protection: mprotect(addr, 0, bad) is 0.
func sysMprotect(t *kernel.Task, a Args) (uint64, error) {
	start, end, err := mm.UserRange(uintptr(a[0]), uintptr(a[1]))
	switch {
	case errors.Is(err, mm.ErrUnaligned):
		return 0, unix.EINVAL
	case err == nil && start == end:
		return 0, nil
	case err != nil:
		return 0, unix.ENOMEM
	case a[2]&^(unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC|protSem) != 0:
		return 0, unix.EINVAL
	}
	t.Proc.Lock()
	defer t.Proc.Unlock()
	return 0, t.Proc.AS.Protect(start, end-start, protPerm(a[2]))
}

// madviseKnown is the advice Linux accepts (MADV_NORMAL..MADV_POPULATE_WRITE,
// MADV_COLLAPSE), but KSM's: a kernel without CONFIG_KSM refuses
// MADV_MERGEABLE and MADV_UNMERGEABLE, and there is no KSM here.
func madviseKnown(advice uint64) bool {
	if advice == unix.MADV_MERGEABLE || advice == unix.MADV_UNMERGEABLE {
		return false
	}
	return advice <= unix.MADV_DONTNEED || (advice >= unix.MADV_FREE && advice <= 23) || advice == 25
}

// madviseAdvice is what each madvise advice asks of the memory; the rest
// of the known ones are hints with nothing to do here.
var madviseAdvice = map[uint64]mm.Advice{
	unix.MADV_DONTNEED:       mm.AdviseDontNeed,
	unix.MADV_FREE:           mm.AdviseFree,
	unix.MADV_REMOVE:         mm.AdviseRemove,
	unix.MADV_WIPEONFORK:     mm.AdviseWipeOnFork,
	unix.MADV_KEEPONFORK:     mm.AdviseKeepOnFork,
	unix.MADV_DONTFORK:       mm.AdviseDontFork,
	unix.MADV_DOFORK:         mm.AdviseDoFork,
	unix.MADV_POPULATE_READ:  mm.AdvisePopulateRead,
	unix.MADV_POPULATE_WRITE: mm.AdvisePopulateWrite,
	unix.MADV_COLD:           mm.AdviseCold,
	unix.MADV_PAGEOUT:        mm.AdviseCold,
	unix.MADV_DONTDUMP:       mm.AdviseDontDump,
	unix.MADV_DODUMP:         mm.AdviseDoDump,
}

// sysMadvise implements madvise(2).
func sysMadvise(t *kernel.Task, a Args) (uint64, error) {
	if !madviseKnown(a[2]) {
		return 0, unix.EINVAL
	}
	t.Proc.Lock()
	defer t.Proc.Unlock()
	return 0, t.Proc.AS.Advise(uintptr(a[0]), uintptr(a[1]), madviseAdvice[a[2]])
}

// sysMremap implements mremap(2).
func sysMremap(t *kernel.Task, a Args) (uint64, error) {
	if a[3] > 0xffffffff {
		return 0, unix.EINVAL
	}
	t.Proc.Lock()
	defer t.Proc.Unlock()
	got, err := t.Proc.AS.Remap(uintptr(a[0]), uintptr(a[1]), uintptr(a[2]), int(a[3]), uintptr(a[4]))
	return uint64(got), err
}

// sysMsync implements msync(2): memory is the only copy, so it checks.
func sysMsync(t *kernel.Task, a Args) (uint64, error) {
	flags := a[2]
	if flags&^(unix.MS_ASYNC|unix.MS_INVALIDATE|unix.MS_SYNC) != 0 || flags&unix.MS_ASYNC != 0 && flags&unix.MS_SYNC != 0 {
		return 0, unix.EINVAL
	}
	t.Proc.Lock()
	defer t.Proc.Unlock()
	return 0, t.Proc.AS.Sync(uintptr(a[0]), uintptr(a[1]), flags == unix.MS_SYNC, flags&unix.MS_INVALIDATE != 0)
}

// sysMincore implements mincore(2), a bounded chunk of pages at a time.
func sysMincore(t *kernel.Task, a Args) (uint64, error) {
	const chunk = 4096 * mm.PageSize
	addr, length, vec := uintptr(a[0]), uintptr(a[1]), a[2]
	if _, _, err := mm.UserRange(addr, length); err != nil {
		if errors.Is(err, mm.ErrUnaligned) {
			return 0, unix.EINVAL
		}
		return 0, unix.ENOMEM
	}
	for length > 0 {
		n := min(length, chunk)
		pages, err := resident(t, addr, n)
		if err != nil {
			return 0, err
		}
		if err := copyOut(t, vec, pages); err != nil {
			return 0, err
		}
		addr, length, vec = addr+n, length-n, vec+uint64(len(pages))
	}
	return 0, nil
}

// riscvFlushICacheLocal is SYS_RISCV_FLUSH_ICACHE_LOCAL, the one flag
// riscv_flush_icache takes.
const riscvFlushICacheLocal = 1

// sysRiscvFlushIcache implements riscv_flush_icache(2), which glibc's
// __riscv_flush_icache (and so __builtin___clear_cache) calls after a
// program wrote code: every hart that runs the program's threads now
// fences before it goes on, any other before it next enters the program.
// Like Linux, it ignores the range; with the LOCAL flag Linux leaves the
// other harts until they next switch to the program, which only spares
// work.
func sysRiscvFlushIcache(t *kernel.Task, a Args) (uint64, error) {
	if a[2]&^riscvFlushICacheLocal != 0 {
		return 0, unix.EINVAL
	}
	t.Proc.Lock()
	defer t.Proc.Unlock()
	t.Proc.AS.SyncICache()
	return 0, nil
}

// sysRemapFilePages implements remap_file_pages(2) as Linux has since
// 4.0: the shared mapping at start (all of [start, start+size) mapping one
// memory) is mapped again, with its protection, from page pgoff of that
// memory. A System V segment's mapping goes first, and so may the segment
// (removed, with no other attachment): then it is EINVAL and the range
// stays unmapped, as Linux's shm_mmap finds the id no more.
func sysRemapFilePages(t *kernel.Task, a Args) (uint64, error) {
	start, size, prot, pgoff := uintptr(a[0])&^(mm.PageSize-1), uintptr(a[1])&^(mm.PageSize-1), a[2], uint64(a[3])
	if prot != 0 || start+size <= start || pgoff+uint64(size/mm.PageSize) < pgoff || pgoff > math.MaxUint64/mm.PageSize {
		return 0, unix.EINVAL
	}
	ns, c := t.IPC(), t.IPCCaller()
	p := t.Proc
	p.Lock()
	defer p.Unlock()
	v, ok := p.AS.SharedRange(start, start+size)
	if !ok {
		return 0, unix.EINVAL
	}
	mem := v.Shared
	m := mm.Mapping{Perm: v.Perm, Fixed: true, Offset: uintptr(pgoff * mm.PageSize), NoWrite: v.NoWrite}
	if _, segment := ns.IsSegment(mem); segment {
		if err := p.AS.Unmap(start, size); err != nil {
			return 0, err
		}
		at, err := ns.ShmReattach(mem)
		if err != nil {
			return 0, err
		}
		m.Held = mem
		_, err = p.AS.Mmap(start, size, m)
		ns.ShmAttached(at, err == nil, c)
		return 0, err
	}
	// A reference of the call's own keeps the memory while the old
	// mappings go; a file's becomes the new mapping's.
	if src := mem.Source(); src != nil {
		src.Lock()
		mem.HoldLocked()
		src.Unlock()
		m.FileShared = mem
	} else {
		mem.HoldLocked()
		defer mem.Release()
		m.Held = mem
	}
	if _, err := p.AS.Mmap(start, size, m); err != nil {
		if m.FileShared != nil {
			mem.Release()
		}
		return 0, err
	}
	return 0, nil
}

// resident is mincore's answer for one chunk, read under the address
// space's lock.
func resident(t *kernel.Task, addr, n uintptr) ([]byte, error) {
	t.Proc.Lock()
	defer t.Proc.Unlock()
	return t.Proc.AS.InCore(addr, n)
}
