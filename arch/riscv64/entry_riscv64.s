// Boot entry, reached from the trampoline that QEMU runs at 0x80000000, and
// the M-mode trap handler.
//
// Register contract
//   in:  A0 = hart id, A1 = physical address of the flattened device tree;
//        M-mode, no translation, interrupts off, every other register
//        undefined. The image is linked at directMap + its physical
//        address: until paging is on, only pc-relative addresses (which
//        come out physical) may be used.
//   M-mode setup, every hart: FP on, the time CSR readable in S and U,
//        one PMP entry giving S and U all memory (the page tables guard
//        it), every exception from U and S delegated to S, and the
//        supervisor interrupts; Sstc's stimecmp enabled; machineTrap as
//        mtvec with mscratch = the hart's machineSave; only the machine
//        software interrupt (CLINT msip) taken in M-mode.
//   out: the boot hart enters S-mode at bootSupervisor on bootTable (the
//        direct map's first 16 GiB), calls earlyInit on the boot stack,
//        then jumps to the Go runtime's own entry point, _rt0_riscv64_linux,
//        with X2 at a Linux initial process stack (argc, argv, envp, auxv)
//        and interrupts enabled (sstatus.SIE=1).
//        Every other hart waits until the boot hart sets smpRelease, enters
//        S-mode on the kernel table, sets stvec and sscratch = &harts[id],
//        calls secondaryInit on its trap stack with g = its stand-in g,
//        and leaves through trapReturn into the thread secondaryInit
//        chose. Harts beyond maxHarts park in wfi.

#include "textflag.h"
#include "go_asm.h"

#define AT_NULL   0
#define AT_PAGESZ 6
#define AT_HWCAP  16
#define AT_RANDOM 25
#define AT_SYSINFO_EHDR 33

// Exceptions delegated to S: misaligned, access faults, illegal
// instruction, breakpoint, ECALL from U and S, page faults.
#define EXCEPTIONS_TO_S 0xb3ff
// Interrupts delegated to S: software, timer, external.
#define INTERRUPTS_TO_S 0x222

TEXT ·Entry(SB),NOSPLIT|NOFRAME,$0
	// FP on (mstatus.FS = dirty, as kernel code always runs: see
	// trap_riscv64.s): Go code uses the F registers.
	MOV	$const_fsDirty, T0
	WORD	$0x3002a073		// csrs mstatus, t0
	WORD	$0x00301073		// csrw fcsr, zero

	// User mode may read the time CSR (rdtime) but not cycle or instret,
	// as under Linux 6.12 (perf_user_access = 1): mcounteren.TM opens it
	// to S-mode, scounteren.TM from there to U-mode.
	MOV	$2, T0
	WORD	$0x30629073		// csrw mcounteren, t0
	WORD	$0x10629073		// csrw scounteren, t0

	// One PMP entry, NAPOT over the whole address space, RWX: S and U
	// may touch what the page tables allow.
	MOV	$-1, T0
	SRL	$10, T0
	WORD	$0x3b029073		// csrw pmpaddr0, t0
	MOV	$0x1f, T0
	WORD	$0x3a029073		// csrw pmpcfg0, t0

	MOV	$EXCEPTIONS_TO_S, T0
	WORD	$0x30229073		// csrw medeleg, t0
	MOV	$INTERRUPTS_TO_S, T0
	WORD	$0x30329073		// csrw mideleg, t0
	MOV	$1, T0
	SLL	$63, T0
	WORD	$0x30a2a073		// csrs menvcfg, t0 (STCE: stimecmp)
	MOV	$-1, T0
	WORD	$0x14d29073		// csrw stimecmp, t0
	// The CLINT's M-mode timer never fires: a pending machine timer
	// interrupt, even a masked one, makes QEMU check for interrupts (and
	// take its big lock) at every translation block.
	MOV	·clintBase(SB), T1
	ADD	$const_clintMtimecmp, T1
	SLL	$3, A0, T2
	ADD	T2, T1
	MOV	T0, (T1)
	MOV	$·machineTrap(SB), T0
	WORD	$0x30529073		// csrw mtvec, t0
	MOV	$·machineSave(SB), T0
	SLL	$4, A0, T1
	ADD	T1, T0
	WORD	$0x34029073		// csrw mscratch, t0
	MOV	$8, T0
	WORD	$0x30429073		// csrw mie, t0 (MSIE)

	BNE	A0, ZERO, secondary
	WORD	$0xc01022f3		// csrr t0, time
	MOV	T0, ·bootTicks(SB)
	MOV	A1, ·bootDTB(SB)

	CALL	bootPaging(SB)
	WORD	$0x18029073		// csrw satp, t0
	WORD	$0x12000073		// sfence.vma
	MOV	$bootSupervisor(SB), T0
	JMP	supervisor

