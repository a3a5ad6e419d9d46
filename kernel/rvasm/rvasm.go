package rvasm

// A few RV64I instruction encoders, enough to write the selftest's user
// programs without an assembler.

const (
	Zero = 0
	A0   = 10
	A1   = 11
	A2   = 12
	A7   = 17
)

func iType(op, funct3 uint32, rd, rs1 int, imm int32) uint32 {
	return uint32(imm)<<20 | uint32(rs1)<<15 | funct3<<12 | uint32(rd)<<7 | op
}

func ADDI(rd, rs1 int, imm int32) uint32 { return iType(0x13, 0, rd, rs1, imm) }
func LD(rd, rs1 int, imm int32) uint32   { return iType(0x03, 3, rd, rs1, imm) }
func LUI(rd int, imm20 uint32) uint32    { return imm20<<12 | uint32(rd)<<7 | 0x37 }
func ECALL() uint32                      { return 0x73 }

// J0 is "j ." (jal zero, 0): spin forever.
func J0() uint32 { return 0x6f }

// More RV64 registers and encoders, for the vDSO's code.
const (
	RA = 1
	T0 = 5
	T1 = 6
	T2 = 7
	A3 = 13
	A4 = 14
	A5 = 15
	A6 = 16
	T3 = 28
	T4 = 29
	T5 = 30
	T6 = 31
)

func rType(funct7, funct3 uint32, rd, rs1, rs2 int) uint32 {
	return funct7<<25 | uint32(rs2)<<20 | uint32(rs1)<<15 | funct3<<12 | uint32(rd)<<7 | 0x33
}

func ADD(rd, rs1, rs2 int) uint32  { return rType(0, 0, rd, rs1, rs2) }
func MUL(rd, rs1, rs2 int) uint32  { return rType(1, 0, rd, rs1, rs2) }
func DIVU(rd, rs1, rs2 int) uint32 { return rType(1, 5, rd, rs1, rs2) }
func REMU(rd, rs1, rs2 int) uint32 { return rType(1, 7, rd, rs1, rs2) }
func ANDI(rd, rs1 int, imm int32) uint32 {
	return iType(0x13, 7, rd, rs1, imm)
}
func SRLI(rd, rs1 int, shamt uint32) uint32 { return iType(0x13, 5, rd, rs1, int32(shamt)) }
func JALR(rd, rs1 int, imm int32) uint32    { return iType(0x67, 0, rd, rs1, imm) }
func AUIPC(rd int, imm20 uint32) uint32     { return imm20<<12 | uint32(rd)<<7 | 0x17 }

// SD is "sd rs2, imm(rs1)".
func SD(rs2, rs1 int, imm int32) uint32 {
	u := uint32(imm)
	return (u>>5&0x7f)<<25 | uint32(rs2)<<20 | uint32(rs1)<<15 | 3<<12 | (u&0x1f)<<7 | 0x23
}

// RDTIME is "rdtime rd" (csrrs rd, time, zero): the time CSR, readable in
// U-mode when the machine sets mcounteren.TM.
func RDTIME(rd int) uint32 { return 0xc01<<20 | 2<<12 | uint32(rd)<<7 | 0x73 }

// FenceRR is "fence r, r": loads before it complete before loads after it.
func FenceRR() uint32 { return 0x0220000f }

// branch is a conditional branch (funct3 0 beq, 1 bne) by off bytes.
func branch(funct3 uint32, rs1, rs2 int, off int32) uint32 {
	u := uint32(off)
	return (u>>12&1)<<31 | (u>>5&0x3f)<<25 | uint32(rs2)<<20 | uint32(rs1)<<15 | funct3<<12 |
		(u>>1&0xf)<<8 | (u>>11&1)<<7 | 0x63
}

// jal is "jal rd, off".
func jal(rd int, off int32) uint32 {
	u := uint32(off)
	return (u>>20&1)<<31 | (u>>1&0x3ff)<<21 | (u>>11&1)<<20 | (u>>12&0xff)<<12 | uint32(rd)<<7 | 0x6f
}

// Asm assembles a few instructions with forward and backward labels.
type Asm struct {
	code   []uint32
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at    int
	label string
	enc   func(off int32) uint32
}

// PC is the offset in bytes of the next instruction.
func (a *Asm) PC() int { return 4 * len(a.code) }

func (a *Asm) Emit(ins ...uint32) { a.code = append(a.code, ins...) }

func (a *Asm) Label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = a.PC()
}

// to emits an instruction whose pc-relative offset to label enc encodes.
func (a *Asm) to(label string, enc func(off int32) uint32) {
	a.fixups = append(a.fixups, fixup{len(a.code), label, enc})
	a.Emit(0)
}

func (a *Asm) Beq(rs1, rs2 int, l string) {
	a.to(l, func(off int32) uint32 { return branch(0, rs1, rs2, off) })
}
func (a *Asm) Bne(rs1, rs2 int, l string) {
	a.to(l, func(off int32) uint32 { return branch(1, rs1, rs2, off) })
}
func (a *Asm) Jal(rd int, l string) { a.to(l, func(off int32) uint32 { return jal(rd, off) }) }

// Bytes resolves the labels and returns the little-endian code.
func (a *Asm) Bytes() []byte {
	for _, f := range a.fixups {
		target, ok := a.labels[f.label]
		if !ok {
			panic("rvasm: undefined label " + f.label)
		}
		a.code[f.at] = f.enc(int32(target - 4*f.at))
	}
	b := make([]byte, 4*len(a.code))
	for i, w := range a.code {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(w), byte(w>>8), byte(w>>16), byte(w>>24)
	}
	return b
}
