// Package objdump disassembles raw RISC-V code with GNU objdump, so that
// tests can check hand-encoded instructions against an independent decoder.
package objdump

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Disassemble returns objdump's listing of code (rv64, no pseudo-instruction
// aliases). Under CI a missing objdump fails the test; elsewhere it skips it.
func Disassemble(t testing.TB, code []byte) string {
	t.Helper()
	tool, err := exec.LookPath("riscv64-linux-gnu-objdump")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("riscv64-linux-gnu-objdump missing: .ci/run installs binutils-riscv64-linux-gnu")
		}
		t.Skip("riscv64-linux-gnu-objdump not installed (binutils-riscv64-linux-gnu)")
	}
	path := filepath.Join(t.TempDir(), "code.bin")
	if err := os.WriteFile(path, code, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "-D", "-b", "binary", "-m", "riscv:rv64", "-M", "no-aliases", path).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	return string(out)
}
