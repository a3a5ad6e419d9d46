//go:build riscv64

package mm

// DirectMap is where the kernel sees physical memory: physical address pa
// at virtual DirectMap + pa, in every address space (arch/riscv64 maps it).
const DirectMap = KernelDirectMap
