package bpf

import (
	"math/bits"

	"golang.org/x/sys/unix"
)

// The instruction set's fields (linux/bpf_common.h, linux/bpf.h).
const (
	classLD    = unix.BPF_LD
	classLDX   = unix.BPF_LDX
	classST    = unix.BPF_ST
	classSTX   = unix.BPF_STX
	classALU   = unix.BPF_ALU
	classJMP   = unix.BPF_JMP
	classJMP32 = unix.BPF_JMP32
	classALU64 = unix.BPF_ALU64

	srcX = unix.BPF_X

	modeIMM   = unix.BPF_IMM
	modeMEM   = unix.BPF_MEM
	modeMEMSX = unix.BPF_MEMSX

	opEND = unix.BPF_END

	jmpJA   = unix.BPF_JA
	jmpCALL = unix.BPF_CALL
	jmpEXIT = unix.BPF_EXIT

	pseudoMapFD = unix.BPF_PSEUDO_MAP_FD
)

// Registers: R0 returns, R1-R5 are arguments (R1 the context at entry),
// R6-R9 are kept across calls, R10 is the read-only frame pointer.
const (
	numRegs   = 11
	regFP     = 10
	stackSize = 512 // MAX_BPF_STACK
)

// insn is one decoded instruction. A BPF_LD_IMM64 takes two slots: the
// first holds the whole constant (or the map it names), the second is a
// tail no jump may land on.
type insn struct {
	code     uint8
	dst, src uint8
	off      int16
	imm      int32
	imm64    uint64
	m        *Map
	tail     bool
}

func (in insn) class() uint8 { return in.code & 0x07 }
func (in insn) op() uint8    { return in.code & 0xf0 }
func (in insn) size() int    { return sizeBytes(in.code & 0x18) }
func (in insn) mode() uint8  { return in.code & 0xe0 }
func (in insn) useReg() bool { return in.code&srcX != 0 }

func sizeBytes(size uint8) int {
	switch size {
	case unix.BPF_B:
		return 1
	case unix.BPF_H:
		return 2
	case unix.BPF_W:
		return 4
	}
	return 8
}

// aluOps are the arithmetic opcodes, with the names the log uses.
var aluOps = map[uint8]string{
	unix.BPF_ADD: "+=", unix.BPF_SUB: "-=", unix.BPF_MUL: "*=", unix.BPF_DIV: "/=",
	unix.BPF_OR: "|=", unix.BPF_AND: "&=", unix.BPF_LSH: "<<=", unix.BPF_RSH: ">>=",
	unix.BPF_NEG: "neg", unix.BPF_MOD: "%=", unix.BPF_XOR: "^=", unix.BPF_MOV: "=",
	unix.BPF_ARSH: "s>>=", opEND: "endian",
}

// jmpConds are the conditional jumps.
var jmpConds = map[uint8]bool{
	unix.BPF_JEQ: true, unix.BPF_JGT: true, unix.BPF_JGE: true, unix.BPF_JSET: true,
	unix.BPF_JNE: true, unix.BPF_JSGT: true, unix.BPF_JSGE: true, unix.BPF_JLT: true,
	unix.BPF_JLE: true, unix.BPF_JSLT: true, unix.BPF_JSLE: true,
}

// alu computes a scalar operation as the machine does: 32-bit ones on
// the low halves, zero-extended; shifts by a register masked to the
// width; division by zero 0 and modulo by zero the dividend; signed
// (off 1) division and modulo truncate toward zero. The verifier folds
// known constants with it, so what it proves is what runs.
func alu(op uint8, is64, signed bool, dst, src uint64) uint64 {
	if !is64 {
		return uint64(aluOn[uint32, int32](op, signed, uint32(dst), uint32(src), 31))
	}
	return aluOn[uint64, int64](op, signed, dst, src, 63)
}

// aluOn is alu on words of U (signed: S), whose shifts mask counts with
// shiftMask.
func aluOn[U uint32 | uint64, S int32 | int64](op uint8, signed bool, dst, src, shiftMask U) U {
	switch op {
	case unix.BPF_ADD:
		return dst + src
	case unix.BPF_SUB:
		return dst - src
	case unix.BPF_MUL:
		return dst * src
	case unix.BPF_DIV:
		switch {
		case src == 0:
			return 0
		case signed:
			return U(S(dst) / S(src))
		}
		return dst / src
	case unix.BPF_MOD:
		switch {
		case src == 0:
			return dst
		case signed:
			return U(S(dst) % S(src))
		}
		return dst % src
	case unix.BPF_OR:
		return dst | src
	case unix.BPF_AND:
		return dst & src
	case unix.BPF_XOR:
		return dst ^ src
	case unix.BPF_LSH:
		return dst << (src & shiftMask)
	case unix.BPF_RSH:
		return dst >> (src & shiftMask)
	case unix.BPF_ARSH:
		return U(S(dst) >> (src & shiftMask))
	case unix.BPF_NEG:
		return -dst
	}
	return 0
}

// endian is BPF_END: to little endian (the machine's: a truncation) or
// big endian, or an unconditional swap for ALU64, of the low width bits.
func endian(class uint8, toBE bool, width int32, v uint64) uint64 {
	swap := toBE || class == classALU64
	switch width {
	case 16:
		if swap {
			return uint64(bits.ReverseBytes16(uint16(v)))
		}
		return uint64(uint16(v))
	case 32:
		if swap {
			return uint64(bits.ReverseBytes32(uint32(v)))
		}
		return uint64(uint32(v))
	}
	if swap {
		return bits.ReverseBytes64(v)
	}
	return v
}

// signExtend sign-extends v's low bits (8, 16 or 32) to 64.
func signExtend(v uint64, width int) uint64 {
	switch width {
	case 8:
		return uint64(int64(int8(v)))
	case 16:
		return uint64(int64(int16(v)))
	case 32:
		return uint64(int64(int32(v)))
	}
	return v
}

// cond evaluates a conditional jump's comparison.
func cond(op uint8, is64 bool, dst, src uint64) bool {
	if !is64 {
		dst, src = uint64(uint32(dst)), uint64(uint32(src))
		sd, ss := int64(int32(dst)), int64(int32(src))
		return condSigned(op, dst, src, sd, ss)
	}
	return condSigned(op, dst, src, int64(dst), int64(src))
}

func condSigned(op uint8, dst, src uint64, sd, ss int64) bool {
	switch op {
	case unix.BPF_JEQ:
		return dst == src
	case unix.BPF_JNE:
		return dst != src
	case unix.BPF_JGT:
		return dst > src
	case unix.BPF_JGE:
		return dst >= src
	case unix.BPF_JLT:
		return dst < src
	case unix.BPF_JLE:
		return dst <= src
	case unix.BPF_JSET:
		return dst&src != 0
	case unix.BPF_JSGT:
		return sd > ss
	case unix.BPF_JSGE:
		return sd >= ss
	case unix.BPF_JSLT:
		return sd < ss
	case unix.BPF_JSLE:
		return sd <= ss
	}
	return false
}
