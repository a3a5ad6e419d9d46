package riscv64

// Frame and the trap causes are plain data, built on every architecture so
// that the kernel's host tests can drive user contexts.

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
	RegA6 = 16
	RegA7 = 17
)

// Trap causes (scause).
const (
	causeInterrupt       = 1 << 63
	CauseInstrMisaligned = 0
	CauseInstrAccess     = 1
	CauseIllegalInstr    = 2
	CauseBreakpoint      = 3
	CauseLoadMisaligned  = 4 // an lr (or a load the hart does not split)
	CauseLoadAccess      = 5
	CauseStoreMisaligned = 6 // an sc or AMO (or a store, likewise)
	CauseStoreAccess     = 7
	CauseEcallU          = 8
	causeEcallS          = 9
	CauseInstrPageFault  = 12
	CauseLoadPageFault   = 13
	CauseStorePageFault  = 15
)

// IsInterrupt reports whether a trap cause is an interrupt rather than an exception.
func IsInterrupt(cause uint64) bool { return cause&causeInterrupt != 0 }

// Frame is a saved register set: a kernel thread's S-mode context or a user
// thread's U-mode context. trap_riscv64.s knows its layout.
type Frame struct {
	X      [32]uint64 // X[i] holds xi; X[0] is unused
	F      [32]uint64
	FCSR   uint64
	PC     uint64
	Status uint64 // sstatus at the trap; the sstatus image to resume with
	Cause  uint64
	Tval   uint64
	Satp   uint64 // user frames: the address space (satp value) to run in
	Owner  uint64 // user frames: the process id, which the profiler records

	// User frames: the time CSR's ticks that timer interrupts found the
	// thread in U-mode (UserTicks) or in one of its system calls
	// (SysTicks), counted since the interrupt before on the same hart.
	// They weigh how the task's CPU time splits between user and system
	// time, as Linux's tick accounting does. kernelG is the goroutine
	// that runs the thread's system calls (the g RunUser was called on).
	UserTicks, SysTicks uint64
	kernelG             uint64
}

// SetContext gives f the registers and state of from (clone's copy,
// exec's new program), keeping f's own CPU-time samples.
func (f *Frame) SetContext(from *Frame) {
	user, sys := f.UserTicks, f.SysTicks
	*f = *from
	f.UserTicks, f.SysTicks = user, sys
}
