package kimage

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
)

// The RISC-V Linux Image header (Linux's Documentation/arch/riscv/boot-image-header.rst):
// what QEMU's -kernel, OpenSBI's fw_payload and U-Boot's booti load.
const (
	ImageHeaderSize = 64
	// ImageTextOffset is where the image sits above the start of RAM: the
	// first 2 MiB belong to the SBI firmware, as for Linux on RV64.
	ImageTextOffset = 0x20_0000
	imageVersion    = 0<<16 | 2 // header version 0.2
	imageMagic      = "RISCV\x00\x00\x00"
	imageMagic2     = "RSC\x05"
)

// FirmwareCallPrefix names the kernel's functions whose ECALLs are SBI
// calls into the firmware: TrapECALLs leaves them alone.
const FirmwareCallPrefix = "github.com/jiege-go/jiege/arch/riscv64.sbi"

// ebreak replaces the kernel's own ECALLs in an image that runs under SBI
// firmware, where an ECALL from S-mode goes to M-mode (see TrapECALLs).
const (
	ecall  = 0x0000_0073
	ebreak = 0x0010_0073
)

// TrapECALLs rewrites every ECALL in the functions of the ELF file at path
// into an EBREAK, except in the functions named FirmwareCallPrefix*, and
// returns how many it rewrote. The kernel's Go runtime makes its Linux
// system calls with ECALL from S-mode: under SBI firmware that instruction
// reaches the firmware, which delegates no ECALL from S-mode, while a
// breakpoint is delegated to S-mode, where the kernel serves it as the
// system call (arch/riscv64, trap). Each function is decoded from its
// start, so only real instructions are rewritten, 2-byte ones skipped.
func TrapECALLs(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	syms, err := f.Symbols()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	n := 0
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 || strings.HasPrefix(s.Name, FirmwareCallPrefix) {
			continue
		}
		off, err := fileOffsetIn(f, s.Value)
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %w", path, s.Name, err)
		}
		if off+s.Size > uint64(len(data)) {
			return 0, fmt.Errorf("%s: %s lies past the end of the file", path, s.Name)
		}
		n += trapECALLs(data[off : off+s.Size])
	}
	f.Close()
	return n, os.WriteFile(path, data, 0o755)
}

// trapECALLs rewrites the ECALLs of one function's code into EBREAKs.
func trapECALLs(code []byte) int {
	n := 0
	for i := 0; i+2 <= len(code); {
		if code[i]&3 != 3 { // a compressed instruction
			i += 2
			continue
		}
		if i+4 > len(code) {
			break
		}
		if binary.LittleEndian.Uint32(code[i:]) == ecall {
			binary.LittleEndian.PutUint32(code[i:], ebreak)
			n++
		}
		i += 4
	}
	return n
}

// fileOffsetIn returns where the byte at virtual address va is stored in f.
func fileOffsetIn(f *elf.File, va uint64) (uint64, error) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && va >= p.Vaddr && va < p.Vaddr+p.Filesz {
			return p.Off + va - p.Vaddr, nil
		}
	}
	return 0, fmt.Errorf("address %#x is not stored in the file", va)
}

// LinuxImage returns the kernel ELF at path as a RISC-V Linux Image: its
// PT_LOAD segments laid out flat from the lowest load address (p_paddr),
// which must be 2 MiB aligned, with the Image header over the first 64 bytes (the ELF header,
// which the kernel never reads). The header's first two words jump to the
// ELF's entry; image_size covers the memory the kernel uses up to the
// symbol runtime.end, past its trimmed BSS (TrimUnused).
func LinuxImage(path string) ([]byte, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var loads []*elf.Prog
	base, fileEnd, memEnd := ^uint64(0), uint64(0), uint64(0)
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		loads = append(loads, p)
		base = min(base, p.Paddr)
		fileEnd = max(fileEnd, p.Paddr+p.Filesz)
		memEnd = max(memEnd, p.Paddr+p.Memsz)
	}
	if len(loads) == 0 {
		return nil, fmt.Errorf("%s: no PT_LOAD segment", path)
	}
	if base%(2<<20) != 0 {
		return nil, fmt.Errorf("%s: loads at %#x, not 2 MiB aligned", path, base)
	}
	if loads[0].Paddr != base || loads[0].Off != 0 || loads[0].Filesz < ImageHeaderSize {
		return nil, fmt.Errorf("%s: the first segment does not start with the ELF header", path)
	}
	if f.Entry < base+ImageHeaderSize || f.Entry >= fileEnd {
		return nil, fmt.Errorf("%s: entry %#x is not in the image", path, f.Entry)
	}
	if syms, err := f.Symbols(); err == nil {
		if end := symbol(syms, "runtime.end"); end != nil && end.Value >= uint64(loads[0].Vaddr) {
			memEnd = max(memEnd, end.Value-(loads[0].Vaddr-base))
		}
	}

	img := make([]byte, fileEnd-base)
	for _, p := range loads {
		if _, err := p.ReadAt(img[p.Paddr-base:p.Paddr-base+p.Filesz], 0); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	copy(img, ImageHeader(f.Entry-base, memEnd-base))
	return img, nil
}

// ImageHeader returns the 64-byte Image header of an image whose entry is
// entryOffset bytes into it and which uses size bytes of memory.
func ImageHeader(entryOffset, size uint64) []byte {
	h := make([]byte, ImageHeaderSize)
	le := binary.LittleEndian
	// code0, code1: auipc t0, hi; jalr zero, lo(t0), reaching entryOffset
	// from the header's first byte (a jal reaches only 1 MiB).
	hi := (entryOffset + 0x800) >> 12
	lo := entryOffset - hi<<12
	le.PutUint32(h[0:], uint32(hi<<12)|5<<7|0x17)          // auipc t0, hi
	le.PutUint32(h[4:], (uint32(lo)&0xfff)<<20|5<<15|0x67) // jalr zero, lo(t0)
	le.PutUint64(h[8:], ImageTextOffset)
	le.PutUint64(h[16:], size)
	le.PutUint64(h[24:], 0) // flags: little-endian kernel
	le.PutUint32(h[32:], imageVersion)
	copy(h[48:], imageMagic)
	copy(h[56:], imageMagic2)
	return h
}
