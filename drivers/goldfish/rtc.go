//go:build riscv64

// Package goldfish drives the Goldfish RTC, the virt machine's wall clock.
package goldfish

import arch "github.com/jiege-go/jiege/arch/riscv64"

const (
	timeLow  = 0x00 // reading it latches timeHigh
	timeHigh = 0x04
)

// ReadTime returns the RTC's time in nanoseconds since the Unix epoch.
func ReadTime(base uintptr) int64 {
	lo := arch.Read32(base + timeLow)
	hi := arch.Read32(base + timeHigh)
	return int64(hi)<<32 | int64(lo)
}
