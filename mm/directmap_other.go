//go:build !riscv64

package mm

// DirectMap is 0 on the host: the tests' physical memory is a Go buffer.
const DirectMap = uintptr(0)
