// Package kernel owns the process model: processes, threads, clone and
// fork, execve (the loader builds the new address space), signals, wait,
// futexes, process groups and sessions, limits, CPU time, the OOM killer,
// and the table of processes and tasks, which procfs reads through
// ProcfsSource. All of it hangs off a Kernel value (kernel.go), one per
// kernel: the package keeps no mutable state of its own. The boot
// sequence is package boot's; ELF loading, the initial stack and the vDSO
// are package loader's.
package kernel
