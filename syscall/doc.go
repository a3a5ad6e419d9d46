// Package syscall is the Linux riscv64 system call layer for user programs:
// the table from numbers to handlers, and the handlers, one file per
// family. A handler decodes its arguments, copies user memory in or out,
// and calls into the package that owns the object (kernel, mm, fs). It
// never touches hardware. Errors are Linux errnos (golang.org/x/sys/unix).
package syscall
