// Entry as the payload of SBI firmware (OpenSBI, U-Boot after it), and the
// SBI call. Every ECALL of the kernel's own code is made an EBREAK in the
// Image (kimage.TrapECALLs), except in the functions named sbi*: theirs
// are the calls into the firmware.
//
// Register contract of sbiEntry, the Image's entry (its header's first two
// words jump here) and sbiSecondaryEntry (HSM hart_start's start address)
//   in:  A0 = hart id, A1 = physical address of the flattened device tree
//        (sbiSecondaryEntry ignores A1 and finds the hart's index in harts
//        by its id);
//        S-mode, satp = 0, sstatus.SIE = 0, every other register undefined.
//        Only pc-relative addresses (which come out physical) until paging
//        is on, as in Entry.
//   what the firmware already did: PMP, delegation of U-mode's ECALL, of
//        breakpoints, page faults and the supervisor interrupts, Sstc's
//        enable when the hart has it, mcounteren.
//   sbiEntry: the first hart to arrive boots (sbiEntryFree, a lottery in
//        the image's data, which the BSS zeroing leaves alone). Any other
//        waits until startHarts clears secondariesHeld and goes on as
//        sbiSecondaryEntry: OpenSBI before v1.3 can send a hart it is
//        starting to the payload's entry instead of hart_start's address
//        (it marks the hart START_PENDING before it writes the address),
//        and firmware without HSM enters every hart here.
//        The booting hart: FP on, time readable in U-mode, the load offset
//        found (imageOffset: the Image is linked in its own gigabyte, at
//        linkedText, and runs wherever the firmware put it, if that is
//        2 MiB-aligned; else sbiMisplaced says so and stops), the BSS
//        zeroed (an Image carries none), sbiBoot and sbiBootHart set. The
//        kernel boots on whichever hart the firmware chose (index 0 in
//        harts) and starts the others itself: it turns paging on with
//        bootTable and reaches bootSupervisor at its linked address, as
//        Entry's mret does: with stvec set to it, the first fetch after
//        the satp write faults there.
//   sbiSecondaryEntry: FP on, then the kernel table and
//        secondarySupervisor the same way, with A0 = its index; a hart
//        the kernel does not run on (not in harts) stays parked.

#include "textflag.h"
#include "go_asm.h"

// linkedText is runtime·text's linked address (the linker writes it: an
// absolute address, where every MOV $sym(SB) is pc-relative).
DATA linkedText<>+0(SB)/8, $runtime·text(SB)
GLOBL linkedText<>(SB), RODATA, $8

TEXT ·sbiEntry(SB),NOSPLIT|NOFRAME,$0
	MOV	$·sbiEntryFree(SB), T0
	AMOSWAPW	ZERO, (T0), T1
	BEQ	T1, ZERO, late
	MOV	$const_fsDirty, T0
	WORD	$0x1002a073		// csrs sstatus, t0
	WORD	$0x00301073		// csrw fcsr, zero
	MOV	$2, T0
	WORD	$0x10629073		// csrw scounteren, t0 (TM)

	// A2 = imageOffset: the linked address minus the loaded one, which
	// 2 MiB pages can map only when it is a multiple of 2 MiB.
	MOV	linkedText<>(SB), A2
	MOV	$runtime·text(SB), T0
	SUB	T0, A2
	MOV	$((2<<20)-1), T0
	AND	A2, T0
	BEQ	T0, ZERO, aligned
	JMP	·sbiMisplaced(SB)
aligned:
	MOV	A2, ·imageOffset(SB)

	// Zero the BSS but the part the kernel gives to its frame allocator
	// untouched (unusedImage, virtual addresses; 0 when there is none).
	MOV	$runtime·bss(SB), T0
	MOV	$runtime·end(SB), T1
	MOV	·unusedImage+8(SB), T2
	SUB	A2, T2
	MOV	·unusedImage+16(SB), T3
	SUB	A2, T3
bssloop:
	BGEU	T0, T1, bssdone
	BNE	T0, T2, bssword
	MOV	T3, T0
	JMP	bssloop
bssword:
	MOV	ZERO, (T0)
	ADD	$8, T0
	JMP	bssloop
