package rvasm

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/jiege-go/jiege/internal/objdump"
)

// TestEncodersAgainstObjdump decodes the encoders' output with GNU objdump.
func TestEncodersAgainstObjdump(t *testing.T) {
	prog := []uint32{ADDI(A7, Zero, 64), LUI(A1, 0x11), LD(A0, A1, 8), ECALL(), J0(), ADDI(A0, Zero, -1)}
	want := []string{"addi\ta7,zero,64", "lui\ta1,0x11", "ld\ta0,8(a1)", "ecall", "jal\tzero,", "addi\ta0,zero,-1"}
	buf := make([]byte, 4*len(prog))
	for i, w := range prog {
		binary.LittleEndian.PutUint32(buf[4*i:], w)
	}
	out := objdump.Disassemble(t, buf)
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("disassembly lacks %q:\n%s", w, out)
		}
	}
}
