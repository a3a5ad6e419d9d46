// Command kimage gives a linked kernel ELF its physical load addresses, and
// records in it the BSS range the kernel may give back to its frame
// allocator at boot (see internal/kimage).
package main

import (
	"fmt"
	"os"

	"github.com/jiege-go/jiege/internal/kimage"
	"github.com/jiege-go/jiege/mm"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kimage KERNEL.elf")
		os.Exit(2)
	}
	if err := kimage.LoadPhysical(os.Args[1], uint64(mm.KernelDirectMap)); err != nil {
		fmt.Fprintln(os.Stderr, "kimage:", err)
		os.Exit(1)
	}
	if err := kimage.RecordUnused(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "kimage:", err)
		os.Exit(1)
	}
	if err := kimage.TrimUnused(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "kimage:", err)
		os.Exit(1)
	}
}
