// Package sysno names the Linux riscv64 system calls. It is a leaf: the
// trap handler uses it for its messages, the syscall table for tracing.
package sysno

//go:generate go run ./internal/gen

// Name returns the name of Linux riscv64 system call nr, or "unknown". It
// does not allocate, so the trap handler may call it.
//
//go:nosplit
func Name(nr uint64) string {
	if nr < uint64(len(names)) && names[nr] != "" {
		return names[nr]
	}
	return "unknown"
}
