//go:build kcover

package procfs

import (
	"bytes"
	"io"
	"runtime/coverage"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/jiege-go/jiege/fs"
)

// A kernel built with make kernel-cover (go build -cover
// -covermode=atomic -tags kcover) shows its own coverage counters in
// /proc/gocover: meta and counters are the covmeta and covcounters files
// of Go's coverage tools (runtime/coverage's WriteMeta and WriteCounters),
// and hit is the number of counters that are not zero, a cheap signal a
// fuzzer reads after each program to keep those that raised it.
func init() {
	gocover := map[string]*fs.Node{
		"meta":     procFile(func() []byte { return written(coverage.WriteMeta) }),
		"counters": procFile(func() []byte { return written(coverage.WriteCounters) }),
		"hit":      procFile(func() []byte { return []byte(strconv.Itoa(countersHit()) + "\n") }),
	}
	var once sync.Once
	coverDir = func() *fs.Node {
		once.Do(forgetBeforeInit)
		return procDir(func() map[string]*fs.Node { return gocover })
	}
}

// written is what write wrote, or nothing if it failed.
func written(write func(io.Writer) error) []byte {
	var b bytes.Buffer
	if write(&b) != nil {
		return nil
	}
	return b.Bytes()
}

// counterBlob is internal/coverage/rtcov.CovCounterBlob: a module's
// counters, where each function that ran has a header (its number of
// counters, its package and function ids) and its counters after it.
type counterBlob struct {
	counters *uint32
	len      uint64
}

// counterBlobs is the runtime's list of them (runtime/covercounter.go),
// which runtime/coverage reads too.
//
//go:linkname counterBlobs internal/coverage/cfile.getCovCounterList
func counterBlobs() []counterBlob

// A function's header: its number of counters, its package's id, its
// own (internal/coverage's NumCtrsOffset, PkgIdOffset, FirstCtrOffset).
const (
	counterNumber = 0
	counterPkgID  = 1
	counterHeader = 3
)

// forgetBeforeInit clears the counters of the functions that ran before
// their package's init registered it (mm's, serving the runtime's
// start) and not since: their header has package id 0, which
// WriteCounters refuses. It runs once, when procfs is first mounted
// at boot, before any user program.
func forgetBeforeInit() {
	for _, b := range counterBlobs() {
		ctrs := unsafe.Slice((*atomic.Uint32)(unsafe.Pointer(b.counters)), int(b.len))
		for i := 0; i < len(ctrs); i++ {
			n := int(ctrs[i+counterNumber].Load())
			if n == 0 {
				continue
			}
			end := min(i+counterHeader+n, len(ctrs))
			if ctrs[i+counterPkgID].Load() == 0 {
				for j := i; j < end; j++ {
					ctrs[j].Store(0)
				}
			}
			i = end - 1
		}
	}
}

// countersHit is the number of the kernel's counters that are not zero,
// walked as internal/coverage/cfile walks them: a function that never
// ran is all zeros, header included.
func countersHit() int {
	hit := 0
	for _, b := range counterBlobs() {
		ctrs := unsafe.Slice((*atomic.Uint32)(unsafe.Pointer(b.counters)), int(b.len))
		for i := 0; i < len(ctrs); i++ {
			n := int(ctrs[i].Load())
			if n == 0 {
				continue
			}
			for j := i + counterHeader; j < min(i+counterHeader+n, len(ctrs)); j++ {
				if ctrs[j].Load() != 0 {
					hit++
				}
			}
			i += counterHeader + n - 1
		}
	}
	return hit
}
