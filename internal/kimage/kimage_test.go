package kimage

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

const (
	page     = 4096
	loadAddr = 0x8000_1000
	loadOff  = 0x1000
	symAddr  = loadAddr + 8 // a 2-page symbol, 8 bytes into the segment
	symSize  = 2 * page
)

// writeELF writes a minimal riscv64 ELF: one PT_LOAD of 3 pages of zeros
// at loadAddr, and a symbol table naming symName the symSize bytes at
// symAddr.
func writeELF(t *testing.T, symName string) string {
	t.Helper()
	le := binary.LittleEndian
	data := make([]byte, 3*page)

	strtab := append([]byte{0}, symName+"\x00"...)
	shstr := []byte("\x00.data\x00.symtab\x00.strtab\x00.shstrtab\x00")
	symtab := make([]byte, 48) // the null symbol, then ours
	le.PutUint32(symtab[24:], 1)
	symtab[24+4] = 1 // STB_LOCAL, STT_OBJECT
	le.PutUint16(symtab[24+6:], 1)
	le.PutUint64(symtab[24+8:], symAddr)
	le.PutUint64(symtab[24+16:], symSize)

	var f bytes.Buffer
	f.Write(make([]byte, loadOff))
	f.Write(data)
	symOff := f.Len()
	f.Write(symtab)
	strOff := f.Len()
	f.Write(strtab)
	shstrOff := f.Len()
	f.Write(shstr)
	for f.Len()%8 != 0 {
		f.WriteByte(0)
	}
	shOff := f.Len()
	sh := func(name, typ uint32, flags, addr uint64, off, size int, link, entsize uint32) {
		h := make([]byte, 64)
		le.PutUint32(h, name)
		le.PutUint32(h[4:], typ)
		le.PutUint64(h[8:], flags)
		le.PutUint64(h[16:], addr)
		le.PutUint64(h[24:], uint64(off))
		le.PutUint64(h[32:], uint64(size))
		le.PutUint32(h[40:], link)
		le.PutUint64(h[48:], 8)
		le.PutUint64(h[56:], uint64(entsize))
		f.Write(h)
	}
	sh(0, 0, 0, 0, 0, 0, 0, 0)
	sh(1, 1, 3, loadAddr, loadOff, len(data), 0, 0) // .data
	sh(7, 2, 0, 0, symOff, len(symtab), 3, 24)      // .symtab, names in .strtab
	sh(15, 3, 0, 0, strOff, len(strtab), 0, 0)      // .strtab
	sh(23, 3, 0, 0, shstrOff, len(shstr), 0, 0)     // .shstrtab
	b := f.Bytes()
	copy(b, "\x7fELF\x02\x01\x01")
	le.PutUint16(b[16:], 2)   // ET_EXEC
	le.PutUint16(b[18:], 243) // EM_RISCV
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[32:], 64) // program headers
	le.PutUint64(b[40:], uint64(shOff))
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[54:], 56)
	le.PutUint16(b[56:], 1)
	le.PutUint16(b[58:], 64)
	le.PutUint16(b[60:], 5)
	le.PutUint16(b[62:], 4)
	ph := b[64:]
	le.PutUint32(ph, 1)     // PT_LOAD
	le.PutUint32(ph[4:], 6) // RW
	le.PutUint64(ph[8:], loadOff)
	le.PutUint64(ph[16:], loadAddr)
	le.PutUint64(ph[24:], loadAddr)
	le.PutUint64(ph[32:], uint64(len(data)))
	le.PutUint64(ph[40:], uint64(len(data)))
	le.PutUint64(ph[48:], page)
	path := filepath.Join(t.TempDir(), "kernel.elf")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// A kernel linked in the direct map loads at its physical addresses:
// LoadPhysical moves p_paddr and e_entry down by the offset, leaves
// p_vaddr, and a second run changes nothing.
func TestLoadPhysical(t *testing.T) {
	const offset = 0x20_0000_0000
	path := writeELF(t, UnusedSymbol)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	le.PutUint64(b[24:], offset+loadAddr+0x40) // e_entry
	le.PutUint64(b[64+16:], offset+loadAddr)   // p_vaddr
	le.PutUint64(b[64+24:], offset+loadAddr)   // p_paddr
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ {
		if err := LoadPhysical(path, offset); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		entry, vaddr, paddr := le.Uint64(b[24:]), le.Uint64(b[64+16:]), le.Uint64(b[64+24:])
		if entry != loadAddr+0x40 || vaddr != offset+loadAddr || paddr != loadAddr {
			t.Errorf("run %d: entry %#x, vaddr %#x, paddr %#x; want %#x, %#x, %#x",
				run, entry, vaddr, paddr, loadAddr+0x40, offset+loadAddr, loadAddr)
		}
	}
	if err := LoadPhysical(filepath.Join(t.TempDir(), "missing"), offset); err == nil {
		t.Error("a missing file was accepted")
	}
}

// setSegment sets the one PT_LOAD's file and memory sizes of an ELF from
// writeELF.
func setSegment(t *testing.T, path string, filesz, memsz uint64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(b[64+32:], filesz)
	binary.LittleEndian.PutUint64(b[64+40:], memsz)
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func memsz(t *testing.T, path string) uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint64(b[64+40:])
}

// The unused buffer at the end of the segment's zero-filled part leaves
// the segment: its memory size ends where the buffer starts, once.
func TestTrimUnused(t *testing.T) {
	const symOff = symAddr - loadAddr
	path := writeELF(t, UnusedSymbol)
	setSegment(t, path, symOff, symOff+symSize)
	for run := 1; run <= 2; run++ {
		if err := TrimUnused(path); err != nil {
			t.Fatal(err)
		}
		if got := memsz(t, path); got != symOff {
			t.Errorf("run %d: memsz %#x, want %#x", run, got, symOff)
		}
	}
	// Not at the segment's end, or stored in the file: left alone.
	for _, c := range []struct{ filesz, memsz uint64 }{
		{symOff, symOff + symSize + page},
		{symOff + 8, symOff + symSize},
	} {
		path := writeELF(t, UnusedSymbol)
		setSegment(t, path, c.filesz, c.memsz)
		if err := TrimUnused(path); err != nil {
			t.Fatal(err)
		}
		if got := memsz(t, path); got != c.memsz {
			t.Errorf("filesz %#x, memsz %#x: trimmed to %#x", c.filesz, c.memsz, got)
		}
	}
	// A kernel without the buffer is left alone.
	path = writeELF(t, "other.symbol")
	setSegment(t, path, symOff, symOff+symSize)
	if err := TrimUnused(path); err != nil || memsz(t, path) != symOff+symSize {
		t.Errorf("without the buffer: %v, memsz %#x", err, memsz(t, path))
	}
}
