// Package loader owns what a new program is made of: reading an ELF
// executable and its interpreter and mapping them into an mm.AddressSpace,
// the initial stack with argv, envp and the auxiliary vector, #! lines,
// Linux's limits on arguments, and the vDSO (its image, which
// internal/genvdso builds into arch/riscv64 at go generate, the symbols
// the kernel points user code at, such as SigreturnAddr, and a kernel's
// data pages, VDSO). It knows nothing of processes: package kernel calls
// it from execve.
package loader
