package kernel

import (
	"fmt"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// directReclaimWork is what the kernel must have allocated since its heap
// was last reclaimed for a failed user allocation to reclaim it again:
// less leaves too little garbage to be worth a collection.
const directReclaimWork = 1 << 20

// reclaimForUser gives the kernel heap's free memory (what closed files,
// pipes and sockets held among it) back to the frame allocator for an
// allocation of user memory that found no frame, as Linux's page
// allocator shrinks its caches before it calls the OOM killer. It reports
// whether the allocation is worth trying again before a kill.
func reclaimForUser() bool { return mm.ReclaimHeap(directReclaimWork) }

// oomKill ends the process holding the most resident user memory, as
// Linux's OOM killer does, when a page fault of p found no frame (user
// memory has reached the kernel's reserve). init is never chosen. A
// victim that has not released its memory yet (a thread still leaving a
// long system call, or running on another hart; its parent may have
// reaped it already, as a SIGKILL ends the process at once) is waited
// for, not followed by another. oomKill returns the process it chose,
// after waiting for it to release its memory, or nil.
func oomKill(p *Process) *Process {
	if v := waitForVictim(p); v != nil {
		return v
	}
	var victim *Process
	best := 0
	for _, q := range p.k.Processes() {
		if q.PID == 1 {
			continue
		}
		if n := residentPages(q); n > best {
			victim, best = q, n
		}
	}
	if victim == nil {
		return nil
	}
	select {
	case <-victim.exited:
	default:
		fmt.Printf("kernel: out of memory: killed pid %d (%s), %d KiB resident\n", victim.PID, victim.Exe, best*4)
		// Listed before the kill: faults on other harts wait for it.
		p.k.oomVictims.Lock()
		p.k.oomVictims.dying = append(p.k.oomVictims.dying, victim)
		p.k.oomVictims.Unlock()
		victim.Signal(unix.SIGKILL, nil)
	}
	if victim != p {
		waitForRelease(victim)
	}
	return victim
}

// waitForVictim waits for an earlier victim other than p to release its
// memory and returns it, or returns nil when there is none.
func waitForVictim(p *Process) *Process {
	p.k.oomVictims.Lock()
	var v *Process
	p.k.oomVictims.dying = slices.DeleteFunc(p.k.oomVictims.dying, func(q *Process) bool {
		select {
		case <-q.released:
			return true
		default:
		}
		if v == nil && q != p {
			v = q
		}
		return false
	})
	p.k.oomVictims.Unlock()
	if v != nil && !waitForRelease(v) {
		p.k.oomVictims.Lock()
		p.k.oomVictims.dying = slices.DeleteFunc(p.k.oomVictims.dying, func(q *Process) bool { return q == v })
		p.k.oomVictims.Unlock()
	}
	return v
}

// waitForRelease gives a killed process a second at most for its last
// thread to leave and release its memory, and reports whether it did.
func waitForRelease(v *Process) bool {
	select {
	case <-v.released:
		return true
	case <-time.After(time.Second):
		return false
	}
}

// residentPages counts the user pages p has frames for.
func residentPages(p *Process) int {
	p.Lock()
	defer p.Unlock()
	return p.AS.ResidentPages()
}
