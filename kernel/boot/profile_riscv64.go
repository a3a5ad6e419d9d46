package boot

import (
	"fmt"
	"time"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/kernel"
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
func startProfiling(k *kernel.Kernel, hz int) {
	arch.EnableProfiling(uint64(hz))
	fmt.Printf("profiling: %d samples/s per hart; ring %d samples\n", hz, profiling.RingSamples)
	go func() {
		r := newMappingRecorder(k)
		for {
			r.scan()
			time.Sleep(mappingScanPeriod)
		}
	}()
}

// mappingKey identifies a recorded mapping; file is the file's
// mm.FileSource, the same for the file's life.
type mappingKey struct {
	pid, start, end, offset uintptr
	file                    mm.FileSource
}

type mappingRecorder struct {
	kernel *kernel.Kernel // whose processes' mappings it records
	seen   map[mappingKey]bool
	hashes map[mm.FileSource]hashedFile
	full   bool
}

// hashedFile is how the host names a file: its size and the hash of its
// first 4 KiB.
type hashedFile struct{ size, hash uint64 }

func newMappingRecorder(k *kernel.Kernel) *mappingRecorder {
	return &mappingRecorder{kernel: k, seen: map[mappingKey]bool{}, hashes: map[mm.FileSource]hashedFile{}}
}

// scan records every executable file mapping not recorded yet: the
// program and its interpreter, which exec maps (loader.LoadELF), and what mmap
// mapped (the dynamic loader's libraries); each VMA holds its file's
// memory (mm.VMA.Cache, or Shared for a shared mapping).
func (r *mappingRecorder) scan() {
	for _, p := range r.kernel.Processes() {
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
			case v.Cache != nil && v.Cache.Source() != nil:
				r.record(p.PID, v.Start, v.End, v.Offset, v.Cache.Source())
			case v.Shared != nil && v.Shared.Source() != nil:
				r.record(p.PID, v.Start, v.End, v.Offset, v.Shared.Source())
			}
		}
	}
}

// record adds one mapping of file to the profiler's table once. The
// file is read, under its lock, the first time it is seen.
func (r *mappingRecorder) record(pid int, start, end, offset uintptr, file mm.FileSource) {
	k := mappingKey{uintptr(pid), start, end, offset, file}
	if r.seen[k] || r.full {
		return
	}
	sum, ok := r.hashes[file]
	if !ok {
		head := make([]byte, mm.PageSize)
		file.Lock()
		size := file.Size()
		file.ReadPage(0, head)
		file.Unlock()
		sum = hashedFile{uint64(size), profiling.FileHash(head[:min(size, mm.PageSize)])}
		r.hashes[file] = sum
	}
	m := profiling.Mapping{PID: uint64(pid), Start: uint64(start), End: uint64(end),
		Offset: uint64(offset), FileSize: sum.size, FileHash: sum.hash}
	if !profiling.RecordMapping(m) {
		fmt.Printf("profiling: the mapping table is full (%d); later mappings go unnamed\n", profiling.MaxMappings)
		r.full = true
		return
	}
	r.seen[k] = true
}
