// Package kernel owns the process model: processes, threads, clone and
// fork, execve (the loader builds the new address space), signals, wait,
// futexes, process groups and sessions, limits, CPU time, the OOM killer,
// and the table of processes and tasks, which procfs reads through
// ProcfsSource. The boot sequence is package boot's; ELF loading, the
// initial stack and the vDSO are package loader's.
package kernel
