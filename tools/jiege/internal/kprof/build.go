package kprof

import (
	"fmt"
	"path"
	"strconv"
	"time"

	"github.com/google/pprof/profile"
)

// Sources are what samples are symbolised from.
type Sources struct {
	Kernel     *GoSymbols
	KernelPath string // shown as the kernel mapping's file
	Files      *Files // the root filesystem's files; nil: user pcs stay unnamed
}

// Build makes a CPU profile of the dump's samples. Each sample is one
// location, the interrupted pc (no call stack: Go on riscv64 keeps no
// frame pointers); labels give its process ("pid": a number, or "kernel")
// and the hart it ran on.
func Build(d *Dump, src Sources, duration time.Duration) (*profile.Profile, error) {
	if d.Header.RateHz == 0 {
		return nil, fmt.Errorf("profile: the ring has no sampling rate")
	}
	period := int64(time.Second) / int64(d.Header.RateHz)
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        period,
		DurationNanos: int64(duration),
		TimeNanos:     time.Now().Add(-duration).UnixNano(),
	}
	b := &builder{p: p, src: src, d: d, locs: map[locKey]*profile.Location{}, funcs: map[funcKey]*profile.Function{},
		userMaps: map[int]*profile.Mapping{}, elfs: map[string]*ELFSymbols{}}
	if src.Kernel != nil {
		b.kernelMap = b.addMapping(&profile.Mapping{Start: src.Kernel.start, Limit: src.Kernel.end, File: src.KernelPath,
			HasFunctions: true, HasFilenames: true, HasLineNumbers: true})
	}
	first := d.Header.Head - uint64(len(d.Samples))
	for i, s := range d.Samples {
		var loc *profile.Location
		if s.PID == 0 {
			loc = b.kernelLocation(s.PC)
		} else {
			loc = b.userLocation(s.PID, s.PC, first+uint64(i))
		}
		p.Sample = append(p.Sample, &profile.Sample{
			Location: []*profile.Location{loc},
			Value:    []int64{1, period},
			Label:    map[string][]string{"pid": {pidLabel(s.PID)}, "hart": {strconv.Itoa(int(s.Hart))}},
		})
	}
	return p, p.CheckValid()
}

func pidLabel(pid uint32) string {
	if pid == 0 {
		return "kernel"
	}
	return strconv.Itoa(int(pid))
}

type locKey struct {
	mapping uint64 // the profile mapping's ID; 0 when none
	addr    uint64
	name    string // for pcs outside any mapping
}

type funcKey struct{ name, file string }

type builder struct {
	p         *profile.Profile
	src       Sources
	d         *Dump
	kernelMap *profile.Mapping
	userMaps  map[int]*profile.Mapping // by index in Dump.Mappings
	elfs      map[string]*ELFSymbols   // by path in the tree; nil when unreadable
	locs      map[locKey]*profile.Location
	funcs     map[funcKey]*profile.Function
}

func (b *builder) addMapping(m *profile.Mapping) *profile.Mapping {
	m.ID = uint64(len(b.p.Mapping) + 1)
	b.p.Mapping = append(b.p.Mapping, m)
	return m
}

func (b *builder) function(name, file string) *profile.Function {
	k := funcKey{name, file}
	if f := b.funcs[k]; f != nil {
		return f
	}
	f := &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name, Filename: file}
	b.funcs[k] = f
	b.p.Function = append(b.p.Function, f)
	return f
}

// location returns the location of addr in m, made with line when new.
func (b *builder) location(m *profile.Mapping, addr uint64, name string, line func() profile.Line) *profile.Location {
	k := locKey{addr: addr, name: name}
	if m != nil {
		k.mapping = m.ID
	}
	if l := b.locs[k]; l != nil {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Mapping: m, Address: addr, Line: []profile.Line{line()}}
	b.locs[k] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

func (b *builder) kernelLocation(pc uint64) *profile.Location {
	return b.location(b.kernelMap, pc, "", func() profile.Line {
		if b.src.Kernel != nil {
			if fn, file, line, ok := b.src.Kernel.Lookup(pc); ok {
				return profile.Line{Function: b.function(fn, file), Line: int64(line)}
			}
		}
		return profile.Line{Function: b.function("[kernel]", "")}
	})
}

// userLocation names a user pc by the function of the file mapped there,
// or "[file]" when the file has no symbol for it, or "[user]" when no
// mapping was recorded for it (the vDSO, or a process that lived shorter
// than the mapping scan).
func (b *builder) userLocation(pid uint32, pc, index uint64) *profile.Location {
	i := b.d.mappingOf(pid, pc, index)
	if i < 0 {
		return b.location(nil, pc, "[user]", func() profile.Line { return profile.Line{Function: b.function("[user]", "")} })
	}
	dm := b.d.Mappings[i]
	file := ""
	if b.src.Files != nil {
		file = b.src.Files.Path(dm)
	}
	m := b.userMaps[i]
	if m == nil {
		m = b.addMapping(&profile.Mapping{Start: dm.Start, Limit: dm.End, Offset: dm.Offset, File: file, HasFunctions: file != ""})
		b.userMaps[i] = m
	}
	return b.location(m, pc, "", func() profile.Line {
		name := "[" + path.Base(file) + "]"
		if file == "" {
			name = "[user]"
		} else if syms := b.elf(file); syms != nil {
			if fn, ok := syms.Lookup(pc - dm.Start + dm.Offset); ok {
				name = fn
			}
		}
		return profile.Line{Function: b.function(name, file)}
	})
}

func (b *builder) elf(file string) *ELFSymbols {
	if e, ok := b.elfs[file]; ok {
		return e
	}
	e, err := OpenELF(b.src.Files.HostPath(file))
	if err != nil {
		e = nil
	}
	b.elfs[file] = e
	return e
}
