//go:build riscv64

package riscv64

// The timer (Sstc's stimecmp), the CLINT's software interrupts, the PLIC
// and the power-off device: the hardware the trap handler itself drives.
// Addresses come from the device tree at boot; 0 is "none".

const (
	clintMtimecmp   = 0x4000 // + 8 * hart: M-mode timer, set to never by Entry
	plicPendingBase = 0x1000
	plicEnableBase  = 0x2000 // + 0x80 * context
	plicContext     = 0x200000
	plicClaim       = 4
	testPass        = 0x5555
	testFail        = 0x3333
	testReset       = 0x7777
)

// noContext is hart.plicContext of a hart the PLIC does not interrupt in S-mode.
const noContext = ^uintptr(0)

// maxIRQ bounds the PLIC sources the kernel serves, 1..maxIRQ-1: QEMU's
// virt has 95, the VisionFive 2's JH7110 136, the PolarFire SoC 186 (its
// UARTs are 90-94).
const maxIRQ = 256

// irqSet is a set of PLIC sources, a bit each.
type irqSet [maxIRQ / 64]uint64

//go:nosplit
func (s *irqSet) has(irq uint32) bool { return s[irq/64]&(1<<(irq%64)) != 0 }

//go:nosplit
func (s *irqSet) add(irq uint32) { s[irq/64] |= 1 << (irq % 64) }

//go:nosplit
func (s *irqSet) remove(irq uint32) { s[irq/64] &^= 1 << (irq % 64) }

var (
	// clintBase is where QEMU's virt machine has its CLINT, the one
	// address of a machine compiled in: our own M-mode code (Entry) sets
	// the M-mode timer there before it reads the device tree, and it runs
	// only on virt (QEMU's -bios runs the trampoline at virt's RAM).
	// earlyInit takes the tree's; the SBI boot never touches it.
	clintBase     uintptr = 0x0200_0000
	plicBase      uintptr
	testBase      uintptr
	timebase      uint64 = 10_000_000 // ticks per second of the time CSR
	quantumTicks  uint64 = 100_000    // 10 ms at 10 MHz; set from timebase at boot
	irqPending    irqSet              // external interrupts claimed and not yet consumed
	wallOffsetNs  int64               // wall-clock time at tick 0, from the RTC
	wallClockSeen bool
)

// irqAcks are the registers through which the trap handler
// acknowledges a device's interrupt itself (EnableIRQAcked), and the
// word it sets to quieten the device (QuietOnIRQ).
var irqAcks [maxIRQ]struct {
	status, ack uintptr
	quiet       *uint16
}

// SetPLIC names the PLIC at base and each hart's S-mode context, by
// hart id (from the PLIC's interrupts-extended); the boot code calls it
// before any interrupt is enabled.
func SetPLIC(base uintptr, contexts map[int]int) {
	irqHart = nil
	for i := range harts[:nHarts] {
		if c, ok := contexts[harts[i].hartID]; ok {
			harts[i].plicContext = uintptr(c)
			if irqHart == nil {
				irqHart = &harts[i]
			}
		}
	}
	plicBase = base
}

// irqHart is the hart every device interrupt goes to (plicEnable): the
// first with an S-mode context, or nil when there is no PLIC.
var irqHart *hart

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
