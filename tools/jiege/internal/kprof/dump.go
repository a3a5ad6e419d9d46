// Package kprof turns what the kernel's sampling profiler leaves in guest
// memory (package profiling: a ring of pcs and a table of executable
// mappings) into a pprof profile: it reads that memory from QEMU over
// QMP, decodes it, and symbolises kernel pcs from the kernel's ELF and
// user pcs from the ELF files of the root filesystem.
package kprof

import (
	"encoding/binary"
	"fmt"

	"github.com/jiege-go/jiege/profiling"
)

// Dump is the profiler's state read from a guest: the samples of a window
// and every executable mapping recorded.
type Dump struct {
	Header   profiling.Header
	Samples  []profiling.Sample // in the order they were taken
	Mappings []profiling.Mapping
	Lost     uint64 // samples of the window the ring had overwritten
}

// DecodeHeader decodes the ring's header; it fails unless profiling is on.
func DecodeHeader(ring []byte) (profiling.Header, error) {
	var h profiling.Header
	if len(ring) < profiling.HeaderSize {
		return h, fmt.Errorf("profiler ring: %d bytes, want at least %d", len(ring), profiling.HeaderSize)
	}
	le := binary.LittleEndian
	h = profiling.Header{Magic: le.Uint64(ring), RateHz: le.Uint64(ring[8:]), Timebase: le.Uint64(ring[16:]), Head: le.Uint64(ring[24:])}
	if h.Magic != profiling.Magic {
		return h, fmt.Errorf("profiler ring: magic %#x, want %#x: was the kernel booted with profile=HZ?", h.Magic, uint64(profiling.Magic))
	}
	return h, nil
}

// Decode decodes the whole ring and the mapping table, keeping the samples
// taken since the ring's head was since (a header read earlier).
func Decode(ring, maps []byte, since uint64) (*Dump, error) {
	h, err := DecodeHeader(ring)
	if err != nil {
		return nil, err
	}
	if want := profiling.HeaderSize + profiling.RingSamples*profiling.SampleSize; len(ring) < want {
		return nil, fmt.Errorf("profiler ring: %d bytes, want %d", len(ring), want)
	}
	if since > h.Head {
		return nil, fmt.Errorf("profiler ring: head went back from %d to %d (did the guest reboot?)", since, h.Head)
	}
	d := &Dump{Header: h}
	first := since
	if h.Head-since > profiling.RingSamples {
		first = h.Head - profiling.RingSamples
		d.Lost = first - since
	}
	le := binary.LittleEndian
	for i := first; i < h.Head; i++ {
		b := ring[profiling.HeaderSize+(i%profiling.RingSamples)*profiling.SampleSize:]
		d.Samples = append(d.Samples, profiling.Sample{PC: le.Uint64(b), PID: le.Uint32(b[8:]), Hart: le.Uint32(b[12:])})
	}
	if len(maps) < 8 {
		return nil, fmt.Errorf("profiler mappings: %d bytes", len(maps))
	}
	n := le.Uint64(maps)
	if n > profiling.MaxMappings || len(maps) < 8+int(n)*profiling.MappingSize {
		return nil, fmt.Errorf("profiler mappings: count %d in %d bytes", n, len(maps))
	}
	for i := range int(n) {
		b := maps[8+i*profiling.MappingSize:]
		d.Mappings = append(d.Mappings, profiling.Mapping{PID: le.Uint64(b), Start: le.Uint64(b[8:]), End: le.Uint64(b[16:]),
			Offset: le.Uint64(b[24:]), FileSize: le.Uint64(b[32:]), FileHash: le.Uint64(b[40:]), Since: le.Uint64(b[48:])})
	}
	return d, nil
}

// mappingOf returns the index of the mapping that holds a user sample's
// pc: of the same process, containing the pc, recorded last before the
// sample (a process that exec'd has had several), else first after it.
func (d *Dump) mappingOf(pid uint32, pc, index uint64) int {
	best := -1
	for i, m := range d.Mappings {
		if m.PID != uint64(pid) || pc < m.Start || pc >= m.End {
			continue
		}
		switch {
		case best < 0:
			best = i
		case m.Since <= index && (d.Mappings[best].Since > index || m.Since > d.Mappings[best].Since):
			best = i
		case m.Since > index && d.Mappings[best].Since > index && m.Since < d.Mappings[best].Since:
			best = i
		}
	}
	return best
}
