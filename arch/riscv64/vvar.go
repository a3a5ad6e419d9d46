package riscv64

// The vDSO's data page: user programs get one from kernel/loader, the
// kernel's own runtime has its own in kernelVDSO (vdso.go). The vDSO's
// code (kernel/loader/internal/genvdso builds it) reaches the page
// pc-relatively, VvarSize below the image, and reads it at these offsets.
// A writer bumps the sequence number to odd before it changes the rest
// and to even after, so that a reader that saw the same even number
// before and after its loads read a consistent set.
const (
	VvarSeq       = 0
	VvarTimebase  = 8  // time CSR ticks per second
	VvarRealtime  = 16 // CLOCK_REALTIME minus the time CSR in ns
	VvarMonotonic = 24 // CLOCK_MONOTONIC minus the time CSR in ns
	VvarBoottime  = 32 // CLOCK_BOOTTIME minus the time CSR in ns (a time namespace moves it apart)

	VvarSize    = 4096 // the data page; the image follows it
	VDSOMaxSize = 4096 // the image fits in a page
)

// vdsoPages is a vDSO as its code expects it: the data page, then the
// image. The image is generated into zvdso.go, with VDSOImage and
// VDSOSigreturn: `go generate ./kernel/loader` writes it anew.
type vdsoPages struct {
	vvar  [VvarSize / 8]uint64
	image [VDSOMaxSize]byte
}
