// Boot entry, reached from the trampoline that QEMU runs at 0x80000000.
//
// Register contract
//   in:  A0 = hart id, A1 = physical address of the flattened device tree;
//        M-mode, no translation, interrupts off, every other register undefined.
//   out: the boot hart jumps to the Go runtime's own entry point,
//        _rt0_riscv64_linux, with X2 at a Linux initial process stack
//        (argc, argv, envp, auxv) and data accesses translated through the
//        kernel page table (mstatus.MPRV=1, MPP=U, see mem.go) and
//        interrupts enabled (mstatus.MIE=1).
//        Every other hart waits until the boot hart sets smpRelease, sets
//        up its own CSRs (mtvec, mscratch = &harts[id], FS, counters,
//        satp = kernel table), calls secondaryInit on its trap stack with g
//        = its stand-in g, and leaves through trapReturn into the thread
//        secondaryInit chose. Harts beyond maxHarts park in wfi.

#include "textflag.h"
#include "go_asm.h"

#define AT_NULL   0
#define AT_PAGESZ 6
#define AT_HWCAP  16
#define AT_RANDOM 25
#define AT_SYSINFO_EHDR 33

TEXT ·Entry(SB),NOSPLIT|NOFRAME,$0
	BNE	A0, ZERO, secondary
	WORD	$0xc01022f3		// csrr t0, time
	MOV	T0, ·bootTicks(SB)
	MOV	A1, ·bootDTB(SB)

	// FP on (mstatus.FS = initial): Go code uses the F registers.
	MOV	$(1<<13), T0
	WORD	$0x3002a073		// csrs mstatus, t0
	WORD	$0x00301073		// csrw fcsr, zero

	// User mode may read the time CSR (rdtime) but not cycle or instret,
	// as under Linux 6.12 (perf_user_access = 1): mcounteren.TM opens it
	// to S-mode, scounteren.TM from there to U-mode.
	MOV	$2, T0
	WORD	$0x30629073		// csrw mcounteren, t0
	WORD	$0x10629073		// csrw scounteren, t0

	MOV	$·trapEntry(SB), T0
	WORD	$0x30529073		// csrw mtvec, t0
	MOV	$·harts(SB), T0
	WORD	$0x34029073		// csrw mscratch, t0

	// Go code before the runtime: boot stack, and the hart's stand-in g.
	MOV	$·bootStack(SB), X2
	MOV	$const_bootStackSize, T0
	ADD	T0, X2
	MOV	$·harts(SB), T0
	ADD	$hart_standInG, T0, g
	CALL	·earlyInit(SB)

	// From here on the boot thread's loads and stores go through the kernel
	// page table: satp = kernel table, MPRV = 1, MPP = U.
	MOV	·kernelSatp(SB), T0
	WORD	$0x18029073		// csrw satp, t0
	WORD	$0x12000073		// sfence.vma
	MOV	$(3<<11), T0
	WORD	$0x3002b073		// csrc mstatus, t0 (MPP = U)
	MOV	$(1<<17), T0
	WORD	$0x3002a073		// csrs mstatus, t0 (MPRV)

	// Initial process stack, 16-byte aligned, 256 bytes below the top:
	//   0 argc | 8 argv[0] | 16 NULL | 24 envp[0] | 32 NULL |
	//   40..112 auxv pairs ending with AT_NULL | 128 the 16 AT_RANDOM bytes
	MOV	$·bootStack(SB), X2
	MOV	$(const_bootStackSize-256), T0
	ADD	T0, X2
	MOV	$1, T0
	MOV	T0, 0(X2)
	MOV	$·argv0(SB), T0
	MOV	T0, 8(X2)
	MOV	ZERO, 16(X2)
	MOV	$·godebugEnv(SB), T0
	MOV	T0, 24(X2)
	MOV	ZERO, 32(X2)
	MOV	$AT_PAGESZ, T0
	MOV	T0, 40(X2)
	MOV	$4096, T0
	MOV	T0, 48(X2)
	MOV	$AT_HWCAP, T0
	MOV	T0, 56(X2)
	MOV	$const_hwcapIMAFDC, T0
	MOV	T0, 64(X2)
	MOV	$AT_RANDOM, T0
	MOV	T0, 72(X2)
	ADD	$128, X2, T0
	MOV	T0, 80(X2)
	MOV	$AT_SYSINFO_EHDR, T0	// the kernel's vDSO, 0 when it has none
	MOV	T0, 88(X2)
	MOV	·kernelVDSOImage(SB), T0
	MOV	T0, 96(X2)
	MOV	$AT_NULL, T0
	MOV	T0, 104(X2)
	MOV	ZERO, 112(X2)
	MOV	·bootTicks(SB), T0
	MOV	T0, 128(X2)
	WORD	$0xc01022f3		// csrr t0, time
	MOV	T0, 136(X2)
	MOV	ZERO, A0
	MOV	ZERO, A1
	// Interrupts on, as for every kernel thread: each thread's mstatus.MIE
	// comes from the one it was cloned from, and a thread that ran with
	// them off would take no timer tick and answer no TLB shootdown.
	MOV	$8, T0
	WORD	$0x3002a073		// csrs mstatus, t0 (MIE)
	JMP	_rt0_riscv64_linux(SB)

secondary:
	MOV	$const_maxHarts, T0
	BGEU	A0, T0, park
wait:
	MOVWU	·smpRelease(SB), T0
	BEQ	T0, ZERO, wait
	WORD	$0x0ff0000f		// fence: see what the boot hart wrote before the release
	MOV	$(1<<13), T0
	WORD	$0x3002a073		// csrs mstatus, t0 (FS = initial)
	WORD	$0x00301073		// csrw fcsr, zero
	MOV	$2, T0
	WORD	$0x30629073		// csrw mcounteren, t0
	WORD	$0x10629073		// csrw scounteren, t0
	MOV	$·trapEntry(SB), T0
	WORD	$0x30529073		// csrw mtvec, t0
	MOV	$hart__size, T0
	MUL	T0, A0, T0
	MOV	$·harts(SB), T1
	ADD	T1, T0
	WORD	$0x34029073		// csrw mscratch, t0
	MOV	hart_stackTop(T0), X2
	ADD	$hart_standInG, T0, g
	MOV	·kernelSatp(SB), T1
	WORD	$0x18031073		// csrw satp, t1
	WORD	$0x12000073		// sfence.vma
	CALL	·secondaryInit(SB)
	JMP	·trapReturn(SB)

park:
	WORD	$0x10500073		// wfi
	JMP	park
