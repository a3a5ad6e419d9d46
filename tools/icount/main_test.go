package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPackageOf(t *testing.T) {
	for name, want := range map[string]string{
		"runtime.mallocgc": "runtime",
		"gvisor.dev/gvisor/pkg/tcpip/stack.(*PacketBuffer).headerView": "gvisor.dev/gvisor/pkg/tcpip/stack",
		"github.com/jiege-go/jiege/arch/riscv64.trapEntry.abi0":        "github.com/jiege-go/jiege/arch/riscv64",
		"[user]": "[user]",
	} {
		if got := packageOf(name); got != want {
			t.Errorf("packageOf(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestReadDumpSumsRetranslations: a block translated twice (two lines
// at one address) counts both.
func TestReadDumpSumsRetranslations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dump")
	os.WriteFile(path, []byte("2080010000 4 10\n2080010000 4 5\n1000 2 3\n"), 0o644)
	got, err := readDump(path)
	if err != nil {
		t.Fatal(err)
	}
	if got[0x2080010000] != 60 || got[0x1000] != 6 || len(got) != 2 {
		t.Fatalf("readDump = %v", got)
	}
	os.WriteFile(path, []byte("zz 4 10\n"), 0o644)
	if _, err := readDump(path); err == nil {
		t.Fatal("a bad line read without an error")
	}
	if nameOf(nil, 0x1000) != "[user]" || nameOf([]function{{0x2080010000, 0x2080010010, "f"}}, 0x2080010008) != "f" {
		t.Fatal("nameOf")
	}
}
