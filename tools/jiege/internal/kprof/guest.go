package kprof

import (
	"debug/elf"
	"fmt"

	"github.com/jiege-go/jiege/profiling"
)

// Symbols of the profiler's tables in the kernel's ELF symbol table.
const (
	ringSymbol     = "github.com/jiege-go/jiege/profiling.Ring"
	mappingsSymbol = "github.com/jiege-go/jiege/profiling.Mappings"
)

// Tables are the physical addresses and sizes of the profiler's tables:
// their symbols' addresses moved to the physical load address of the
// segment that holds them.
type Tables struct {
	Ring, RingSize         uint64
	Mappings, MappingsSize uint64
}

// FindTables looks the tables up in the kernel's symbol table.
func FindTables(kernel string) (Tables, error) {
	var t Tables
	f, err := elf.Open(kernel)
	if err != nil {
		return t, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return t, fmt.Errorf("%s: %v", kernel, err)
	}
	for _, s := range syms {
		switch s.Name {
		case ringSymbol:
			t.Ring, t.RingSize = s.Value, s.Size
		case mappingsSymbol:
			t.Mappings, t.MappingsSize = s.Value, s.Size
		}
	}
	if t.Ring == 0 || t.Mappings == 0 {
		return t, fmt.Errorf("%s: no profiler (symbols %s and %s)", kernel, ringSymbol, mappingsSymbol)
	}
	t.Ring, t.Mappings = physical(f, t.Ring), physical(f, t.Mappings)
	if want := uint64(profiling.HeaderSize + profiling.RingSamples*profiling.SampleSize); t.RingSize != want {
		return t, fmt.Errorf("%s: profiler ring of %d bytes, this jiege reads %d: rebuild one or the other", kernel, t.RingSize, want)
	}
	return t, nil
}

// physical is where the loadable segment holding va puts it in memory.
func physical(f *elf.File, va uint64) uint64 {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && va >= p.Vaddr && va < p.Vaddr+p.Memsz {
			return va - p.Vaddr + p.Paddr
		}
	}
	return va
}

// Head reads the ring's header: where the next sample goes.
func (q *QMP) Head(t Tables, tmp string) (profiling.Header, error) {
	b, err := q.ReadPhys(t.Ring, profiling.HeaderSize, tmp)
	if err != nil {
		return profiling.Header{}, err
	}
	return DecodeHeader(b)
}

// Collect stops the guest, reads the ring and the mappings, resumes it,
// and returns the samples taken since the head was since.
func (q *QMP) Collect(t Tables, since uint64, tmp string) (*Dump, error) {
	if _, err := q.Execute("stop", nil); err != nil {
		return nil, err
	}
	ring, err := q.ReadPhys(t.Ring, t.RingSize, tmp)
	var maps []byte
	if err == nil {
		maps, err = q.ReadPhys(t.Mappings, t.MappingsSize, tmp)
	}
	if _, cerr := q.Execute("cont", nil); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return Decode(ring, maps, since)
}
