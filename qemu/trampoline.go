// Package qemu owns how kernels meet QEMU: the virt machine's command lines,
// the QEMU process runner, and the boot trampoline.
package qemu

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// TrampolineSize is the length of the blob Trampoline returns.
const TrampolineSize = 24

// Trampoline returns a tiny firmware image for QEMU's -bios: QEMU starts
// every hart at 0x80000000 with a0 = hart id and a1 = the device tree, and
// these four instructions jump to entry with both untouched:
//
//	auipc t0, 0
//	ld    t0, 16(t0)
//	jr    t0
//	nop
//	.dword entry
func Trampoline(entry uint64) []byte {
	b := make([]byte, TrampolineSize)
	for i, insn := range []uint32{
		0x00000297, // auipc t0, 0
		0x0102b283, // ld t0, 16(t0)
		0x00028067, // jalr zero, 0(t0)
		0x00000013, // addi zero, zero, 0
	} {
		binary.LittleEndian.PutUint32(b[4*i:], insn)
	}
	binary.LittleEndian.PutUint64(b[16:], entry)
	return b
}

// ELFEntry returns the entry address of a RISC-V 64-bit ELF executable.
func ELFEntry(path string) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, fmt.Errorf("%s: not a readable ELF file: %w", path, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_RISCV || f.Class != elf.ELFCLASS64 {
		return 0, fmt.Errorf("%s: ELF for %v/%v, want RISC-V 64-bit", path, f.Machine, f.Class)
	}
	if f.Entry < 0x8000_0000 {
		return 0, fmt.Errorf("%s: entry %#x is below RAM at 0x80000000", path, f.Entry)
	}
	return f.Entry, nil
}
