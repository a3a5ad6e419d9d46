//go:build riscv64

package riscv64

import (
	"sync/atomic"
	"unsafe"
)

// The kernel's own Go runtime reads the clock through a vDSO, as a program
// on Linux does, instead of trapping for every nanotime: the runtime finds
// it through AT_SYSINFO_EHDR in the auxiliary vector that Entry builds.
// It is the user programs' vDSO (kernel/loader/internal/genvdso builds it
// into zvdso.go), in kernelVDSO after its own data page: the code reaches
// the page pc-relatively, VvarSize below the image. M-mode fetches the
// code at its physical address; its loads of the data page go through the
// kernel's identity mapping.

// kernelVDSOImage is the image's address for the auxiliary vector.
var kernelVDSOImage uintptr

// initKernelVDSO fills the data page and publishes the image. It runs in
// earlyInit, before the runtime reads the auxv.
//
//go:nosplit
func initKernelVDSO() {
	kernelVDSO.vvar[VvarTimebase/8] = timebase
	// CLOCK_MONOTONIC and CLOCK_BOOTTIME are the time CSR in ns, as
	// rtClockGettime answers.
	kernelVDSO.vvar[VvarMonotonic/8] = 0
	kernelVDSO.vvar[VvarBoottime/8] = 0
	kernelVDSOImage = uintptr(unsafe.Pointer(&kernelVDSO.image))
}

// setKernelVDSOWallClock publishes a new CLOCK_REALTIME offset under the
// data page's sequence number: odd while it changes.
//
//go:nosplit
func setKernelVDSOWallClock(offsetNs int64) {
	seq := &kernelVDSO.vvar[VvarSeq/8]
	s := atomic.LoadUint64(seq)
	atomic.StoreUint64(seq, s+1)
	atomic.StoreUint64(&kernelVDSO.vvar[VvarRealtime/8], uint64(offsetNs))
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
