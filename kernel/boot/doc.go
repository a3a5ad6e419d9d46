// Package boot owns the board and the boot sequence after the Go runtime is
// up (Main): reading the device tree and the command line, starting the
// devices and the network stack, the boot selftest, the profiler, the
// reclaimer that gives the heap's free memory back, mounting /proc, /sys,
// /dev and the tmpfs directories, and running init as process 1. It makes
// the machine's one kernel.Kernel and wires the packages below it
// together: kernel, loader, procfs, net, drivers.
package boot
