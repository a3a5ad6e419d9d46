// Package linux is the Linux riscv64 ABI: the structures system calls,
// signal frames, sockets and netlink messages carry, laid out as the
// kernel's uapi headers lay them out (asm-generic, little-endian, LP64),
// and their encoding. It is a leaf: syscall, kernel, fs, net and arch use
// it, and it imports only the standard library and golang.org/x/sys/unix.
// The system call numbers and names are in its sysno sub-package.
//
// Blank fields are padding and encode as zeros. Byte order and byte
// offsets of ABI structures are decided here and nowhere else.
package linux
