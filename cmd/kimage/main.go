// Command kimage gives a linked kernel ELF its physical load addresses, and
// records in it the BSS range the kernel may give back to its frame
// allocator at boot (see internal/kimage). With -image it instead makes the
// ELF an SBI firmware's payload, which runs wherever it is loaded (its own
// ECALLs trapped, kimage.TrapECALLs), and writes it as a RISC-V Linux Image.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/jiege-go/jiege/internal/kimage"
	"github.com/jiege-go/jiege/mm"
)

func main() {
	image := flag.String("image", "", "also write the kernel, made an SBI payload, as a Linux Image to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: kimage [-image IMAGE] KERNEL.elf")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *image); err != nil {
		fmt.Fprintln(os.Stderr, "kimage:", err)
		os.Exit(1)
	}
}

func run(path, image string) error {
	// The Image runs wherever its firmware loads it: its ELF keeps the
	// linked addresses, which LinuxImage lays out flat.
	if image == "" {
		if err := kimage.LoadPhysical(path, uint64(mm.KernelDirectMap)); err != nil {
			return err
		}
	}
	if err := kimage.RecordUnused(path); err != nil {
		return err
	}
	if err := kimage.TrimUnused(path); err != nil {
		return err
	}
	if image == "" {
		return nil
	}
	if _, err := kimage.TrapECALLs(path); err != nil {
		return err
	}
	img, err := kimage.LinuxImage(path)
	if err != nil {
		return err
	}
	return os.WriteFile(image, img, 0o644)
}
