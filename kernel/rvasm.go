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
