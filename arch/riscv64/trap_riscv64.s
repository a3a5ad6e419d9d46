// Trap entry and return: the one path by which every trap (ECALL, fault,
// interrupt; from the kernel's own threads in M-mode or from user programs in
// U-mode) reaches the kernel, and by which the kernel resumes a thread.
//
// Register contract
//   on entry:  every register belongs to the interrupted context; mscratch
//              holds the address of this hart's hart struct; mstatus.MIE is 0.
//   hart.save: the Frame that receives the interrupted registers. The
//              scheduler sets it to the running thread's kernel Frame, or to
//              its user Frame while it runs user code.
//   trap():    Go code on the hart's trap stack, g = the hart's stand-in g
//              (stack guard 0, so no stack-growth check ever fires). It picks
//              the Frame to resume and leaves it in hart.save, with the
//              mstatus image (MPP, MPIE, MPRV, FS) in Frame.Status.
//   on mret:   every register, mepc and mstatus come from that Frame.
// Register slot i of Frame.X holds xi; slot 0 is unused (x0 is zero).

#include "textflag.h"
#include "go_asm.h"

TEXT ·trapEntry(SB),NOSPLIT|NOFRAME,$0
	WORD	$0x340f9ff3	// csrrw t6, mscratch, t6: t6 = &hart, mscratch = interrupted t6
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
	MOV	hart_scratch(T6), T0
	MOV	T0, 240(T5)	// x30 (t5)
	WORD	$0x340022f3	// csrr t0, mscratch
	MOV	T0, 248(T5)	// x31 (t6)
	WORD	$0x340f9073	// csrw mscratch, t6
	WORD	$0x341022f3	// csrr t0, mepc
	MOV	T0, Frame_PC(T5)
	WORD	$0x342022f3	// csrr t0, mcause
	MOV	T0, Frame_Cause(T5)
	WORD	$0x343022f3	// csrr t0, mtval
	MOV	T0, Frame_Tval(T5)
	WORD	$0x300022f3	// csrr t0, mstatus
	MOV	T0, Frame_Status(T5)
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

	MOV	hart_stackTop(T6), X2
	ADD	$hart_standInG, T6, g
	CALL	·trap(SB)
	JMP	·trapReturn(SB)

// trapReturn resumes the Frame in hart.save: every register, mepc and mstatus.
TEXT ·trapReturn(SB),NOSPLIT|NOFRAME,$0
	WORD	$0x34002ff3	// csrr t6, mscratch
	MOV	hart_save(T6), T5
	MOV	Frame_Status(T5), T0
	WORD	$0x30029073	// csrw mstatus, t0
	MOV	Frame_PC(T5), T0
	WORD	$0x34129073	// csrw mepc, t0
	MOV	Frame_FCSR(T5), T0
	WORD	$0x00329073	// csrw fcsr, t0
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
	WORD	$0x30200073	// mret
