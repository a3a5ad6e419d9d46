// Package tests holds the integration tests that boot QEMU: the kernel's
// own (kernel_test.go) and jiege's end to end (jiege_test.go). Each test
// starts its QEMU itself and kills it, by PID, when it ends.
package tests
