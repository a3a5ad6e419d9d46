// Trap entry and return: the one path by which every trap (ECALL, fault,
// interrupt; from the kernel's own threads in S-mode or from user programs in
// U-mode) reaches the kernel, and by which the kernel resumes a thread.
// satp stays as the trap found it: every address space maps the kernel.
//
// Register contract
//   on entry:  every register belongs to the interrupted context; sscratch
//              holds the address of this hart's hart struct; sstatus.SIE is 0.
//   hart.save: the Frame that receives the interrupted registers. The
//              scheduler sets it to the running thread's kernel Frame, or to
//              its user Frame while it runs user code.
//   trap():    Go code on the hart's trap stack, g = the hart's stand-in g
//              (stack guard 0, so no stack-growth check ever fires), with
//              sstatus.FS dirty. It picks the Frame to resume and leaves it
//              in hart.save, with the sstatus image (SPP, SPIE, FS) in
//              Frame.Status, and sets hart.setFCSR when fcsr must change.
//   FS:        kernel code always runs with FS dirty: entry sets it, and
//              kernel threads resume with it. QEMU keys translated code on
//              FS, so code that ran both clean and dirty (the netstack's
//              float maths dirties it) was translated, and looked up,
//              twice. User contexts resume clean.
//   on sret:   every register, sepc and sstatus come from that Frame.
//   but:       an ECALL from U-mode that fastSyscall lets through resumes
//              the thread that called RunUser without sret: its SP, RA
//              and g from its Frame, a0 = 8 (the cause), sstatus.SIE set.
//   TP:        a kernel thread runs with TP = its hart (Go code never uses
//              TP without cgo): resume writes it into the Frame, the
//              fast way back sets it, and RunUser reads it instead of
//              sscratch (every CSR access is a trip through QEMU's loop).
// Every CSR access ends QEMU's translation block and goes through its main
// loop, so the path makes as few as it can: sscratch is swapped twice at
// entry and not read at return (g gives the hart), stval is read only for
// faults, fcsr and the F registers are saved only when dirty.
// Register slot i of Frame.X holds xi; slot 0 is unused (x0 is zero).

#include "textflag.h"
#include "go_asm.h"

TEXT ·trapEntry(SB),NOSPLIT|NOFRAME,$0
	WORD	$0x140f9ff3	// csrrw t6, sscratch, t6: t6 = &hart, sscratch = interrupted t6
	MOV	T5, hart_scratch(T6)
	MOV	hart_save(T6), T5
	MOV	RA, 8(T5)
	MOV	X2, 16(T5)
	MOV	GP, 24(T5)
	MOV	TP, 32(T5)
	MOV	X5, 40(T5)
	MOV	X6, 48(T5)
	MOV	X7, 56(T5)
	MOV	X8, 64(T5)
	MOV	X9, 72(T5)
	MOV	X10, 80(T5)
	MOV	X11, 88(T5)
	MOV	X12, 96(T5)
	MOV	X13, 104(T5)
	MOV	X14, 112(T5)
	MOV	X15, 120(T5)
	MOV	X16, 128(T5)
	MOV	X17, 136(T5)
	MOV	X18, 144(T5)
	MOV	X19, 152(T5)
	MOV	X20, 160(T5)
	MOV	X21, 168(T5)
	MOV	X22, 176(T5)
	MOV	X23, 184(T5)
	MOV	X24, 192(T5)
	MOV	X25, 200(T5)
	MOV	X26, 208(T5)
	MOV	g, 216(T5)
	MOV	X28, 224(T5)
	MOV	X29, 232(T5)
	MOV	T6, T0		// &hart
	WORD	$0x140f9ff3	// csrrw t6, sscratch, t6: t6 = interrupted t6, sscratch = &hart
	MOV	T6, 248(T5)	// x31 (t6)
	MOV	hart_scratch(T0), T1
	MOV	T1, 240(T5)	// x30 (t5)
	MOV	T0, T6
	WORD	$0x141022f3	// csrr t0, sepc
	MOV	T0, Frame_PC(T5)
	WORD	$0x142022f3	// csrr t0, scause
	MOV	T0, Frame_Cause(T5)
	MOV	T0, T1
	MOV	$const_fsDirty, T2
	WORD	$0x1003a2f3	// csrrs t0, sstatus, t2: t0 = sstatus, FS dirty from here
	MOV	T0, Frame_Status(T5)

	// stval means something only for the exceptions other than ECALL.
	MOV	ZERO, Frame_Tval(T5)
	BLTZ	T1, notval
	MOV	$8, T2
	BEQ	T1, T2, notval
	MOV	$9, T2
	BEQ	T1, T2, notval
	WORD	$0x143022f3	// csrr t0, stval
	MOV	T0, Frame_Tval(T5)
