package kernel

// A few RV64I instruction encoders, enough to write the selftest's user
// programs without an assembler.

const (
	regZero = 0
	regA0   = 10
	regA1   = 11
	regA2   = 12
	regA7   = 17
)

func iType(op, funct3 uint32, rd, rs1 int, imm int32) uint32 {
	return uint32(imm)<<20 | uint32(rs1)<<15 | funct3<<12 | uint32(rd)<<7 | op
}

func rvADDI(rd, rs1 int, imm int32) uint32 { return iType(0x13, 0, rd, rs1, imm) }
func rvLD(rd, rs1 int, imm int32) uint32   { return iType(0x03, 3, rd, rs1, imm) }
func rvLUI(rd int, imm20 uint32) uint32    { return imm20<<12 | uint32(rd)<<7 | 0x37 }
func rvECALL() uint32                      { return 0x73 }

// rvJ0 is "j ." (jal zero, 0): spin forever.
func rvJ0() uint32 { return 0x6f }

// More RV64 registers and encoders, for the vDSO's code.
const (
	regRA = 1
	regT0 = 5
	regT1 = 6
	regT2 = 7
	regA3 = 13
	regA4 = 14
	regA5 = 15
	regA6 = 16
	regT3 = 28
	regT4 = 29
	regT5 = 30
	regT6 = 31
)

func rType(funct7, funct3 uint32, rd, rs1, rs2 int) uint32 {
	return funct7<<25 | uint32(rs2)<<20 | uint32(rs1)<<15 | funct3<<12 | uint32(rd)<<7 | 0x33
}

func rvADD(rd, rs1, rs2 int) uint32  { return rType(0, 0, rd, rs1, rs2) }
func rvMUL(rd, rs1, rs2 int) uint32  { return rType(1, 0, rd, rs1, rs2) }
func rvDIVU(rd, rs1, rs2 int) uint32 { return rType(1, 5, rd, rs1, rs2) }
func rvREMU(rd, rs1, rs2 int) uint32 { return rType(1, 7, rd, rs1, rs2) }
func rvANDI(rd, rs1 int, imm int32) uint32 {
	return iType(0x13, 7, rd, rs1, imm)
}
func rvSRLI(rd, rs1 int, shamt uint32) uint32 { return iType(0x13, 5, rd, rs1, int32(shamt)) }
func rvJALR(rd, rs1 int, imm int32) uint32    { return iType(0x67, 0, rd, rs1, imm) }
func rvAUIPC(rd int, imm20 uint32) uint32     { return imm20<<12 | uint32(rd)<<7 | 0x17 }

// rvSD is "sd rs2, imm(rs1)".
func rvSD(rs2, rs1 int, imm int32) uint32 {
	u := uint32(imm)
	return (u>>5&0x7f)<<25 | uint32(rs2)<<20 | uint32(rs1)<<15 | 3<<12 | (u&0x1f)<<7 | 0x23
}

// rvRDTIME is "rdtime rd" (csrrs rd, time, zero): the time CSR, readable in
// U-mode when the machine sets mcounteren.TM.
func rvRDTIME(rd int) uint32 { return 0xc01<<20 | 2<<12 | uint32(rd)<<7 | 0x73 }

// rvFenceRR is "fence r, r": loads before it complete before loads after it.
func rvFenceRR() uint32 { return 0x0220000f }

// rvBranch is a conditional branch (funct3 0 beq, 1 bne) by off bytes.
func rvBranch(funct3 uint32, rs1, rs2 int, off int32) uint32 {
	u := uint32(off)
	return (u>>12&1)<<31 | (u>>5&0x3f)<<25 | uint32(rs2)<<20 | uint32(rs1)<<15 | funct3<<12 |
		(u>>1&0xf)<<8 | (u>>11&1)<<7 | 0x63
}

// rvJAL is "jal rd, off".
func rvJAL(rd int, off int32) uint32 {
	u := uint32(off)
	return (u>>20&1)<<31 | (u>>1&0x3ff)<<21 | (u>>11&1)<<20 | (u>>12&0xff)<<12 | uint32(rd)<<7 | 0x6f
}

// rvAsm assembles a few instructions with forward and backward labels.
type rvAsm struct {
	code   []uint32
	labels map[string]int
	fixups []rvFixup
}

type rvFixup struct {
	at    int
	label string
	enc   func(off int32) uint32
}

// pc is the offset in bytes of the next instruction.
func (a *rvAsm) pc() int { return 4 * len(a.code) }

func (a *rvAsm) emit(ins ...uint32) { a.code = append(a.code, ins...) }

func (a *rvAsm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = a.pc()
}

// to emits an instruction whose pc-relative offset to label enc encodes.
func (a *rvAsm) to(label string, enc func(off int32) uint32) {
	a.fixups = append(a.fixups, rvFixup{len(a.code), label, enc})
	a.emit(0)
}

func (a *rvAsm) beq(rs1, rs2 int, l string) {
	a.to(l, func(off int32) uint32 { return rvBranch(0, rs1, rs2, off) })
}
func (a *rvAsm) bne(rs1, rs2 int, l string) {
	a.to(l, func(off int32) uint32 { return rvBranch(1, rs1, rs2, off) })
}
func (a *rvAsm) jal(rd int, l string) { a.to(l, func(off int32) uint32 { return rvJAL(rd, off) }) }

// bytes resolves the labels and returns the little-endian code.
func (a *rvAsm) bytes() []byte {
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
