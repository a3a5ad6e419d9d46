//go:build riscv64

package riscv64

import (
	"sync/atomic"
	"unsafe"
)

// The kernel's own Go runtime reads the clock through a vDSO, as a program
// on Linux does, instead of trapping for every nanotime: the runtime finds
// it through AT_SYSINFO_EHDR in the auxiliary vector that Entry builds.
// It is the user programs' vDSO (kernel/loader/vdso.go builds it; cmd/kimage
// writes it into the linked kernel, see internal/kimage), here preceded
// by its own data page: the code reaches the page pc-relatively, one page
// below the image. M-mode fetches the code at its physical address; its
// loads of the data page go through the kernel's identity mapping.

// Offsets in the data page, as kernel/loader/vdso.go lays it out.
const (
	kvvarSeq      = 0
	kvvarTimebase = 8
	kvvarRealtime = 16
	kvvarMonotone = 24

	kernelVDSOSize = 2 * 4096 // the data page, then at most a page of image
	// KernelVDSOMarker is the image page's first word until cmd/kimage
	// writes the image there: "kvdso" and zeros.
	KernelVDSOMarker = 0x6f_7364_766b
)

// kernelVDSO holds the data page and the image. Initialised data, so
// that the image cmd/kimage writes is in the ELF file and loaded with it.
var kernelVDSO = [kernelVDSOSize / 8]uint64{4096 / 8: KernelVDSOMarker}

// kernelVDSOImage is the image's address for the auxiliary vector, or 0
// when the kernel was linked without one (then the runtime traps).
var kernelVDSOImage uintptr

// initKernelVDSO fills the data page and publishes the image when cmd/kimage
// put one there. It runs in earlyInit, before the runtime reads the auxv.
//
//go:nosplit
func initKernelVDSO() {
	if uint32(kernelVDSO[4096/8]) != 0x464c457f { // "\x7fELF"
		return
	}
	kernelVDSO[kvvarTimebase/8] = timebase
	// CLOCK_MONOTONIC is the time CSR in ns, as rtClockGettime answers.
	kernelVDSO[kvvarMonotone/8] = 0
	kernelVDSOImage = uintptr(unsafe.Pointer(&kernelVDSO[4096/8]))
}

// setKernelVDSOWallClock publishes a new CLOCK_REALTIME offset under the
// data page's sequence number: odd while it changes.
//
//go:nosplit
func setKernelVDSOWallClock(offsetNs int64) {
	seq := &kernelVDSO[kvvarSeq/8]
	s := atomic.LoadUint64(seq)
	atomic.StoreUint64(seq, s+1)
	atomic.StoreUint64(&kernelVDSO[kvvarRealtime/8], uint64(offsetNs))
	atomic.StoreUint64(seq, s+2)
}

// RuntimeClockTraps returns how many times the kernel's runtime trapped to
// read a clock: 0 when it found its vDSO.
func RuntimeClockTraps() uint64 {
	old := disableInterrupts()
	n := rtClockTraps
	restoreInterrupts(old)
	return n
}
