// Package riscv64 owns the processor: the boot entry, the trap vector and
// the scheduler of kernel threads, the CSRs, PMP, the CLINT timer and the
// PLIC, FP state, RunUser (the way into U-mode), and the Linux system calls
// that the kernel's own Go runtime makes.
//
// The kernel runs in M-mode. Its Go runtime believes it runs on Linux: every
// ECALL it makes lands in trap(), which serves it on a per-hart trap stack
// without allocating, without Go locks and without writing heap pointers.
// The runtime's memory comes from mmap, which M-mode could only serve
// identity-mapped; instead the kernel's threads run with mstatus.MPRV set, so
// their loads and stores (not their instruction fetches) go through a kernel
// Sv39 page table: RAM and devices identity-mapped with gigapages, and the
// runtime's mmap window demand-paged. The trap handler itself runs untranslated.
package riscv64
