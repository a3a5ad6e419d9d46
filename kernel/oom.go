package kernel

import (
	"errors"
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

// AllocateUser runs alloc, which gives p's user memory frames (a page
// fault, a system call's copy into user memory, a fork's copy of the
// address space), until it stops failing with mm.ErrNoMemory: between
// tries it reclaims the kernel heap or has the OOM killer end a process,
// as Linux's page allocator does before it fails an allocation. The heap
// is reclaimed once at most: another process taking what it gave back
// (a hog faulting on another hart) must lead to a kill, not to more
// reclaims. Each round frees some memory or gives up, a few rounds at
// most. alloc takes p's lock itself: the wait for a victim must not hold
// it. killedSelf says the OOM killer chose p (a SIGKILL is on its way);
// err is alloc's last error.
func (p *Process) AllocateUser(alloc func() error) (killedSelf bool, err error) {
	err = alloc()
	reclaimed := false
	for round := 0; errors.Is(err, mm.ErrNoMemory) && round < 8; round++ {
		if reclaimed || !reclaimForUser() {
			v := oomKill(p)
			if v == nil {
				fmt.Printf("kernel: out of memory: no process to kill for pid %d (%s)\n", p.PID, p.Exe)
			}
			if v == nil || v == p {
				return v != nil, err
			}
		}
		reclaimed = true
		err = alloc()
	}
	return false, err
}

// oomKill ends the process holding the most resident user memory, as
// Linux's OOM killer does, when an allocation for p found no frame (user
// memory has reached the kernel's reserve). init is never chosen. A
// victim that has not released its memory yet (a thread still leaving a
// long system call, or running on another hart; its parent may have
// reaped it already, as a SIGKILL ends the process at once) is waited
// for, not followed by another. oomKill returns the process it chose,
// after waiting for it to release its memory, or nil.
func oomKill(p *Process) *Process {
	victim, resident := p.k.chooseVictim(p)
	if victim == nil {
		return nil
	}
	if resident > 0 {
		fmt.Printf("kernel: out of memory: killed pid %d (%s), %d KiB resident\n", victim.PID, victim.Exe, resident*4)
		victim.Signal(unix.SIGKILL, nil)
	}
	if victim != p && !waitForRelease(victim) {
		// Stuck: the next allocation that fails chooses another.
		p.k.oomVictims.Lock()
		p.k.oomVictims.dying = slices.DeleteFunc(p.k.oomVictims.dying, func(q *Process) bool { return q == victim })
		p.k.oomVictims.Unlock()
	}
	return victim
}

// chooseVictim returns, under the victims' lock so that allocations
// failing at once on several harts kill one process: an earlier victim
// other than p, still dying or released since (either way the allocation
// is worth trying again), or p when it was chosen before, or else the
// process to kill, listed as dying, with the pages it holds (0 for an
// earlier victim or one already exiting).
func (k *Kernel) chooseVictim(p *Process) (victim *Process, resident int) {
	k.oomVictims.Lock()
	defer k.oomVictims.Unlock()
	chosenBefore := false
	k.oomVictims.dying = slices.DeleteFunc(k.oomVictims.dying, func(q *Process) bool {
		if victim == nil && q != p {
			victim = q
		}
		chosenBefore = chosenBefore || q == p
		select {
		case <-q.released:
			return true
		default:
			return false
		}
	})
	switch {
	case victim != nil:
		return victim, 0
	case chosenBefore: // p's SIGKILL is on its way
		return p, 0
	}
	for _, q := range k.Processes() {
		if q.PID == 1 {
			continue
		}
		if n := residentPages(q); n > resident {
			victim, resident = q, n
		}
	}
	if victim == nil {
		return nil, 0
	}
	select {
	case <-victim.exited:
		return victim, 0
	default:
		k.oomVictims.dying = append(k.oomVictims.dying, victim)
		return victim, resident
	}
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
