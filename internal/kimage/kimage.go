// Package kimage edits a linked kernel ELF after the Go linker made it: it
// records in the image the parts of the kernel's BSS that the kernel may
// hand back to its frame allocator at boot.
//
// The Go runtime's crypto reserves a 32 MiB scratch buffer in BSS
// (crypto/internal/fips140/drbg.memory), touched only in FIPS 140-3 mode.
// gVisor's netstack imports crypto/sha1 and crypto/rand, which link it in,
// and neither a Go //go:linkname nor an assembly reference may name it, so
// the kernel cannot learn its address by itself: this package writes it
// into the kernel's variable arch/riscv64.unusedImage.
package kimage

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
)

const (
	// UnusedSymbol is the Go symbol of the BSS buffer that can be released.
	UnusedSymbol = "crypto/internal/fips140/drbg.memory"
	// RecordSymbol is the kernel's [3]uint64 variable: Marker, start, end.
	RecordSymbol = "github.com/jiege-go/jiege/arch/riscv64.unusedImage"
	// Marker is the record's first word in the kernel's source; the others are 0.
	Marker = 0x6567_616d_6964_6e75 // "unusedimage" cut to 8 bytes, little-endian
)

// RecordUnused writes the address range of UnusedSymbol into RecordSymbol in
// the ELF file at path. A kernel without UnusedSymbol keeps an empty record.
// It fails when the record is missing or does not hold Marker (a kernel
// built from other sources, or patched twice with different ranges).
func RecordUnused(path string) error {
	syms, _, err := readELF(path)
	if err != nil {
		return err
	}
	unused, record := symbol(syms, UnusedSymbol), symbol(syms, RecordSymbol)
	if record == nil || record.Size != 24 {
		return fmt.Errorf("%s: no 24-byte %s", path, RecordSymbol)
	}
	var start, end uint64
	if unused != nil {
		start, end = unused.Value, unused.Value+unused.Size
	}

	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	off, err := fileOffset(path, record.Value)
	if err != nil {
		return err
	}
	if off+24 > uint64(len(data)) {
		return fmt.Errorf("%s: %s lies past the end of the file", path, RecordSymbol)
	}
	want := make([]byte, 24)
	binary.LittleEndian.PutUint64(want, Marker)
	binary.LittleEndian.PutUint64(want[8:], start)
	binary.LittleEndian.PutUint64(want[16:], end)
	got := data[off : off+24]
	if bytes.Equal(got, want) {
		return nil
	}
	if binary.LittleEndian.Uint64(got) != Marker || binary.LittleEndian.Uint64(got[8:]) != 0 || binary.LittleEndian.Uint64(got[16:]) != 0 {
		return fmt.Errorf("%s: %s does not hold the expected marker", path, RecordSymbol)
	}
	copy(got, want)
	return os.WriteFile(path, data, 0o755)
}

// LoadPhysical makes the ELF file at path load at physical addresses: the
// kernel is linked at offset + its physical address (the direct map), and
// QEMU loads each segment at its p_paddr and starts at e_entry with paging
// off. Segments and an entry below offset are left alone, so a second run
// changes nothing.
func LoadPhysical(path string, offset uint64) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		return fmt.Errorf("%s: not a little-endian 64-bit ELF file", path)
	}
	le := binary.LittleEndian
	if f.Entry >= offset {
		le.PutUint64(data[24:], f.Entry-offset)
	}
	phoff, phentsize := le.Uint64(data[32:]), uint64(le.Uint16(data[54:]))
	for i, p := range f.Progs {
		at := phoff + uint64(i)*phentsize
		if p.Type == elf.PT_LOAD && p.Paddr >= offset && at+32 <= uint64(len(data)) {
			le.PutUint64(data[at+24:], p.Paddr-offset)
		}
	}
	return os.WriteFile(path, data, 0o755)
}

// TrimUnused ends the PT_LOAD segment whose zero-filled tail is
// UnusedSymbol where the symbol starts, so that the boot loader does not
// zero 32 MiB that nothing reads as zero: the buffer's contents do not
// matter to crypto (crypto/internal/entropy), and the kernel gives its
// frames to the frame allocator, which zeroes every frame it hands out.
// (QEMU zeroed it in guest RAM at every start, 10-15 ms of its start on
// the 2-core machine.) A kernel whose symbol is elsewhere is left as it
// is, and so is a trimmed one.
func TrimUnused(path string) error {
	syms, progs, err := readELF(path)
	if err != nil {
		return err
	}
	unused := symbol(syms, UnusedSymbol)
	if unused == nil {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	phoff, phentsize := le.Uint64(data[32:]), uint64(le.Uint16(data[54:]))
	for i, p := range progs {
		if p.Type != elf.PT_LOAD || p.Vaddr+p.Memsz != unused.Value+unused.Size || unused.Value < p.Vaddr+p.Filesz {
			continue
		}
		at := phoff + uint64(i)*phentsize
		if at+48 > uint64(len(data)) {
			return fmt.Errorf("%s: program header %d lies past the end of the file", path, i)
		}
		le.PutUint64(data[at+40:], unused.Value-p.Vaddr)
		return os.WriteFile(path, data, 0o755)
	}
	return nil
}

// readELF returns the symbols and program headers of the ELF file at path.
func readELF(path string) ([]elf.Symbol, []*elf.Prog, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return syms, f.Progs, nil
}

// symbol returns the symbol called name, or nil.
func symbol(syms []elf.Symbol, name string) *elf.Symbol {
	for i := range syms {
		if syms[i].Name == name {
			return &syms[i]
		}
	}
	return nil
}

// fileOffset returns where the byte at virtual address va is stored in the file.
func fileOffset(path string, va uint64) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && va >= p.Vaddr && va < p.Vaddr+p.Filesz {
			return p.Off + va - p.Vaddr, nil
		}
	}
	return 0, fmt.Errorf("%s: address %#x is not stored in the file", path, va)
}
