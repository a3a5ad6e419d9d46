// Package procfs owns procfs and sysfs: the synthetic directories mounted
// at /proc and /sys, whose files are generated when opened, in Linux's
// formats, from what the kernel shows through the Kernel and Process
// interfaces (the process table, each process's ids, memory, descriptors
// and mounts, the machine's CPUs and memory, the network stack's files).
package procfs
