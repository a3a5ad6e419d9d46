package mm

import "errors"

// Errors of user address ranges. Linux answers them differently per call
// (munmap: EINVAL for both; mprotect, mincore: ENOMEM; madvise: EINVAL for
// a wrap, ENOMEM beyond user space), so the syscall layer maps them.
var (
	ErrUnaligned = errors.New("address not page aligned")
	ErrWraps     = errors.New("range wraps around the address space")
	ErrOutside   = errors.New("range outside user memory")
)

// UserRange checks the user range [addr, addr+length) before any arithmetic
// on it, as every memory call does: addr must be page aligned, length is
// rounded up to whole pages without wrapping, and the range must end at or
// below MaxUserVA (the kernel lies above it; Linux's TASK_SIZE). A zero
// length gives the empty range at addr; callers decide what that means.
func UserRange(addr, length uintptr) (start, end uintptr, err error) {
	if addr%PageSize != 0 {
		return 0, 0, ErrUnaligned
	}
	if length == 0 {
		return addr, addr, nil
	}
	size := (length + PageSize - 1) &^ (PageSize - 1)
	if size == 0 || addr+size < addr {
		return 0, 0, ErrWraps
	}
	if addr > MaxUserVA || size > MaxUserVA-addr {
		return 0, 0, ErrOutside
	}
	return addr, addr + size, nil
}