secondary:
	MOV	$const_maxHarts, T0
	BGEU	A0, T0, park
wait:
	MOVWU	·smpRelease(SB), T0
	BEQ	T0, ZERO, wait
	WORD	$0x0ff0000f		// fence: see what the boot hart wrote before the release
	MOV	·kernelSatp(SB), T1
	WORD	$0x18031073		// csrw satp, t1
	WORD	$0x12000073		// sfence.vma
	MOV	$secondarySupervisor(SB), T0

// supervisor enters S-mode at the physical address in T0, moved into the
// direct map, with sstatus.SIE = 0.
supervisor:
	MOV	$const_directMap, T1
	ADD	T1, T0
	WORD	$0x34129073		// csrw mepc, t0
	MOV	$(3<<11), T0
	WORD	$0x3002b073		// csrc mstatus, t0
	MOV	$(1<<11), T0
	WORD	$0x3002a073		// csrs mstatus, t0 (MPP = S)
	WORD	$0x30200073		// mret

park:
	WORD	$0x10500073		// wfi
	JMP	park

// bootPaging fills bootTable, root entries 128..143 mapping directMap +
// n GiB to n GiB, and, when the image is not in the direct map (imageOffset,
// an Image), the root entry of its gigabyte with imageTable, which maps
// each of its 2 MiB pages to where it was loaded. It returns in T0 the
// satp value that loads the table. It runs at physical addresses with
// translation off, and uses T0-T4 and A2-A4.
TEXT bootPaging(SB),NOSPLIT|NOFRAME,$0
	MOV	$·bootTable(SB), T0
	ADD	$4095, T0
	SRL	$12, T0
	SLL	$12, T0
	ADD	$(8*(const_directMap>>30)), T0, T1
	MOV	$0xef, T2		// V R W X G A D
	MOV	$16, T3
	MOV	$(1<<28), T4		// one GiB in PTE form (ppn << 10)
bootmap:
	MOV	T2, (T1)
	ADD	T4, T2
	ADD	$8, T1
	SUB	$1, T3
	BNE	T3, ZERO, bootmap

	MOV	·imageOffset(SB), T1
	MOV	$const_directMap, T2
	BEQ	T1, T2, mapped
	MOV	$·imageTable(SB), T2
	ADD	$4095, T2
	SRL	$12, T2
	SLL	$12, T2
	MOV	$runtime·text(SB), T3	// physical: the first 2 MiB page's
	SRL	$21, T3
	SLL	$21, T3
	ADD	T1, T3, A2		// its virtual address
	SRL	$30, A2
	AND	$511, A2
	SLL	$3, A2
	ADD	T0, A2			// its root entry
	SRL	$12, T2, A3
	SLL	$10, A3
	OR	$1, A3			// V: a next-level table
	MOV	A3, (A2)
	MOV	$runtime·end(SB), T4
