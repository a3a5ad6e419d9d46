package loader

import (
	"sync"
	"sync/atomic"
	"unsafe"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/mm"
)

// The vDSO: a small ELF shared object that exec maps into every address
// space and names in the auxiliary vector (AT_SYSINFO_EHDR), as Linux does
// on riscv64. glibc (static and dynamic) and Go's runtime look up its
// symbols, version LINUX_4.15, and call them instead of trapping: the clock
// functions read the time CSR (U-mode may: mcounteren.TM) and convert it
// with the offsets the kernel keeps in the data page below the code.
// Handlers of signals return to its __vdso_rt_sigreturn.
//
// internal/genvdso builds the image and writes it into arch/riscv64, whose
// runtime uses it too; the data page's layout is arch's (arch.VvarSeq...).

//go:generate go run ./internal/genvdso ../../arch/riscv64/zvdso.go

// User addresses of the vDSO's data page and of its image, above the
// stack's guard gap.
const (
	VvarAddr = mm.UserStackTop + mm.PageSize
	VDSOAddr = VvarAddr + arch.VvarSize
)

// SigreturnAddr is where signal handlers return: the vDSO's
// __vdso_rt_sigreturn, "li a7, 139; ecall", the sequence unwinders
// recognise as a signal frame.
const SigreturnAddr = VDSOAddr + arch.VDSOSigreturn

// VDSO is a kernel's vDSO data pages, one per user memory (shared by the
// address spaces drawing on it), and the clock they hold. A time
// namespace with offsets has its own (Shifted), which follows its
// parent's clock.
type VDSO struct {
	mu    sync.Mutex // guards clock, pages and shifted
	clock struct{ timebase, realtime, monotonic, boottime int64 }
	pages map[mm.Memory]*mm.SharedMemory
	// shift is what a Shifted VDSO adds to its parent's monotonic and
	// boot-time offsets; shifted are the parent's Shifted VDSOs.
	shift   struct{ monotonic, boottime int64 }
	parent  *VDSO
	shifted map[*VDSO]bool
}

// NewVDSO makes a kernel's vDSO data, with no pages yet and a zero clock.
func NewVDSO() *VDSO {
	return &VDSO{pages: map[mm.Memory]*mm.SharedMemory{}, shifted: map[*VDSO]bool{}}
}

// SetClock records the time CSR's frequency and the offsets from its
// value in ns to CLOCK_REALTIME and CLOCK_MONOTONIC (CLOCK_BOOTTIME's
// too: the machine never sleeps), and updates every data page. The kernel
// calls it at boot and whenever a clock is set.
func (v *VDSO) SetClock(timebase uint64, realtimeOffset, monotonicOffset int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clock.timebase, v.clock.realtime = int64(timebase), realtimeOffset
	v.clock.monotonic, v.clock.boottime = monotonicOffset, monotonicOffset
	v.updateLocked()
}

// updateLocked rewrites v's data pages and its Shifted VDSOs' from v's
// clock; v.mu is held.
func (v *VDSO) updateLocked() {
	for _, s := range v.pages {
		v.writeVvar(s)
	}
	for c := range v.shifted {
		c.follow(v.clock)
	}
}

// follow sets a Shifted VDSO's clock from its parent's.
func (v *VDSO) follow(parent struct{ timebase, realtime, monotonic, boottime int64 }) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clock = parent
	v.clock.monotonic += v.shift.monotonic
	v.clock.boottime += v.shift.boottime
	v.updateLocked()
}

// Shifted returns data pages whose CLOCK_MONOTONIC and CLOCK_BOOTTIME are
// v's moved by the offsets in ns (a time namespace's), until Release.
func (v *VDSO) Shifted(monotonic, boottime int64) *VDSO {
	c := NewVDSO()
	c.parent = v
	c.shift.monotonic, c.shift.boottime = monotonic, boottime
	v.mu.Lock()
	defer v.mu.Unlock()
	v.shifted[c] = true
	c.follow(v.clock)
	return c
}

// Release drops a Shifted VDSO: it follows its parent no more, and its
// pages go with the last mapping of them.
func (v *VDSO) Release() {
	v.parent.mu.Lock()
	delete(v.parent.shifted, v)
	v.parent.mu.Unlock()
	v.mu.Lock()
	defer v.mu.Unlock()
	for mem, s := range v.pages {
		s.Release()
		delete(v.pages, mem)
	}
}

// writeVvar writes the clock into the data page of s; v.mu is held.
func (v *VDSO) writeVvar(s *mm.SharedMemory) {
	pa := s.Frame(0)
	if pa == 0 {
		return
	}
	word := func(off uintptr) *uint64 { return (*uint64)(unsafe.Add(mm.Ptr(pa), off)) }
	seq := atomic.LoadUint64(word(arch.VvarSeq))
	atomic.StoreUint64(word(arch.VvarSeq), seq+1)
	atomic.StoreUint64(word(arch.VvarTimebase), uint64(v.clock.timebase))
	atomic.StoreUint64(word(arch.VvarRealtime), uint64(v.clock.realtime))
	atomic.StoreUint64(word(arch.VvarMonotonic), uint64(v.clock.monotonic))
	atomic.StoreUint64(word(arch.VvarBoottime), uint64(v.clock.boottime))
	atomic.StoreUint64(word(arch.VvarSeq), seq+2)
}

// vvarFor returns the data page shared by the address spaces of mem.
func (v *VDSO) vvarFor(mem mm.Memory) (*mm.SharedMemory, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s, ok := v.pages[mem]
	if !ok {
		s = mm.NewKernelMemory(mem)
		if s.Frame(0) == 0 {
			return nil, mm.ErrNoMemory
		}
		v.writeVvar(s)
		v.pages[mem] = s
	}
	return s, nil
}

// mapVDSO maps the data page (read-only) and the image (read-execute).
func (v *VDSO) mapVDSO(mem mm.Memory, as *mm.AddressSpace) error {
	s, err := v.vvarFor(mem)
	if err != nil {
		return err
	}
	if _, err := as.Mmap(VvarAddr, mm.PageSize, mm.Mapping{Perm: mm.PTERead, Fixed: true, Held: s}); err != nil {
		return err
	}
	image := arch.VDSOImage()
	size := (uintptr(len(image)) + mm.PageSize - 1) &^ (mm.PageSize - 1)
	if _, err := as.Map(VDSOAddr, size, mm.PTERead|mm.PTEExec, true); err != nil {
		return err
	}
	return as.Populate(VDSOAddr, image)
}

// AdjustRealtime moves CLOCK_REALTIME by delta ns in every data page
// (clock_settime, settimeofday).
func (v *VDSO) AdjustRealtime(delta int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clock.realtime += delta
	v.updateLocked()
}

// JoinTimeNamespace maps v's data page in place of the one as maps (a
// process that entered a time namespace, as Linux's vdso_join_timens);
// an address space whose data page is gone (munmap) gets none.
func (v *VDSO) JoinTimeNamespace(mem mm.Memory, as *mm.AddressSpace) error {
	if !as.MapsKernelMemory(VvarAddr) {
		return nil
	}
	s, err := v.vvarFor(mem)
	if err != nil {
		return err
	}
	_, err = as.Mmap(VvarAddr, mm.PageSize, mm.Mapping{Perm: mm.PTERead, Fixed: true, Held: s})
	return err
}
