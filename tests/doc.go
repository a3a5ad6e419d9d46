// Package tests holds the integration tests that boot QEMU: the kernel's
// own (kernel_test.go) and jiege's end to end (jiege_test.go). Each test
// starts its QEMU itself and kills it, by PID, when it ends.
//
// JIEGE_SMP=N boots every kernel test's guest with N harts (default 1)
// unless the test chooses its own -smp: `JIEGE_SMP=4 go test ./tests -run X`
// runs test X on four harts.
package tests
