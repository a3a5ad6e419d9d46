package kernel

import (
	"fmt"

	arch "github.com/jiege-go/jiege/arch/riscv64"
)

// Main is the kernel's main.main.
func Main() {
	b := arch.Boot()
	fmt.Printf("Jiege-Go kernel: main at %d us\n", arch.TicksToNs(arch.Ticks()-b.BootTicks)/1000)
	arch.PowerOff(0)
}
