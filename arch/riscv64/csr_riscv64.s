// CSR and MMIO accessors for Go code. Each is a leaf: it uses only its
// arguments, T0, T1, and its result slot. The MMIO accessors take physical
// addresses and add the direct map's base.

#include "textflag.h"
#include "go_asm.h"

TEXT ·readTime(SB),NOSPLIT,$0-8
	WORD	$0xc01022f3	// csrr t0, time
	MOV	T0, ret+0(FP)
	RET

TEXT ·readSscratch(SB),NOSPLIT,$0-8
	WORD	$0x140022f3	// csrr t0, sscratch
	MOV	T0, ret+0(FP)
	RET

// standInG returns g, which in the trap handler is &hart.standInG.
TEXT ·standInG(SB),NOSPLIT,$0-8
	MOV	g, ret+0(FP)
	RET

TEXT ·readSip(SB),NOSPLIT,$0-8
	WORD	$0x144022f3	// csrr t0, sip
	MOV	T0, ret+0(FP)
	RET

// clearSoftPending clears sip.SSIP, which machineTrap set.
TEXT ·clearSoftPending(SB),NOSPLIT,$0
	MOV	$2, T0
	WORD	$0x1442b073	// csrc sip, t0
	RET

TEXT ·writeStimecmp(SB),NOSPLIT,$0-8
	MOV	v+0(FP), T0
	WORD	$0x14d29073	// csrw stimecmp, t0
	RET

// writeSatpOnly writes satp without a fence: see asid.go.
TEXT ·writeSatpOnly(SB),NOSPLIT,$0-8
	MOV	v+0(FP), T0
	WORD	$0x18029073	// csrw satp, t0
	RET

TEXT ·readSatp(SB),NOSPLIT,$0-8
	WORD	$0x180022f3	// csrr t0, satp
	MOV	T0, ret+0(FP)
	RET

TEXT ·sfenceVMA(SB),NOSPLIT,$0
	WORD	$0x12000073	// sfence.vma
	RET

TEXT ·fenceI(SB),NOSPLIT,$0
	WORD	$0x0000100f	// fence.i
	RET

TEXT ·writeSie(SB),NOSPLIT,$0-8
	MOV	v+0(FP), T0
	WORD	$0x10429073	// csrw sie, t0
	RET

TEXT ·wfi(SB),NOSPLIT,$0
	WORD	$0x10500073	// wfi
	RET

TEXT ·wfiPC(SB),NOSPLIT,$0-8
	MOV	$·wfi(SB), T0
	MOV	T0, ret+0(FP)
	RET

// disableInterrupts clears sstatus.SIE and returns its previous sstatus.
TEXT ·disableInterrupts(SB),NOSPLIT,$0-8
	MOV	$2, T0
	WORD	$0x1002b2f3	// csrrc t0, sstatus, t0
	MOV	T0, ret+0(FP)
	RET

// restoreInterrupts sets sstatus.SIE again if it was set in old.
TEXT ·restoreInterrupts(SB),NOSPLIT,$0-8
	MOV	old+0(FP), T0
	AND	$2, T0
	WORD	$0x1002a073	// csrs sstatus, t0
	RET

TEXT ·Read8(SB),NOSPLIT,$0-9
	MOV	addr+0(FP), T0
	MOV	$const_directMap, T1
	ADD	T1, T0
	MOVBU	(T0), T0
	MOVB	T0, ret+8(FP)
	RET

TEXT ·Write8(SB),NOSPLIT,$0-9
	MOV	addr+0(FP), T0
	MOV	$const_directMap, T1
	ADD	T1, T0
	MOVBU	v+8(FP), A0
	MOVB	A0, (T0)
	RET

TEXT ·Read32(SB),NOSPLIT,$0-12
	MOV	addr+0(FP), T0
	MOV	$const_directMap, T1
	ADD	T1, T0
	MOVWU	(T0), T0
	MOVW	T0, ret+8(FP)
	RET

TEXT ·Write32(SB),NOSPLIT,$0-12
	MOV	addr+0(FP), T0
	MOV	$const_directMap, T1
	ADD	T1, T0
	MOVWU	v+8(FP), A0
	MOVW	A0, (T0)
	RET

TEXT ·Read64(SB),NOSPLIT,$0-16
	MOV	addr+0(FP), T0
	MOV	$const_directMap, T1
	ADD	T1, T0
	MOV	(T0), T0
	MOV	T0, ret+8(FP)
	RET

TEXT ·Write64(SB),NOSPLIT,$0-16
	MOV	addr+0(FP), T0
	MOV	$const_directMap, T1
	ADD	T1, T0
	MOV	v+8(FP), A0
	MOV	A0, (T0)
	RET

// ecall2 issues a kernel-private ECALL (number in A7) with two arguments.
TEXT ·ecall2(SB),NOSPLIT,$0-32
	MOV	nr+0(FP), A7
	MOV	a0+8(FP), A0
	MOV	a1+16(FP), A1
	ECALL
	MOV	A0, ret+24(FP)
	RET

// kernelStart returns the first address of the kernel's code (linker symbol runtime.text).
TEXT ·kernelStart(SB),NOSPLIT,$0-8
	MOV	$runtime·text(SB), T0
	MOV	T0, ret+0(FP)
	RET

// kernelEnd returns the first address past the kernel image (linker symbol runtime.end).
TEXT ·kernelEnd(SB),NOSPLIT,$0-8
	MOV	$runtime·end(SB), T0
	MOV	T0, ret+0(FP)
	RET

// sfenceVMAPage flushes the translations of one virtual page.
TEXT ·sfenceVMAPage(SB),NOSPLIT,$0-8
	MOV	va+0(FP), T0
	WORD	$0x12028073	// sfence.vma t0, zero
	RET