imagemap:
	ADD	T1, T3, A2
	SRL	$21, A2
	AND	$511, A2
	SLL	$3, A2
	ADD	T2, A2			// the page's entry in imageTable
	SRL	$12, T3, A3
	SLL	$10, A3
	OR	$0xef, A3
	MOV	A3, (A2)
	MOV	$(2<<20), A4
	ADD	A4, T3
	BLTU	T3, T4, imagemap
mapped:
	SRL	$12, T0
	MOV	$8, T1
	SLL	$60, T1
	OR	T1, T0
	RET

// bootSupervisor: the boot hart in S-mode, in the direct map.
TEXT bootSupervisor(SB),NOSPLIT|NOFRAME,$0
	MOV	$·trapEntry(SB), T0
	WORD	$0x10529073		// csrw stvec, t0
	MOV	$·harts(SB), T0
	WORD	$0x14029073		// csrw sscratch, t0

	// Go code before the runtime: boot stack, and the hart's stand-in g.
	MOV	$·bootStack(SB), X2
	MOV	$const_bootStackSize, T0
	ADD	T0, X2
	MOV	$·harts(SB), T0
	ADD	$hart_standInG, T0, g
	CALL	·earlyInit(SB)

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
	MOV	$AT_SYSINFO_EHDR, T0	// the kernel's vDSO (initKernelVDSO)
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
	// Interrupts on, as for every kernel thread: each thread's sstatus.SIE
	// comes from the one it was cloned from, and a thread that ran with
	// them off would take no timer tick and answer no TLB shootdown.
	MOV	$2, T0
	WORD	$0x1002a073		// csrs sstatus, t0 (SIE)
	MOV	$·harts(SB), TP		// a kernel thread's TP is its hart (trap_riscv64.s)
	JMP	_rt0_riscv64_linux(SB)

// secondarySupervisor: another hart in S-mode, A0 = its id.
TEXT secondarySupervisor(SB),NOSPLIT|NOFRAME,$0
	MOV	$·trapEntry(SB), T0
	WORD	$0x10529073		// csrw stvec, t0
	MOV	$hart__size, T0
	MUL	T0, A0, T0
	MOV	$·harts(SB), T1
	ADD	T1, T0
	WORD	$0x14029073		// csrw sscratch, t0
	MOV	hart_stackTop(T0), X2
	ADD	$hart_standInG, T0, g
	CALL	·secondaryInit(SB)
	JMP	·trapReturn(SB)

// machineTrap is the M-mode trap vector. Only the machine software
// interrupt comes here (everything else is delegated to S): a hart sent
// an IPI by writing this hart's CLINT msip. The handler clears it and
// raises the supervisor software interrupt, which the kernel serves.
// Anything else is a kernel bug: the machine powers off (status 4).
// Registers: T4 and T5 are spilled to machineSave; mscratch swaps with T6.
TEXT ·machineTrap(SB),NOSPLIT|NOFRAME,$0
	WORD	$0x340f9ff3		// csrrw t6, mscratch, t6
	MOV	T5, 0(T6)
	MOV	T4, 8(T6)
	WORD	$0x34202f73		// csrr t5, mcause
	MOV	$1, T4
	SLL	$63, T4
	ADD	$3, T4
	BNE	T4, T5, machineFatal
	WORD	$0xf1402f73		// csrr t5, mhartid
	SLL	$2, T5
	MOV	·clintBase(SB), T4
	ADD	T5, T4
	MOVW	ZERO, (T4)		// clear msip
	MOV	$2, T5
	WORD	$0x344f2073		// csrs mip, t5 (SSIP)
	MOV	0(T6), T5
	MOV	8(T6), T4
	WORD	$0x340f9ff3		// csrrw t6, mscratch, t6
	WORD	$0x30200073		// mret
machineFatal:
	MOV	·testBase(SB), T4
	MOV	$0x43333, T5
	MOVW	T5, (T4)
machineHalt:
	WORD	$0x10500073		// wfi
	JMP	machineHalt
