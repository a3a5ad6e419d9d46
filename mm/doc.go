// Package mm owns physical memory and translation: the 4 KiB frame
// allocator, Sv39 page tables, and user address spaces (VMAs, page faults,
// copy-on-write fork, shared memory, and the one check of user address
// ranges that every memory call makes, UserRange).
//
// The frame allocator and the page-table primitives work on physical
// addresses held as uintptr and touch memory through them directly: the
// kernel reaches every physical frame at its own address. They neither
// allocate from the Go heap nor take a Go lock, so the trap handler can use
// them. Address spaces are ordinary Go code, run by system calls and the
// page-fault path under their process's lock. The host tests run all of it
// over a Go buffer standing in for RAM (mmtest).
package mm
