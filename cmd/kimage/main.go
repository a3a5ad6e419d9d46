// Command kimage records in a linked kernel ELF the BSS range the kernel may
// give back to its frame allocator at boot, and the vDSO image of the
// kernel's own runtime (see internal/kimage).
package main

import (
	"fmt"
	"os"

	"github.com/jiege-go/jiege/internal/kimage"
	"github.com/jiege-go/jiege/kernel"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kimage KERNEL.elf")
		os.Exit(2)
	}
	if err := kimage.RecordUnused(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "kimage:", err)
		os.Exit(1)
	}
	if err := kimage.RecordVDSO(os.Args[1], kernel.VDSOImage()); err != nil {
		fmt.Fprintln(os.Stderr, "kimage:", err)
		os.Exit(1)
	}
}
