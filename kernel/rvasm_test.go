package kernel

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEncodersAgainstObjdump decodes the encoders' output with GNU objdump.
func TestEncodersAgainstObjdump(t *testing.T) {
	objdump, err := exec.LookPath("riscv64-linux-gnu-objdump")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("riscv64-linux-gnu-objdump missing: .ci/run installs binutils-riscv64-linux-gnu")
		}
		t.Skip("riscv64-linux-gnu-objdump not installed (binutils-riscv64-linux-gnu)")
	}
	prog := []uint32{rvADDI(regA7, regZero, 64), rvLUI(regA1, 0x11), rvLD(regA0, regA1, 8), rvECALL(), rvJ0(), rvADDI(regA0, regZero, -1)}
	want := []string{"addi\ta7,zero,64", "lui\ta1,0x11", "ld\ta0,8(a1)", "ecall", "jal\tzero,", "addi\ta0,zero,-1"}
	buf := make([]byte, 4*len(prog))
	for i, w := range prog {
		binary.LittleEndian.PutUint32(buf[4*i:], w)
	}
	path := filepath.Join(t.TempDir(), "prog.bin")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(objdump, "-D", "-b", "binary", "-m", "riscv:rv64", "-M", "no-aliases", path).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Errorf("disassembly lacks %q:\n%s", w, out)
		}
	}
}
