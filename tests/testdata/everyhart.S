// An S-mode payload of OpenSBI that enters the kernel's Image on every
// hart at once, at its entry, with the device tree in a1: what firmware
// without HSM does, and what OpenSBI before v1.3 can do to a hart the
// kernel is starting. It starts every other hart there through HSM, then
// jumps there itself. Linked at 0x80200000; the test loads the Image at
// IMAGE and runs QEMU with HARTS harts.
	.equ	IMAGE, 0x80400000
	.equ	HARTS, 4
	.equ	SBI_HSM, 0x48534d
	.globl	_start
_start:
	mv	s0, a0		// this hart's id
	mv	s1, a1		// the device tree
	li	s2, 0
next:
	beq	s2, s0, skip
	mv	a0, s2		// hart_start(hart s2, IMAGE, the device tree)
	li	a1, IMAGE
	mv	a2, s1
	li	a6, 0
	li	a7, SBI_HSM
	ecall
skip:
	addi	s2, s2, 1
	li	t0, HARTS
	blt	s2, t0, next
	mv	a0, s0
	mv	a1, s1
	li	t0, IMAGE
	jr	t0
