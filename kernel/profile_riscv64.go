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

// mappingKey identifies a recorded mapping; file identifies the file for
// its life: the address of an executable's data as exec loaded it, or
// the mm.FileSource of a file that mmap mapped.
type mappingKey struct {
	pid, start, end, offset uintptr
	file                    any
}

type mappingRecorder struct {
	seen   map[mappingKey]bool
	images map[imageKey]bool // executables whose segments are recorded
	hashes map[any]hashedFile
	full   bool
}

// hashedFile is how the host names a file: its size and the hash of its
// first 4 KiB.
type hashedFile struct{ size, hash uint64 }

type imageKey struct {
	pid  int
	file *byte
}

func newMappingRecorder() *mappingRecorder {
	return &mappingRecorder{seen: map[mappingKey]bool{}, images: map[imageKey]bool{}, hashes: map[any]hashedFile{}}
}

// scan records every executable file mapping not recorded yet: those
// that mmap made (the VMA holds its file's memory, mm.VMA.Cache or
// Shared), and the executable and its interpreter, which exec copied in
// at fixed biases.
func (r *mappingRecorder) scan() {
	for _, p := range Processes() {
		p.Lock()
		var vmas []mm.VMA
		if p.AS != nil {
			vmas = p.AS.VMAs()
		}
		p.Unlock()
		for _, v := range vmas {
			if v.Perm&mm.PTEExec == 0 {
				continue
			}
			switch {
			case len(v.File) > 0:
				r.record(p.PID, v.Start, v.End, v.Offset, v.File)
			case v.Cache != nil && v.Cache.Source() != nil:
				r.recordFile(p.PID, v.Start, v.End, v.Offset, v.Cache.Source())
			case v.Shared != nil && v.Shared.Source() != nil:
				r.recordFile(p.PID, v.Start, v.End, v.Offset, v.Shared.Source())
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

// record adds one mapping of an executable's data, as exec loaded it, to
// the profiler's table once.
func (r *mappingRecorder) record(pid int, start, end, offset uintptr, file []byte) {
	r.add(mappingKey{uintptr(pid), start, end, offset, unsafe.SliceData(file)}, func() (int64, []byte) { return int64(len(file)), file })
}

// recordFile adds one mapping of a file that mmap mapped to the
// profiler's table once; the file is read under its lock.
func (r *mappingRecorder) recordFile(pid int, start, end, offset uintptr, file mm.FileSource) {
	r.add(mappingKey{uintptr(pid), start, end, offset, file}, func() (int64, []byte) {
		head := make([]byte, mm.PageSize)
		file.Lock()
		defer file.Unlock()
		size := file.Size()
		file.ReadPage(0, head)
		return size, head[:min(size, mm.PageSize)]
	})
}

// add records the mapping k once; contents gives the file's size and
// its first bytes (at least its first 4 KiB, for profiling.FileHash)
// the first time the file is seen. The host names the file by both.
func (r *mappingRecorder) add(k mappingKey, contents func() (size int64, head []byte)) {
	if r.seen[k] || r.full {
		return
	}
	sum, ok := r.hashes[k.file]
	if !ok {
		size, head := contents()
		sum = hashedFile{uint64(size), profiling.FileHash(head)}
		r.hashes[k.file] = sum
	}
	m := profiling.Mapping{PID: uint64(k.pid), Start: uint64(k.start), End: uint64(k.end),
		Offset: uint64(k.offset), FileSize: sum.size, FileHash: sum.hash}
	if !profiling.RecordMapping(m) {
		fmt.Printf("profiling: the mapping table is full (%d); later mappings go unnamed\n", profiling.MaxMappings)
		r.full = true
		return
	}
	r.seen[k] = true
}
