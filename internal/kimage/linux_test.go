package kimage

import (
	"encoding/binary"
	"testing"
)

// TestImageHeader checks the header's fields where Linux's
// boot-image-header.rst puts them, and that code0/code1 decode as
// auipc t0 and jalr zero, t0 reaching the entry.
func TestImageHeader(t *testing.T) {
	le := binary.LittleEndian
	for _, entry := range []uint64{0x40, 0x7ff, 0x800, 0x1807e0, 0x180e68} {
		h := ImageHeader(entry, 0x277b800)
		if len(h) != 64 {
			t.Fatalf("header is %d bytes", len(h))
		}
		auipc, jalr := le.Uint32(h[0:]), le.Uint32(h[4:])
		if auipc&0x7f != 0x17 || auipc>>7&31 != 5 {
			t.Fatalf("code0 %#x is not auipc t0", auipc)
		}
		if jalr&0x7f != 0x67 || jalr>>7&31 != 0 || jalr>>15&31 != 5 || jalr>>12&7 != 0 {
			t.Fatalf("code1 %#x is not jalr zero, t0", jalr)
		}
		target := int64(int32(auipc&^0xfff)) + int64(int32(jalr)>>20)
		if uint64(target) != entry {
			t.Errorf("entry %#x: the header jumps to %#x", entry, target)
		}
		if le.Uint64(h[8:]) != 0x200000 || le.Uint64(h[16:]) != 0x277b800 || le.Uint64(h[24:]) != 0 ||
			le.Uint32(h[32:]) != 2 || string(h[48:56]) != "RISCV\x00\x00\x00" || string(h[56:60]) != "RSC\x05" {
			t.Errorf("header fields: % x", h)
		}
	}
}

// TestTrapECALLs: only whole 4-byte ECALLs are rewritten, found by
// decoding from the start, not an 0x00000073 word that straddles
// compressed instructions.
func TestTrapECALLs(t *testing.T) {
	code := []byte{
		0x73, 0x00, 0x00, 0x00, // ecall
		0x01, 0x00, // c.nop
		0x73, 0x00, 0x00, 0x00, // ecall at a 2-byte boundary
		0x13, 0x00, 0x73, 0x00, // addi zero, zero, 7: its upper half and
		0x00, 0x00, 0x00, 0x00, // the two compressed words after it read as an ecall
	}
	n := trapECALLs(code)
	if n != 2 {
		t.Fatalf("rewrote %d ECALLs, want 2", n)
	}
	le := binary.LittleEndian
	if le.Uint32(code[0:]) != ebreak || le.Uint32(code[6:]) != ebreak {
		t.Errorf("ECALLs not made EBREAKs: % x", code)
	}
	if le.Uint32(code[12:]) != ecall {
		t.Errorf("rewrote bytes that are no ECALL: % x", code)
	}
}
