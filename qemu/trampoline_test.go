package qemu

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jiege-go/jiege/internal/objdump"
)

// TestTrampolineDecodes checks the trampoline's layout and decodes it with
// an independent disassembler.
func TestTrampolineDecodes(t *testing.T) {
	b := Trampoline(0x8001_2345)
	if len(b) != TrampolineSize {
		t.Fatalf("len = %d", len(b))
	}
	if got := binary.LittleEndian.Uint64(b[16:]); got != 0x8001_2345 {
		t.Fatalf("entry slot = %#x", got)
	}
	out := objdump.Disassemble(t, b)
	for _, want := range []string{"auipc\tt0,0x0", "ld\tt0,16(t0)", "jalr\tzero,0(t0)", "addi\tzero,zero,0"} {
		if !strings.Contains(out, want) {
			t.Errorf("disassembly lacks %q:\n%s", want, out)
		}
	}
}

func TestELFEntryRejectsNonRISCV(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ELFEntry(self); err == nil {
		t.Fatal("host test binary accepted as a RISC-V kernel")
	}
	if _, err := ELFEntry(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing file accepted")
	}
}
