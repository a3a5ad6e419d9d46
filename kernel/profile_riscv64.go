package kernel

import (
	"bytes"
	"debug/elf"
	"fmt"
	"time"
	"unsafe"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/profiling"
)

// mappingScanPeriod is how often the executable mappings of every
// process are recorded for the profiler: a process that lives shorter
// may have its samples left without a file.
const mappingScanPeriod = 100 * time.Millisecond

// startProfiling turns on the timer's pc sampling (profile=HZ) and keeps
// the profiler's table of executable mappings up to date, so that the
// host can name the file behind every user pc.
func startProfiling(hz int) {
	arch.EnableProfiling(uint64(hz))
	fmt.Printf("profiling: %d samples/s per hart; ring %d samples\n", hz, profiling.RingSamples)
	go func() {
		r := newMappingRecorder()
		for {
			r.scan()
			time.Sleep(mappingScanPeriod)
		}
	}()
}

// mappingKey identifies a recorded mapping; file is the address of the
// file's data, which a file keeps for its life.
type mappingKey struct {
	pid, start, end, offset uintptr
	file                    *byte
}

type mappingRecorder struct {
	seen   map[mappingKey]bool
	images map[imageKey]bool // executables whose segments are recorded
	hashes map[*byte]uint64
	full   bool
}

type imageKey struct {
	pid  int
	file *byte
}

func newMappingRecorder() *mappingRecorder {
	return &mappingRecorder{seen: map[mappingKey]bool{}, images: map[imageKey]bool{}, hashes: map[*byte]uint64{}}
}

// scan records every executable file mapping not recorded yet: those
// that mmap made (the VMA names its file), and the executable and its
// interpreter, which exec copied in at fixed biases.
func (r *mappingRecorder) scan() {
	for _, p := range Processes() {
		p.Lock()
		var vmas []mm.VMA
		if p.AS != nil {
			vmas = p.AS.VMAs()
		}
		p.Unlock()
		for _, v := range vmas {
			if v.Perm&mm.PTEExec != 0 && len(v.File) > 0 {
				r.record(p.PID, v.Start, v.End, v.Offset, v.File)
			}
		}
		p.mu.Lock()
		exe := p.Exe
		p.mu.Unlock()
		n, err := p.Root.Lookup(nil, exe, true)
		if err != nil || len(n.Data) == 0 {
			continue
		}
		if k := (imageKey{p.PID, unsafe.SliceData(n.Data)}); !r.images[k] {
			r.images[k] = true
			r.recordImage(p, n.Data, pieBias, true)
		}
	}
}

// recordImage records the executable segments of an ELF file that exec
// loaded at bias (ET_EXEC files at their own addresses), and those of its
// interpreter.
func (r *mappingRecorder) recordImage(p *Process, data []byte, bias uintptr, withInterp bool) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return
	}
	if f.Type == elf.ET_EXEC {
		bias = 0
	}
	for _, prog := range f.Progs {
		switch {
		case prog.Type == elf.PT_LOAD && prog.Flags&elf.PF_X != 0:
			start := (uintptr(prog.Vaddr) + bias) &^ (mm.PageSize - 1)
			end := (uintptr(prog.Vaddr+prog.Memsz) + bias + mm.PageSize - 1) &^ (mm.PageSize - 1)
			r.record(p.PID, start, end, uintptr(prog.Off)&^(mm.PageSize-1), data)
		case prog.Type == elf.PT_INTERP && withInterp && prog.Off+prog.Filesz <= uint64(len(data)):
			name := string(bytes.TrimRight(data[prog.Off:prog.Off+prog.Filesz], "\x00"))
			if n, err := p.Root.Lookup(nil, name, true); err == nil {
				r.recordImage(p, n.Data, interpBias, false)
			}
		}
	}
}

// record adds one mapping of file to the profiler's table once.
func (r *mappingRecorder) record(pid int, start, end, offset uintptr, file []byte) {
	k := mappingKey{uintptr(pid), start, end, offset, unsafe.SliceData(file)}
	if r.seen[k] || r.full {
		return
	}
	h, ok := r.hashes[k.file]
	if !ok {
		h = profiling.FileHash(file)
		r.hashes[k.file] = h
	}
	m := profiling.Mapping{PID: uint64(pid), Start: uint64(start), End: uint64(end),
		Offset: uint64(offset), FileSize: uint64(len(file)), FileHash: h}
	if !profiling.RecordMapping(m) {
		fmt.Printf("profiling: the mapping table is full (%d); later mappings go unnamed\n", profiling.MaxMappings)
		r.full = true
		return
	}
	r.seen[k] = true
}