bssdone:
	MOV	$1, T0
	MOVB	T0, ·sbiBoot(SB)
	MOV	A0, ·sbiBootHart(SB)

	WORD	$0xc01022f3		// csrr t0, time
	MOV	T0, ·bootTicks(SB)
	MOV	A1, ·bootDTB(SB)
	CALL	bootPaging(SB)
	MOV	$bootSupervisor(SB), T1
	JMP	sbiPaging(SB)

late:
	MOVWU	·secondariesHeld(SB), T1
	BNE	T1, ZERO, late
	FENCE
	JMP	·sbiSecondaryEntry(SB)

#define misplacedLen 78
DATA misplacedMsg<>+0(SB)/misplacedLen, $"kernel: the Image must be loaded at a 2 MiB-aligned address; it was not there\n"
GLOBL misplacedMsg<>(SB), RODATA, $misplacedLen

// sbiMisplaced tells on the firmware's console (the legacy putchar) that
// the Image was loaded at an address that is not 2 MiB-aligned, as the
// Image header asks, and shuts the machine down (SRST, system failure).
TEXT ·sbiMisplaced(SB),NOSPLIT|NOFRAME,$0
	MOV	$misplacedMsg<>(SB), T0
	MOV	$misplacedLen, T1
	ADD	T0, T1
putc:
	BGEU	T0, T1, shutdown
	MOVBU	(T0), A0
	MOV	$1, A7			// legacy console_putchar
	ECALL
	ADD	$1, T0
	JMP	putc
shutdown:
	MOV	$0x53525354, A7		// SRST
	MOV	ZERO, A6		// system_reset
	MOV	ZERO, A0		// shutdown
	MOV	$1, A1			// system failure
	ECALL
stop:
	WORD	$0x10500073		// wfi
	JMP	stop

TEXT ·sbiSecondaryEntry(SB),NOSPLIT|NOFRAME,$0
	MOV	$const_fsDirty, T0
	WORD	$0x1002a073		// csrs sstatus, t0
	WORD	$0x00301073		// csrw fcsr, zero
	MOV	$2, T0
	WORD	$0x10629073		// csrw scounteren, t0 (TM)
	MOV	·nHarts(SB), T1
	MOV	$·harts(SB), T2
	MOV	$hart__size, T3
	MOV	ZERO, A1
find:
	BGEU	A1, T1, parked
	MOV	hart_hartID(T2), T4
	BEQ	T4, A0, found
	ADD	T3, T2
	ADD	$1, A1
	JMP	find
found:
	MOV	A1, A0			// its index in harts
	MOV	·kernelSatp(SB), T0
	MOV	$secondarySupervisor(SB), T1
	JMP	sbiPaging(SB)
parked:
	WORD	$0x10500073		// wfi
	JMP	parked

// sbiPaging loads satp = T0 and continues at the physical address T1,
// moved to its linked address (+ imageOffset): stvec points there, and the
// fetch after the satp write, at a physical address no table maps, faults
// to it.
TEXT sbiPaging(SB),NOSPLIT|NOFRAME,$0
	MOV	·imageOffset(SB), T2
	ADD	T2, T1
	WORD	$0x10531073		// csrw stvec, t1
	WORD	$0x12000073		// sfence.vma
	WORD	$0x18029073		// csrw satp, t0
faulted:
	WORD	$0x10500073		// wfi: not reached, the fetch faults
	JMP	faulted

// sbiCall(eid, fid, a0, a1, a2, a3) (err, value) makes an SBI call.
TEXT ·sbiCall(SB),NOSPLIT,$0-64
	MOV	eid+0(FP), A7
	MOV	fid+8(FP), A6
	MOV	a0+16(FP), A0
	MOV	a1+24(FP), A1
	MOV	a2+32(FP), A2
	MOV	a3+40(FP), A3
	ECALL
	MOV	A0, err+48(FP)
	MOV	A1, value+56(FP)
	RET

// sbiSecondaryEntryPA returns sbiSecondaryEntry's physical address.
TEXT ·sbiSecondaryEntryPA(SB),NOSPLIT,$0-8
	MOV	$·sbiSecondaryEntry(SB), T0
	MOV	·imageOffset(SB), T1
	SUB	T1, T0
	MOV	T0, ret+0(FP)
	RET
