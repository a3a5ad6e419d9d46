//go:build riscv64

package riscv64

import (
	"unsafe"

	"github.com/jiege-go/jiege/mm"
)

const (
	maxHarts      = 8
	maxThreads    = 256
	bootStackSize = 256 << 10
	trapStackSize = 64 << 10

	// hwcapIMAFDC is AT_HWCAP for rv64gc: one bit per single-letter extension.
	hwcapIMAFDC = 1<<('I'-'A') | 1<<('M'-'A') | 1<<('A'-'A') | 1<<('F'-'A') | 1<<('D'-'A') | 1<<('C'-'A')
)

// sstatus bits.
const (
	sstatusSIE   = 1 << 1
	sstatusSPIE  = 1 << 5
	sstatusSPP   = 1 << 8
	fsClean      = 2 << 13 // a user context resumes clean: its FS says whether it wrote F registers
	fsDirty      = 3 << 13 // kernel code always runs dirty (trapEntry sets it)
	kernelStatus = sstatusSPP | fsDirty
	// resumeKernelStatus resumes a kernel thread with interrupts on.
	resumeKernelStatus = kernelStatus | sstatusSPIE
	userStatus         = sstatusSPIE | fsClean
)

// Interrupt numbers (scause without the interrupt bit).
const (
	irqSoft     = 1
	irqTimer    = 5
	irqExternal = 9
)

// directMap is mm.DirectMap for the assembly: where physical memory and
// the devices appear in every address space (and the kernel image, under
// our own M-mode code: imageOffset).
const directMap = mm.DirectMap

// noThread is hart.current while a hart has no thread (a secondary hart
// before its first one, or any hart idling).
const noThread = -1

// hart is the per-hart state that sscratch points at. trap_riscv64.s reads
// its first fields.
type hart struct {
	save     uintptr   // the Frame the next trap saves into
	scratch  uint64    // trap entry's spill slot
	stackTop uintptr   // top of this hart's trap stack
	standInG [8]uint64 // what Go code on the trap stack sees as g: stack guard 0
	id       int       // index in harts; hart 0 booted the kernel
	// hartID is the hart's mhartid, the number the SBI, the CLINT and the
	// device tree know it by: under our own M-mode code it is id, under
	// SBI firmware the boot hart is whichever the firmware chose.
	hartID int
	// plicContext is the PLIC context of the hart's S-mode external
	// interrupt, from the PLIC's interrupts-extended (SetPLIC); noContext
	// when the device tree gives it none.
	plicContext uintptr
	current     int    // index of the thread running on this hart, or noThread
	satp        uint64 // satp value currently loaded, with its ASID (guarded by the kernel lock)
	// table is satp without its ASID, and tableASID that ASID: satpLoaded's
	// test on every system call's way back, without working it out.
	table     uint64
	tableASID uint64
	timerAt   uint64 // time CSR value the timer is set to fire at (stimecmp)
	newSlice  bool   // the timer fired, or the hart idled: resume starts a slice
	fcsr      uint64 // what fcsr holds (trap entry and resume keep it)
	setFCSR   uint64 // 1: trapReturn loads fcsr from the Frame it resumes
	// flushReq is set by a hart that changed a page table this hart may
	// be using (flushTLB), or wrote code for it (flushCode), and waits for
	// this hart to flush and clear it (shootdown, syncCode).
	flushReq uint32
	// codeGen is the count of code writes (codeGen) this hart had seen
	// when it last ran fence.i (fetchCode).
	codeGen uint64
	// retiring is the table (satp without ASID) whose retire asked this
	// hart to flush: it moves to the kernel table first if it has it loaded.
	retiring uint64
	idle     bool // waiting in wfi with no thread (guarded by the kernel lock)
	// staleTLB: a shootdown passed this hart by while it idled, so it
	// fences before it runs a thread again (guarded by the kernel lock).
	staleTLB bool
	inTrap   bool
	// sampledAt is the time CSR value up to which chargeTick has given
	// this hart's time to a user thread, or that the hart left wfi.
	sampledAt uint64
	// Every trap writes its hart's fields: padding keeps the next hart's
	// off this one's cache lines, wherever the linker puts harts (Go
	// cannot align a variable to a line).
	_ [cacheLine]byte
}

// cacheLine is the size of a cache line: under QEMU, a line that two
// harts write goes back and forth between the host's cores.
const cacheLine = 64

var (
	harts      [maxHarts]hart
	nHarts     = 1    // harts in the device tree, at most maxHarts
	smpRelease uint32 // set when the boot hart has built what secondary harts need
	trapStacks [maxHarts][trapStackSize]byte
	bootStack  [bootStackSize]byte
	bootTicks  uint64  // time CSR at Entry
	bootDTB    uintptr // device tree address from the boot loader
	// bootTable is the page table Entry builds to reach S-mode: the
	// direct map's first 16 GiB in gigapages. Page-aligned inside.
	bootTable [2 * mm.PageSize]byte
	// imageTable is the table of the gigabyte the Image is linked in,
	// outside the direct map: 2 MiB pages onto where the firmware loaded
	// it (bootPaging fills it; the kernel table shares it). Page-aligned
	// inside.
	imageTable [2 * mm.PageSize]byte
	// imageOffset is the kernel image's virtual address minus its
	// physical one: directMap for the ELF our own M-mode code boots,
	// linked in the direct map at its load address; for the Image,
	// linked in its own gigabyte (imageTable), sbiEntry sets it from where
	// the firmware loaded it.
	imageOffset uintptr = directMap
	// machineSave is each hart's spill area for the M-mode handler.
	machineSave [maxHarts][2]uint64
	argv0       = [8]byte{'j', 'i', 'e', 'g', 'e'}
	// godebugEnv is the runtime's environment. Asynchronous preemption
	// needs signals, which the kernel's runtime does not get.
	godebugEnv = [32]byte{'G', 'O', 'D', 'E', 'B', 'U', 'G', '=', 'a', 's', 'y', 'n', 'c', 'p', 'r', 'e', 'e', 'm', 'p', 't', 'o', 'f', 'f', '=', '1'}
)

//go:nosplit
func thisHart() *hart { return (*hart)(kernelPtr(uintptr(readSscratch()))) }

// trapHart is thisHart for the trap handler, which runs with g = the
// hart's stand-in g: it reads no CSR (each CSR access costs QEMU a trip
// through its main loop).
//
//go:nosplit
func trapHart() *hart { return (*hart)(kernelPtr(standInG() - unsafe.Offsetof(hart{}.standInG))) }

// frameAt is the Frame at a kernel address (hart.save, thread.user).
//
//go:nosplit
func frameAt(va uintptr) *Frame { return (*Frame)(kernelPtr(va)) }

// kernelPtr turns a kernel virtual address kept as an integer into a pointer.
//
//go:nosplit
func kernelPtr(va uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&va)) }

// Implemented in assembly.
func trapEntry()
func machineTrap()
func readTime() uint64
func readSscratch() uint64
func standInG() uintptr
func readSip() uint64
func clearSoftPending()
func writeStimecmp(v uint64)
func writeSatpOnly(v uint64)
func readSatp() uint64
func sfenceVMA()
func fenceI()
func writeSie(v uint64)
func wfi()

// wfiPC is wfi's address: the profiler charges a hart's sleep to it.
func wfiPC() uint64
func trapReturn()
func disableInterrupts() uint64
func restoreInterrupts(old uint64)
func kernelStart() uintptr
func kernelEnd() uintptr
func ecall2(nr, a0, a1 uintptr) uintptr

// Read8 reads a byte-wide device register; the device accessors take
// physical addresses and reach them through the direct map.
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
