package kernel

import (
	"sync"
	"time"
)

// cpuClock is a task's CPU time as Linux keeps it: the total is exact
// (the time the task's goroutine ran: from when it started or was woken
// to when it blocked, was preempted or exited), and it is split between
// user and system time in the ratio the timer's samples give (the
// user Frame's UserTicks and SysTicks, as Linux's tick accounting and
// cputime_adjust). A system call thus reads no clock: each clock read
// ends QEMU's translation block, and two per call were a sixth of a null
// system call's cost.
type cpuClock struct {
	mu      sync.Mutex
	ran     time.Duration // up to since
	since   time.Time     // when the task got the processor; zero while it waits
	reportU time.Duration // what split returned last: it never goes back
	reportS time.Duration
}

// start records that the task runs from now.
func (c *cpuClock) start(now time.Time) {
	c.mu.Lock()
	c.since = now
	c.mu.Unlock()
}

// stop records that the task stopped running at now.
func (c *cpuClock) stop(now time.Time) {
	c.mu.Lock()
	if !c.since.IsZero() {
		c.ran += now.Sub(c.since)
		c.since = time.Time{}
	}
	c.mu.Unlock()
}

// total returns the CPU time so far.
func (c *cpuClock) total() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.IsZero() {
		return c.ran
	}
	return c.ran + time.Since(c.since)
}

// split returns the CPU time so far as user and system time, weighed by
// the samples; neither is ever less than returned before.
func (c *cpuClock) split(userTicks, sysTicks uint64) (user, sys time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := c.ran
	if !c.since.IsZero() {
		total += time.Since(c.since)
	}
	switch {
	case sysTicks == 0:
		sys = 0
	case userTicks == 0:
		sys = total
	default:
		sys = time.Duration(float64(total) * float64(sysTicks) / float64(userTicks+sysTicks))
	}
	sys = max(sys, c.reportS)
	user = total - sys
	if user < c.reportU {
		user = c.reportU
		sys = total - user
	}
	c.reportU, c.reportS = user, sys
	return user, sys
}
