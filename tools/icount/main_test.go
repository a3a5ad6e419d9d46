package main

import "testing"

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

func TestNameOf(t *testing.T) {
	if nameOf(nil, 0x1000) != "[user]" || nameOf([]function{{0x2080010000, 0x2080010010, "f"}}, 0x2080010008) != "f" {
		t.Fatal("nameOf")
	}
}
