package mm

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// The kernel's Go heap is its slab: what a closed file, pipe or socket
// held is garbage there until a collection, and free heap pages go back
// to the frame allocator only when the runtime releases them (its madvise,
// which the kernel serves by unmapping). ReclaimHeap does both at once.
var heapReclaim struct {
	sync.Mutex
	allocs uint64        // the heap's cumulative allocations at the last reclaim
	count  atomic.Uint64 // reclaims so far
}

var heapAllocs = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}

// ReclaimHeap collects the kernel's heap and gives every free page back
// to the frame allocator, unless less than minWork bytes were allocated
// since the last reclaim (garbage comes only from allocations). It
// reports whether memory may have come back since it was called: it
// reclaimed, or another caller's reclaim ended while it waited.
func ReclaimHeap(minWork uint64) bool {
	before := heapReclaim.count.Load()
	heapReclaim.Lock()
	defer heapReclaim.Unlock()
	if heapReclaim.count.Load() != before {
		return true
	}
	metrics.Read(heapAllocs)
	allocs := heapAllocs[0].Value.Uint64()
	if allocs-heapReclaim.allocs < minWork {
		return false
	}
	debug.FreeOSMemory()
	heapReclaim.allocs = allocs
	heapReclaim.count.Add(1)
	return true
}

// ReclaimableHeap estimates what ReclaimHeap would give back now, as
// Linux counts a reclaimable slab (/proc/meminfo's SReclaimable, part of
// MemAvailable): the heap's objects that the last collection did not
// find live (what was allocated since counts too) and its free pages.
func ReclaimableHeap() uint64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"}, // live and dead objects
		{Name: "/memory/classes/heap/free:bytes"},    // free pages not yet given back
		{Name: "/gc/heap/live:bytes"},                // live at the last collection
	}
	metrics.Read(s)
	objects, free, live := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
	return free + objects - min(objects, live)
}
