// Package rvasm owns the RV64 instruction encoders and the small label
// assembler the kernel writes its own machine code with: the vDSO's
// functions (kernel/loader/internal/genvdso) and the boot selftest's user
// programs (package boot), without a cross toolchain at build.
package rvasm
