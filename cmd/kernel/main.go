//go:build riscv64

// Command kernel is the Jiege-Go kernel image. The boot entry point is
// arch/riscv64.Entry (set with the linker's -E); it starts the Go runtime,
// which arrives here. main wires the system call layer into the kernel.
package main

import (
	"github.com/jiege-go/jiege/kernel/boot"
	"github.com/jiege-go/jiege/syscall"
)

func main() {
	boot.Main(boot.SyscallLayer{Dispatch: syscall.Dispatch})
}
