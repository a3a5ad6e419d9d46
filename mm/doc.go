// Package mm owns physical memory and translation: the 4 KiB frame
// allocator and Sv39 page tables.
//
// Everything here works on physical addresses held as uintptr and touches
// memory through them directly: the kernel reaches every physical frame at
// its own address (identity mapping). Nothing here allocates from the Go heap
// or takes a Go lock, so the trap handler can use it; the host tests run the
// same code over a Go buffer standing in for RAM.
package mm