notval:

	// The F registers and fcsr changed only if the context dirtied them
	// (sstatus.FS = 3, as kernel code always is): a user context resumes
	// clean, and its Frame then holds what the registers hold.
	MOV	Frame_Status(T5), T0
	SRL	$13, T0
	AND	$3, T0
	MOV	$3, T2
	BNE	T0, T2, fpclean
	MOVD	F0, 256(T5)
	MOVD	F1, 264(T5)
	MOVD	F2, 272(T5)
	MOVD	F3, 280(T5)
	MOVD	F4, 288(T5)
	MOVD	F5, 296(T5)
	MOVD	F6, 304(T5)
	MOVD	F7, 312(T5)
	MOVD	F8, 320(T5)
	MOVD	F9, 328(T5)
	MOVD	F10, 336(T5)
	MOVD	F11, 344(T5)
	MOVD	F12, 352(T5)
	MOVD	F13, 360(T5)
	MOVD	F14, 368(T5)
	MOVD	F15, 376(T5)
	MOVD	F16, 384(T5)
	MOVD	F17, 392(T5)
	MOVD	F18, 400(T5)
	MOVD	F19, 408(T5)
	MOVD	F20, 416(T5)
	MOVD	F21, 424(T5)
	MOVD	F22, 432(T5)
	MOVD	F23, 440(T5)
	MOVD	F24, 448(T5)
	MOVD	F25, 456(T5)
	MOVD	F26, 464(T5)
	MOVD	F27, 472(T5)
	MOVD	F28, 480(T5)
	MOVD	F29, 488(T5)
	MOVD	F30, 496(T5)
	MOVD	F31, 504(T5)
	WORD	$0x003022f3	// csrr t0, fcsr
	MOV	T0, Frame_FCSR(T5)
	MOV	T0, hart_fcsr(T6)
fpclean:

	MOV	hart_stackTop(T6), X2
	ADD	$hart_standInG, T6, g
	// A system call from U-mode goes straight back to the thread that
	// called RunUser when fastSyscall allows: its SP, RA and g from its
	// Frame, a0 = the cause, interrupts on, at runUserReturn.
	MOV	Frame_Cause(T5), T0
	MOV	$8, T1
	BNE	T0, T1, fulltrap
	MOV	T6, 8(X2)	// fastSyscall's argument (ABI0)
	CALL	·fastSyscall(SB)
	MOV	16(X2), T5	// its result
	BEQ	T5, ZERO, fulltrap
	MOV	g, TP		// the hart: g is its stand-in still
	SUB	$hart_standInG, TP
	MOV	8(T5), RA
	MOV	216(T5), g
	MOV	16(T5), X2
	MOV	$8, A0
	MOV	$2, T0
	WORD	$0x1002a073	// csrs sstatus, t0 (SIE)
	JMP	·runUserReturn(SB)
fulltrap:
	CALL	·trap(SB)
	JMP	·trapReturn(SB)

