package boot

import "testing"

func TestQuietReclaimer(t *testing.T) {
	const busy, idle = reclaimQuiet * 4, reclaimWork / 4
	type step struct {
		name    string
		periods int    // of the same allocation
		alloc   uint64 // allocated in each
		reclaim bool   // at the last of them
	}
	steps := []step{
		{"idle from the start", reclaimFollowUp + 2, 0, false},
		{"load", 3, busy, false},
		{"quiet after the load", 1, idle, true},
		{"quiet until the follow-up", reclaimFollowUp - 1, 0, false},
		{"the follow-up", 1, 0, true},
		{"idle after it", reclaimFollowUp + 2, 0, false},
		{"a little work, quiet", 4, idle, true},
		{"work again at once", 1, busy, false},
		{"quiet, too soon after the last", reclaimSpacing - 2, idle, false},
		{"quiet, spaced", 1, idle, true},
		{"a load at the follow-up", reclaimFollowUp, busy, false},
		{"quiet again", 1, 0, true},
	}
	var r quietReclaimer
	var allocs uint64
	for _, s := range steps {
		for i := range s.periods {
			allocs += s.alloc
			got := r.sample(allocs)
			if want := s.reclaim && i == s.periods-1; got != want {
				t.Errorf("%s, period %d: reclaim %v, want %v", s.name, i+1, got, want)
			}
		}
	}
}
