package boot

import (
	"runtime/metrics"
	"time"

	"github.com/jiege-go/jiege/mm"
)

// The kernel's heap collects at 11x its live size (GOGC 1000, at least
// 40 MiB), and the runtime's scavenger keeps the pages of the next goal:
// after a load the kernel would hold that RAM while it idles. Once it
// goes quiet after some work, it collects and gives every free page back
// to the frame allocator. A load that ends by closing its connections
// frees much and allocates little, so a little work is enough; the
// spacing bounds what an idle kernel spends collecting. The endpoints of
// a load's last connections go a TIME-WAIT (60 s) after it, and the
// stack forgets them within 10 s: a second reclaim follows the first.
const (
	reclaimPeriod   = 2 * time.Second
	reclaimQuiet    = 256 << 10 // allocated within a period: the kernel is quiet
	reclaimWork     = 256 << 10 // allocated since the last reclaim: worth one
	reclaimSpacing  = 5         // periods between reclaims, at least
	reclaimFollowUp = 40        // periods from a reclaim after work to the second
)

// quietReclaimer decides when to reclaim from the kernel's cumulative heap
// allocations, sampled once a period.
type quietReclaimer struct {
	last     uint64 // allocations at the last sample
	since    uint64 // allocations at the last reclaim
	periods  int    // periods since the last reclaim
	followUp bool   // the last reclaim came after work: one more is due
}

// sample takes the allocations now and says whether to reclaim: in a
// quiet period, after reclaimWork bytes and reclaimSpacing periods, or
// reclaimFollowUp periods after such a reclaim.
func (r *quietReclaimer) sample(allocs uint64) bool {
	quiet := allocs-r.last < reclaimQuiet
	r.last = allocs
	r.periods++
	if !quiet || r.periods < reclaimSpacing {
		return false
	}
	switch {
	case allocs-r.since >= reclaimWork:
		r.followUp = true
	case r.followUp && r.periods >= reclaimFollowUp:
		r.followUp = false
	default:
		return false
	}
	r.since, r.periods = allocs, 0
	return true
}

// reclaimWhenQuiet runs for the kernel's life, giving the heap's free
// memory back whenever a load has ended.
func reclaimWhenQuiet() {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	r := quietReclaimer{last: s[0].Value.Uint64(), since: s[0].Value.Uint64()}
	for {
		time.Sleep(reclaimPeriod)
		metrics.Read(s)
		if r.sample(s[0].Value.Uint64()) {
			mm.ReclaimHeap(0)
		}
	}
}
