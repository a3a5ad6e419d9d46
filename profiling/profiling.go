// Package profiling owns the kernel's sampling profiler: the timer
// interrupt records the interrupted pc into a ring in the kernel image's
// memory, and the host reads the ring (and the table of executable
// mappings beside it) out of the stopped guest with QEMU's pmemsave,
// without the guest's help. The ring's address is the symbol of Ring in
// the kernel's ELF symbol table; kernel addresses equal physical ones.
//
// The layout below is the contract with the host (tools/jiege): it is
// decoded there from raw bytes, so every field is a little-endian uint64
// or uint32 at a fixed offset.
package profiling

import "sync/atomic"

// Sizes of the tables.
const (
	RingSamples = 1 << 15 // 32 s at 1000 Hz on one hart; the ring wraps
	MaxMappings = 1024
	MaxHarts    = 8
	// Magic marks a ring that is on (the header's first word): "jgprof01".
	Magic = 0x313066_6f7270676a
	// HeaderSize and SampleSize are the byte layout the host decodes.
	HeaderSize  = 32
	SampleSize  = 16
	MappingSize = 56
)

// Header describes the ring.
type Header struct {
	Magic    uint64 // Magic once Enable ran
	RateHz   uint64 // samples per second per hart
	Timebase uint64 // time CSR ticks per second
	Head     uint64 // samples written so far; the next goes to Head % RingSamples
}

// Sample is one interrupted pc. PID is 0 for the kernel's own code.
type Sample struct {
	PC   uint64
	PID  uint32
	Hart uint32
}

// Mapping is an executable mapping of a file in a process, recorded by
// the kernel while profiling (RecordMapping). The host finds the file by
// its size and the hash of its first bytes among the root filesystem's.
type Mapping struct {
	PID      uint64
	Start    uint64
	End      uint64
	Offset   uint64 // file offset of Start
	FileSize uint64
	FileHash uint64 // FileHash of the file's contents
	Since    uint64 // Ring.Head when the mapping was first recorded
}

// Ring is the memory the host reads: the header, then the samples.
var Ring struct {
	Header
	Samples [RingSamples]Sample
}

// Mappings is the table of executable mappings: a count, then entries.
var Mappings struct {
	Count   uint64
	Entries [MaxMappings]Mapping
}

// period is the sampling period in time CSR ticks (0: off); next holds
// each hart's next sampling time.
var (
	period uint64
	next   [MaxHarts]uint64
)

// Enable starts sampling at rateHz on every hart, given the time CSR's
// frequency. It runs once, at boot, before the timer can call Tick.
func Enable(rateHz, timebase uint64) {
	if rateHz == 0 || rateHz > timebase {
		return
	}
	Ring.RateHz, Ring.Timebase = rateHz, timebase
	Ring.Magic = Magic
	atomic.StoreUint64(&period, timebase/rateHz)
}

// On reports whether sampling is enabled.
func On() bool { return atomic.LoadUint64(&period) != 0 }

// Next returns the time CSR value at which the hart wants its next
// sample: never (all ones) while profiling is off.
//
//go:nosplit
func Next(hart int) uint64 {
	if period == 0 || uint(hart) >= MaxHarts {
		return ^uint64(0)
	}
	return next[hart]
}

// Tick is the timer interrupt's hook: when a sample is due on the hart it
// records pc (pid 0: the kernel) and schedules the next. It runs in the
// trap handler: no allocation, no locks, no pointers written.
//
//go:nosplit
func Tick(hart int, now, pc uint64, pid uint32) {
	if period == 0 || uint(hart) >= MaxHarts || now < next[hart] {
		return
	}
	// The next sample is due a period after this one was: a late
	// interrupt does not slow the rate, one that missed a period skips it.
	if n := next[hart] + period; n > now {
		next[hart] = n
	} else {
		next[hart] = now + period
	}
	i := atomic.AddUint64(&Ring.Head, 1) - 1
	Ring.Samples[i%RingSamples] = Sample{PC: pc, PID: pid, Hart: uint32(hart)}
}

// maxIdleSamples bounds the samples one Idle call records, so that a
// long sleep does not wrap the ring over what came before it.
const maxIdleSamples = 1000

// Idle accounts for the time the hart slept (in wfi, no thread to run)
// until now: a sample of pc, the kernel's idle loop, for every sampling
// time that passed meanwhile. Without it the sleep would show as one
// sample of whatever pc the hart resumed, the first interrupt after
// waking being overdue. It runs in the trap handler, as Tick.
//
//go:nosplit
func Idle(hart int, now, pc uint64) {
	if period == 0 || uint(hart) >= MaxHarts || now < next[hart] {
		return
	}
	n := (now-next[hart])/period + 1
	next[hart] += n * period
	for i := uint64(0); i < min(n, maxIdleSamples); i++ {
		j := atomic.AddUint64(&Ring.Head, 1) - 1
		Ring.Samples[j%RingSamples] = Sample{PC: pc, Hart: uint32(hart)}
	}
}

// RecordMapping adds an executable mapping to the table unless it is
// full. The kernel calls it from one goroutine (mappings are looked up
// before they are recorded), so it takes no lock.
func RecordMapping(m Mapping) bool {
	n := Mappings.Count
	if n >= MaxMappings {
		return false
	}
	m.Since = atomic.LoadUint64(&Ring.Head)
	Mappings.Entries[n] = m
	atomic.StoreUint64(&Mappings.Count, n+1)
	return true
}

// FileHash is the FNV-1a hash of a file's first 4 KiB, which with its
// size names the file among the root filesystem's.
func FileHash(data []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, b := range data[:min(len(data), 4096)] {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return h
}
