// Package kernel owns the kernel's life after the Go runtime is up: the boot
// sequence (device tree, memory map, devices, command line), and later
// processes, threads, ELF loading, exec, fork, signals and wait.
package kernel
