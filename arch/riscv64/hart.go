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

// Interrupt numbers (mcause without the interrupt bit).
const (
	irqSoft     = 3
	irqTimer    = 7
	irqExternal = 11
)

// noThread is hart.current while a hart has no thread (a secondary hart
// before its first one, or any hart idling).
const noThread = -1

// hart is the per-hart state that mscratch points at. trap_riscv64.s reads
// its first fields.
type hart struct {
	save     uintptr   // the Frame the next trap saves into
	scratch  uint64    // trap entry's spill slot
	stackTop uintptr   // top of this hart's trap stack
	standInG [8]uint64 // what Go code on the trap stack sees as g: stack guard 0
	id       int
	current  int    // index of the thread running on this hart, or noThread
	satp     uint64 // satp value currently loaded, with its ASID (guarded by the kernel lock)
	timerAt  uint64 // time CSR value the timer is set to fire at (mtimecmp)
	// flushReq is set by a hart that changed a page table this hart may
	// be using and waits for this hart to flush its TLB and clear it
	// (shootdown).
	flushReq uint32
	idle     bool // waiting in wfi with no thread (guarded by the kernel lock)
	inTrap   bool
}

var (
	harts      [maxHarts]hart
	nHarts     = 1    // harts in the device tree, at most maxHarts
	smpRelease uint32 // set when the boot hart has built what secondary harts need
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
func writeSatpOnly(v uint64)
func readSatp() uint64
func sfenceVMA()
func writeMie(v uint64)
func writePMP0(addr, cfg uint64)
func wfi()

// wfiPC is wfi's address: the profiler charges a hart's sleep to it.
func wfiPC() uint64
func trapReturn()
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