// RunUser(f *Frame) uint64, from a kernel thread with interrupts on:
// interrupts off; the thread's context goes to its Frame (hart.save) as a
// call leaves it: every other register is the caller's to lose (Go's ABI
// keeps none across a call but SP and g); then on the trap stack with the
// stand-in g, enterUser makes f the hart's next Frame, and trapReturn goes
// to U-mode. The thread resumes at runUserReturn with a0 = the trap cause.
TEXT ·RunUser(SB),NOSPLIT|NOFRAME,$0-16
	MOV	$2, T0
	WORD	$0x1002b073	// csrc sstatus, t0 (SIE off)
	MOV	TP, T6		// this hart
	// Kernel code may have changed fcsr's flags: hart.fcsr no longer says
	// what fcsr holds, and resume must write the program's.
	MOV	$-1, T0
	MOV	T0, hart_fcsr(T6)
	MOV	hart_save(T6), T5
	MOV	RA, 8(T5)
	MOV	X2, 16(T5)
	MOV	g, 216(T5)
	MOV	$·runUserReturn(SB), T0
	MOV	T0, Frame_PC(T5)
	MOV	$const_resumeKernelStatus, T0
	MOV	T0, Frame_Status(T5)
	MOV	f+0(FP), A0
	MOV	g, Frame_kernelG(A0)	// the goroutine that runs its system calls
	MOV	hart_stackTop(T6), X2
	ADD	$hart_standInG, T6, g
	MOV	A0, 8(X2)	// enterUser's arguments (ABI0: on the stack)
	MOV	T6, 16(X2)	// this hart
	CALL	·enterUser(SB)
	JMP	·trapReturn(SB)

// runUserReturn: RunUser's caller's stack and RA are back; a0 holds the
// cause, RunUser's result.
TEXT ·runUserReturn(SB),NOSPLIT|NOFRAME,$0
	MOV	A0, 16(X2)
	RET

// trapReturn resumes the Frame in hart.save: every register, sepc and sstatus.
TEXT ·trapReturn(SB),NOSPLIT|NOFRAME,$0
	MOV	g, T6		// the hart's stand-in g
	SUB	$hart_standInG, T6
	MOV	hart_save(T6), T5
	// fcsr and the F registers first: writing them makes FS dirty, and
	// the context resumes with the FS of its sstatus image (clean for a
	// user context).
	MOV	hart_setFCSR(T6), T0
	BEQ	T0, ZERO, fcsrset
	MOV	Frame_FCSR(T5), T0
	WORD	$0x00329073	// csrw fcsr, t0
fcsrset:
	MOVD	256(T5), F0
	MOVD	264(T5), F1
	MOVD	272(T5), F2
	MOVD	280(T5), F3
	MOVD	288(T5), F4
	MOVD	296(T5), F5
	MOVD	304(T5), F6
	MOVD	312(T5), F7
	MOVD	320(T5), F8
	MOVD	328(T5), F9
	MOVD	336(T5), F10
	MOVD	344(T5), F11
	MOVD	352(T5), F12
	MOVD	360(T5), F13
	MOVD	368(T5), F14
	MOVD	376(T5), F15
	MOVD	384(T5), F16
	MOVD	392(T5), F17
	MOVD	400(T5), F18
	MOVD	408(T5), F19
	MOVD	416(T5), F20
	MOVD	424(T5), F21
	MOVD	432(T5), F22
	MOVD	440(T5), F23
	MOVD	448(T5), F24
	MOVD	456(T5), F25
	MOVD	464(T5), F26
	MOVD	472(T5), F27
	MOVD	480(T5), F28
	MOVD	488(T5), F29
	MOVD	496(T5), F30
	MOVD	504(T5), F31
	MOV	Frame_Status(T5), T0
	WORD	$0x10029073	// csrw sstatus, t0
	MOV	Frame_PC(T5), T0
	WORD	$0x14129073	// csrw sepc, t0
	MOV	8(T5), RA
	MOV	16(T5), X2
	MOV	24(T5), GP
	MOV	32(T5), TP
	MOV	40(T5), X5
	MOV	48(T5), X6
	MOV	56(T5), X7
	MOV	64(T5), X8
	MOV	72(T5), X9
	MOV	80(T5), X10
	MOV	88(T5), X11
	MOV	96(T5), X12
	MOV	104(T5), X13
	MOV	112(T5), X14
	MOV	120(T5), X15
	MOV	128(T5), X16
	MOV	136(T5), X17
	MOV	144(T5), X18
	MOV	152(T5), X19
	MOV	160(T5), X20
	MOV	168(T5), X21
	MOV	176(T5), X22
	MOV	184(T5), X23
	MOV	192(T5), X24
	MOV	200(T5), X25
	MOV	208(T5), X26
	MOV	216(T5), g
	MOV	224(T5), X28
	MOV	232(T5), X29
	MOV	248(T5), T6
	MOV	240(T5), T5
	WORD	$0x10200073	// sret
