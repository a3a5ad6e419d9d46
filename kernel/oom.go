package kernel

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// oomKill ends the process holding the most resident user memory, as
// Linux's OOM killer does, when a page fault of p found no frame (user
// memory has reached the kernel's reserve). init is never chosen. A
// process that has already ended but whose threads have not yet released
// its memory (one still leaving a long system call, or running on another
// hart) is waited for, not killed again; so is a victim that killed itself
// earlier and may be reaped already. oomKill returns the process it
// chose, after giving it a moment to free its memory, or nil.
func oomKill(p *Process) *Process {
	if v := waitForVictim(p); v != nil {
		return v
	}
	var victim *Process
	best := 0
	for _, q := range Processes() {
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
		if victim == p {
			// Listed before the kill: the kill ends the process at once,
			// and its parent, woken on another hart, may fault before p
			// leaves.
			oomVictims.Lock()
			oomVictims.dying = append(oomVictims.dying, victim)
			oomVictims.Unlock()
		}
		victim.Signal(unix.SIGKILL, nil)
	}
	if victim != p {
		waitForThreads(victim)
	}
	return victim
}

// oomVictims are processes that killed themselves by faulting with no
// memory left, until another fault has waited for their memory.
var oomVictims struct {
	sync.Mutex
	dying []*Process
}

// waitForVictim waits for an earlier victim other than p to let go of its
// memory and returns it, or returns nil when there is none.
func waitForVictim(p *Process) *Process {
	oomVictims.Lock()
	var v *Process
	for i, q := range oomVictims.dying {
		if q != p {
			v = q
			oomVictims.dying = append(oomVictims.dying[:i], oomVictims.dying[i+1:]...)
			break
		}
	}
	oomVictims.Unlock()
	if v != nil {
		waitForThreads(v)
	}
	return v
}

// waitForThreads gives a killed process a second at most for its threads
// to leave, and the last one a moment to release the memory.
func waitForThreads(v *Process) {
	for deadline := time.Now().Add(time.Second); v.liveThreads() > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond)
}

// liveThreads counts p's threads that have not left yet.
func (p *Process) liveThreads() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.threads
}

// residentPages counts the user pages p has frames for.
func residentPages(p *Process) int {
	p.Lock()
	defer p.Unlock()
	return p.AS.ResidentPages()
}
