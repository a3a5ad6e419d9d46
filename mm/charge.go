package mm

import (
	"errors"
	"sync/atomic"
)

// ErrOverBudget is what Charge returns when the kernel-wide budget would be
// exceeded; each caller turns it into its system call's Linux errno
// (ENOBUFS for a socket, ENOMEM for a pipe or an epoll item).
var ErrOverBudget = errors.New("kernel memory budget reached")

// Budget bounds the kernel memory that user programs make the kernel hold
// for them (socket and pipe buffers, epoll items), so that a program
// fills the budget, and gets an error, before it can fill the kernel heap.
// Charge and Uncharge are one atomic add each: no lock, no allocation.
type Budget struct {
	charged atomic.Int64
	limit   atomic.Int64 // 0: no limit (host tests)
}

// Charged is the one kernel-wide budget; boot sets its limit from RAM.
var Charged Budget

// ChargeShareOfRAM is the part of RAM the budget allows: an eighth.
const ChargeShareOfRAM = 8

// SetLimit sets the most that may be charged at once, in bytes.
func (b *Budget) SetLimit(n int64) { b.limit.Store(n) }

// Limit returns the most that may be charged at once (0: no limit).
func (b *Budget) Limit() int64 { return b.limit.Load() }

// Charge takes n bytes from the budget, or takes nothing and returns
// ErrOverBudget when that would pass the limit.
func (b *Budget) Charge(n int) error {
	return b.chargeUpTo(n, b.limit.Load())
}

// ObjectReserve is the part of the budget queued data (socket and pipe
// buffers, messages) may not take, a quarter: it is kept for the objects
// programs make and watch with (epoll items, timers, namespaces), so
// that one program filling buffers does not make another's epoll_ctl
// fail, as on Linux, where buffers and those objects are bounded apart.
const ObjectReserve = 4

// ChargeBuffer is Charge for queued data: it refuses past the limit less
// its ObjectReserve.
func (b *Budget) ChargeBuffer(n int) error {
	limit := b.limit.Load()
	return b.chargeUpTo(n, limit-limit/ObjectReserve)
}

func (b *Budget) chargeUpTo(n int, limit int64) error {
	total := b.charged.Add(int64(n))
	if limit > 0 && total > limit {
		b.charged.Add(-int64(n))
		return ErrOverBudget
	}
	return nil
}

// Uncharge gives back n bytes that Charge took.
func (b *Budget) Uncharge(n int) { b.charged.Add(-int64(n)) }

// Total returns the bytes charged now.
func (b *Budget) Total() int64 { return b.charged.Load() }
