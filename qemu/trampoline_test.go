package qemu

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	objdump, err := exec.LookPath("riscv64-linux-gnu-objdump")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("riscv64-linux-gnu-objdump missing: .ci/run installs binutils-riscv64-linux-gnu")
		}
		t.Skip("riscv64-linux-gnu-objdump not installed; decoding not cross-checked")
	}
	path := filepath.Join(t.TempDir(), "tramp.bin")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(objdump, "-D", "-b", "binary", "-m", "riscv:rv64", "-M", "no-aliases", path).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	for _, want := range []string{"auipc\tt0,0x0", "ld\tt0,16(t0)", "jalr\tzero,0(t0)", "addi\tzero,zero,0"} {
		if !strings.Contains(string(out), want) {
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
