// Command tramp writes the boot trampoline for a kernel ELF: a -bios image
// that jumps from 0x80000000 to the kernel's entry point.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/jiege-go/jiege/qemu"
)

func main() {
	kernel := flag.String("kernel", "", "kernel ELF file")
	out := flag.String("out", "", "trampoline file to write")
	flag.Parse()
	if *kernel == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: tramp -kernel KERNEL.elf -out TRAMP.bin")
		os.Exit(2)
	}
	entry, err := qemu.ELFEntry(*kernel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tramp:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, qemu.Trampoline(entry), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "tramp:", err)
		os.Exit(1)
	}
}
