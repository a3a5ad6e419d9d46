package kernel

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// oomKill ends the process holding the most resident user memory, as
// Linux's OOM killer does, when a page fault of p found no frame (user
// memory has reached the kernel's reserve). init is never chosen. It
// returns the process it killed, after giving it a moment to free its
// memory, or nil.
func oomKill(p *Process) *Process {
	var victim *Process
	best := 0
	for _, q := range Processes() {
		if q.PID == 1 {
			continue
		}
		select {
		case <-q.exited:
			continue
		default:
		}
		if n := residentPages(q); n > best {
			victim, best = q, n
		}
	}
	if victim == nil {
		return nil
	}
	fmt.Printf("kernel: out of memory: killed pid %d (%s), %d KiB resident\n", victim.PID, victim.Exe, best*4)
	victim.Signal(unix.SIGKILL, nil)
	if victim != p {
		select {
		case <-victim.exited:
			time.Sleep(10 * time.Millisecond) // its threads release the memory
		case <-time.After(time.Second):
		}
	}
	return victim
}

// residentPages counts the user pages p has frames for.
func residentPages(p *Process) int {
	p.Lock()
	defer p.Unlock()
	n := 0
	for _, v := range p.AS.VMAs() {
		pages, err := p.AS.Resident(v.Start, v.End-v.Start)
		if err != nil {
			continue
		}
		for _, r := range pages {
			if r != 0 {
				n++
			}
		}
	}
	return n
}
