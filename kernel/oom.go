package kernel

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// oomKill ends the process holding the most resident user memory, as
// Linux's OOM killer does, when a page fault of p found no frame (user
// memory has reached the kernel's reserve). init is never chosen. A
// process that has already ended but whose threads have not yet released
// its memory (one still leaving a long system call) is waited for, not
// killed again. oomKill returns the process it chose, after giving it a
// moment to free its memory, or nil.
func oomKill(p *Process) *Process {
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
		victim.Signal(unix.SIGKILL, nil)
	}
	if victim != p {
		deadline := time.Now().Add(time.Second)
		for residentPages(victim) == best && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // its threads leave and release the memory
		}
	}
	return victim
}

// residentPages counts the user pages p has frames for.
func residentPages(p *Process) int {
	p.Lock()
	defer p.Unlock()
	return p.AS.ResidentPages()
}
