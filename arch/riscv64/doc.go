// Package riscv64 owns the processor: the boot entry (the only M-mode code,
// with the M-mode handler that turns IPIs into supervisor software
// interrupts), the trap vector and the scheduler of kernel threads, the
// CSRs, the timer (Sstc), the CLINT's IPIs and the PLIC, FP state, RunUser
// (the way into U-mode), the kernel's half of every page table, and the
// Linux system calls that the kernel's own Go runtime makes.
//
// The kernel runs in S-mode. Its Go runtime believes it runs on Linux: every
// ECALL it makes lands in trap(), which serves it on a per-hart trap stack
// without allocating, without Go locks and without writing heap pointers.
// Every page table maps the kernel above user memory: physical memory in
// the direct map (the image is linked there) and the runtime's mmap window,
// demand-paged, above it. A trap does not change the table, so a system
// call runs on the caller's own.
package riscv64
