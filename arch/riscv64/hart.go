//go:build riscv64

package riscv64

import "github.com/jiege-go/jiege/mm"

const (
	maxHarts      = 8
	maxThreads    = 256
	bootStackSize = 256 << 10
	trapStackSize = 64 << 10

	// hwcapIMAFDC is AT_HWCAP for rv64gc: one bit per single-letter extension.
	hwcapIMAFDC = 1<<('I'-'A') | 1<<('M'-'A') | 1<<('A'-'A') | 1<<('F'-'A') | 1<<('D'-'A') | 1<<('C'-'A')
)

// Register numbers used by the kernel.
const (
	RegRA = 1
	RegSP = 2
	RegTP = 4
	RegA0 = 10
	RegA1 = 11
	RegA2 = 12
	RegA3 = 13
	RegA4 = 14
	RegA5 = 15
	RegA7 = 17
)

// mstatus bits.
const (
	mstatusMIE   = 1 << 3
	mstatusMPIE  = 1 << 7
	mstatusMPPM  = 3 << 11
	mstatusFS    = 3 << 13 // FS = dirty: the F registers are always saved
	mstatusMPRV  = 1 << 17
	kernelStatus = mstatusMPPM | mstatusFS | mstatusMPRV
	userStatus   = mstatusMPIE | mstatusFS
)

// Trap causes (mcause).
const (
	causeInterrupt       = 1 << 63
	CauseInstrMisaligned = 0
	CauseInstrAccess     = 1
	CauseIllegalInstr    = 2
	CauseBreakpoint      = 3
	CauseLoadAccess      = 5
	CauseStoreAccess     = 7
	CauseEcallU          = 8
	causeEcallM          = 11
	CauseInstrPageFault  = 12
	CauseLoadPageFault   = 13
	CauseStorePageFault  = 15
	irqTimer             = 7
	irqExternal          = 11
)

// IsInterrupt reports whether a trap cause is an interrupt rather than an exception.
func IsInterrupt(cause uint64) bool { return cause&causeInterrupt != 0 }

// Frame is a saved register set: a kernel thread's M-mode context or a user
// thread's U-mode context. trap_riscv64.s knows its layout.
type Frame struct {
	X      [32]uint64 // X[i] holds xi; X[0] is unused
	F      [32]uint64
	FCSR   uint64
	PC     uint64
	Status uint64 // mstatus at the trap; the mstatus image to resume with
	Cause  uint64
	Tval   uint64
	Satp   uint64 // user frames: the address space (satp value) to run in
}

// hart is the per-hart state that mscratch points at. trap_riscv64.s reads
// its first fields.
type hart struct {
	save     uintptr   // the Frame the next trap saves into
	scratch  uint64    // trap entry's spill slot
	stackTop uintptr   // top of this hart's trap stack
	standInG [8]uint64 // what Go code on the trap stack sees as g: stack guard 0
	id       int
	current  int    // index of the thread running on this hart
	satp     uint64 // satp value currently loaded
	inTrap   bool
}

var (
	harts      [maxHarts]hart
	trapStacks [maxHarts][trapStackSize]byte
	bootStack  [bootStackSize]byte
	bootTicks  uint64  // time CSR at Entry
	bootDTB    uintptr // device tree address from the boot loader
	argv0      = [8]byte{'j', 'i', 'e', 'g', 'e'}
	// godebugEnv is the runtime's environment. Asynchronous preemption
	// needs signals, which the kernel's runtime does not get.
	godebugEnv = [32]byte{'G', 'O', 'D', 'E', 'B', 'U', 'G', '=', 'a', 's', 'y', 'n', 'c', 'p', 'r', 'e', 'e', 'm', 'p', 't', 'o', 'f', 'f', '=', '1'}
)

//go:nosplit
func thisHart() *hart { return (*hart)(mm.Ptr(uintptr(readMscratch()))) }

//go:nosplit
func frameAt(pa uintptr) *Frame { return (*Frame)(mm.Ptr(pa)) }

// Implemented in assembly.
func trapEntry()
func readTime() uint64
func readMscratch() uint64
func readMip() uint64
func writeSatp(v uint64)
func sfenceVMA()
func writeMie(v uint64)
func writePMP0(addr, cfg uint64)
func wfi()
func disableInterrupts() uint64
func restoreInterrupts(old uint64)
func kernelEnd() uintptr
func ecall2(nr, a0, a1 uintptr) uintptr

// Read8 reads a byte-wide device register.
func Read8(addr uintptr) uint8

// Write8 writes a byte-wide device register.
func Write8(addr uintptr, v uint8)

// Read32 reads a 32-bit device register.
func Read32(addr uintptr) uint32

// Write32 writes a 32-bit device register.
func Write32(addr uintptr, v uint32)

// Read64 reads a 64-bit device register.
func Read64(addr uintptr) uint64

// Write64 writes a 64-bit device register.
func Write64(addr uintptr, v uint64)
