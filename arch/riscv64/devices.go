//go:build riscv64

package riscv64

// The timer (Sstc's stimecmp), the CLINT's software interrupts, the PLIC
// and the power-off device: the hardware the trap handler itself drives.
// Addresses come from the device tree at boot.

const (
	clintMtimecmp   = 0x4000 // + 8 * hart: M-mode timer, set to never by Entry
	plicPendingBase = 0x1000
	plicEnableBase  = 0x2000 // + 0x80 * context
	plicContext     = 0x200000
	plicClaim       = 4
	testPass        = 0x5555
	testFail        = 0x3333
)

var (
	clintBase     uintptr = 0x0200_0000
	plicBase      uintptr = 0x0c00_0000
	testBase      uintptr = 0x0010_0000
	timebase      uint64  = 10_000_000 // ticks per second of the time CSR
	quantumTicks  uint64  = 100_000    // 10 ms at 10 MHz; set from timebase at boot
	irqPending    uint64               // external interrupts claimed and not yet consumed
	wallOffsetNs  int64                // wall-clock time at tick 0, from the RTC
	wallClockSeen bool
)

// irqAcks are the registers through which the trap handler
// acknowledges a device's interrupt itself (EnableIRQAcked), and the
// word it sets to quieten the device (QuietOnIRQ).
var irqAcks [64]struct {
	status, ack uintptr
	quiet       *uint16
}

// plicContextOf is the PLIC context of a hart's S-mode on QEMU's virt
// machine: two contexts per hart, M-mode first.
//
//go:nosplit
func plicContextOf(h *hart) uintptr { return uintptr(2*h.id + 1) }

//go:nosplit
func ticksToNs(t uint64) int64 {
	return int64(t/timebase*1e9 + t%timebase*1e9/timebase)
}

//go:nosplit
func nsToTicks(ns int64) uint64 {
	if ns <= 0 {
		return 0
	}
	n := uint64(ns)
	return n/1e9*timebase + n%1e9*timebase/1e9
}
