package kernel

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// Futexes: waiters keyed by address space and virtual address, so the
// threads of a process (and processes sharing memory with CLONE_VM) meet on
// the same word; a shared futex (no FUTEX_PRIVATE_FLAG) in MAP_SHARED
// memory is keyed by that memory and the offset in it instead, so that
// processes mapping it (a POSIX semaphore of sem_open, a process-shared
// mutex) meet on it wherever they map it, as Linux keys it by page.
type futexKey struct {
	as   *mm.AddressSpace // private memory, or a private futex
	mem  *mm.SharedMemory // a shared futex in shared memory
	addr uintptr          // in as, or the offset in mem
}

type futexWaiter struct {
	key    futexKey // where the waiter is queued; requeue moves it
	wake   chan struct{}
	bitset uint32
	// vector is the futex_waitv call this waiter is one word of (nil:
	// a lone FUTEX_WAIT), which shares wake; index is the word's place.
	vector *futexVector
	index  int
}

// futexVector is one futex_waitv call: the first of its words woken
// closes the wake channel they share.
type futexVector struct {
	once  sync.Once
	woken int // the index of that word, once wake is closed
}

// fire wakes the waiter's task: each waiter once, a vector's for its
// first word woken only (futexMu held).
func (w *futexWaiter) fire() {
	if w.vector == nil {
		close(w.wake)
		return
	}
	w.vector.once.Do(func() {
		w.vector.woken = w.index
		close(w.wake)
	})
}

// futexBitsetAny is FUTEX_BITSET_MATCH_ANY.
const futexBitsetAny = 0xffffffff

// futexKeyOf is the key of the aligned word at addr, a shared futex's
// or a private one's, or EINVAL.
func (t *Task) futexKeyOf(addr uintptr, shared bool) (futexKey, error) {
	if addr%4 != 0 {
		return futexKey{}, unix.EINVAL
	}
	t.Proc.Lock()
	defer t.Proc.Unlock()
	if shared {
		if mem, off := t.Proc.AS.SharedOffset(addr); mem != nil {
			return futexKey{mem: mem, addr: off}, nil
		}
	}
	return futexKey{as: t.Proc.AS, addr: addr}, nil
}

// FutexWait blocks while the 32-bit word at addr holds val, until a wake
// matching bitset, the deadline (zero: none) or an interruption. A shared
// futex meets other processes' in shared memory.
func (t *Task) FutexWait(addr uintptr, shared bool, val, bitset uint32, deadline time.Time) error {
	key, err := t.futexKeyOf(addr, shared)
	if err != nil {
		return err
	}
	w, err := t.queueFutexWaiter(addr, key, val, bitset)
	if err != nil {
		return err
	}
	if err := t.Block(w.wake, deadline); err != nil && t.Proc.k.futexRemove(w) {
		return err
	}
	return nil // woken, perhaps at the same moment as the deadline
}

// futexRemove takes w off its queue, reporting whether it was still there.
func (k *Kernel) futexRemove(w *futexWaiter) bool {
	k.futexMu.Lock()
	defer k.futexMu.Unlock()
	q := k.futexQueues[w.key]
	for i, x := range q {
		if x == w {
			k.futexSetQueue(w.key, append(q[:i:i], q[i+1:]...))
			return true
		}
	}
	return false
}

func (k *Kernel) futexSetQueue(key futexKey, q []*futexWaiter) {
	if len(q) == 0 {
		delete(k.futexQueues, key)
	} else {
		k.futexQueues[key] = q
	}
}

// futexWakeLocked wakes up to n waiters on key whose bitset matches, in
// the order they came, and returns how many woke. As on Linux, n below 1
// wakes one (Linux counts after each wake). futexMu is held.
func (k *Kernel) futexWakeLocked(key futexKey, n int, bitset uint32) int {
	n = max(n, 1)
	woken := 0
	var kept []*futexWaiter
	for _, w := range k.futexQueues[key] {
		if woken < n && w.bitset&bitset != 0 {
			w.fire()
			woken++
			continue
		}
		kept = append(kept, w)
	}
	k.futexSetQueue(key, kept)
	return woken
}

// FutexWake wakes up to n waiters on addr whose bitset matches, returning
// how many woke.
func (t *Task) FutexWake(addr uintptr, shared bool, n int, bitset uint32) (int, error) {
	key, err := t.futexKeyOf(addr, shared)
	if err != nil {
		return 0, err
	}
	k := t.Proc.k
	k.futexMu.Lock()
	defer k.futexMu.Unlock()
	return k.futexWakeLocked(key, n, bitset), nil
}

// FutexRequeue wakes up to nwake waiters on addr and moves up to nrequeue
// of the others to addr2 (FUTEX_REQUEUE); with cmp (FUTEX_CMP_REQUEUE) only
// if the word at addr still holds *cmp, else EAGAIN. It returns how many
// waiters were woken or moved.
func (t *Task) FutexRequeue(addr, addr2 uintptr, shared bool, nwake, nrequeue int, cmp *uint32) (int, error) {
	key, err := t.futexKeyOf(addr, shared)
	if err != nil {
		return 0, err
	}
	key2, err := t.futexKeyOf(addr2, shared)
	if err != nil {
		return 0, err
	}
	k := t.Proc.k
	k.futexMu.Lock()
	defer k.futexMu.Unlock()
	if cmp != nil {
		cur, err := t.loadUser32(addr)
		if err != nil {
			return 0, unix.EFAULT
		}
		if cur != *cmp {
			return 0, unix.EAGAIN
		}
	}
	woken, moved := 0, 0
	var kept, requeued []*futexWaiter
	for _, w := range k.futexQueues[key] {
		switch {
		case woken < nwake:
			w.fire()
			woken++
		case moved < nrequeue:
			w.key = key2
			requeued = append(requeued, w)
			moved++
		default:
			kept = append(kept, w)
		}
	}
	k.futexSetQueue(key, kept)
	k.futexSetQueue(key2, append(k.futexQueues[key2], requeued...))
	return woken + moved, nil
}

// FUTEX_WAKE_OP's operations and comparisons (linux/futex.h).
const (
	futexOpSet  = 0
	futexOpAdd  = 1
	futexOpOr   = 2
	futexOpAndn = 3
	futexOpXor  = 4

	futexOpArgShift = 8 // the operand is 1 << oparg
)

// FutexWakeOp implements FUTEX_WAKE_OP: it applies the operation encoded
// in op to the word at addr2 atomically, wakes up to nwake waiters on addr,
// and, if the word's old value passes the encoded comparison, up to nwake2
// waiters on addr2. It returns how many woke.
func (t *Task) FutexWakeOp(addr, addr2 uintptr, shared bool, nwake, nwake2 int, op uint32) (int, error) {
	key, err := t.futexKeyOf(addr, shared)
	if err != nil {
		return 0, err
	}
	key2, err := t.futexKeyOf(addr2, shared)
	if err != nil {
		return 0, err
	}
	kind, cmp := op>>28&7, op>>24&15
	oparg, cmparg := signExtend12(op>>12), signExtend12(op)
	if op>>28&futexOpArgShift != 0 {
		oparg = 1 << (oparg & 31)
	}
	apply := map[uint32]func(uint32) uint32{
		futexOpSet:  func(uint32) uint32 { return uint32(oparg) },
		futexOpAdd:  func(v uint32) uint32 { return v + uint32(oparg) },
		futexOpOr:   func(v uint32) uint32 { return v | uint32(oparg) },
		futexOpAndn: func(v uint32) uint32 { return v &^ uint32(oparg) },
		futexOpXor:  func(v uint32) uint32 { return v ^ uint32(oparg) },
	}[kind]
	if apply == nil {
		return 0, unix.ENOSYS
	}
	k := t.Proc.k
	k.futexMu.Lock()
	defer k.futexMu.Unlock()
	old, err := t.updateUser32(addr2, func(v uint32) (uint32, bool) { return apply(v), true })
	if err != nil {
		return 0, unix.EFAULT
	}
	o := int32(old)
	var pass bool
	switch cmp {
	case 0:
		pass = o == cmparg
	case 1:
		pass = o != cmparg
	case 2:
		pass = o < cmparg
	case 3:
		pass = o <= cmparg
	case 4:
		pass = o > cmparg
	case 5:
		pass = o >= cmparg
	default:
		return 0, unix.ENOSYS // as Linux: after the operation, before any wake
	}
	woken := k.futexWakeLocked(key, nwake, futexBitsetAny)
	if pass {
		woken += k.futexWakeLocked(key2, nwake2, futexBitsetAny)
	}
	return woken, nil
}

// signExtend12 reads the low 12 bits of v as a signed number.
func signExtend12(v uint32) int32 { return int32(v<<20) >> 20 }

// queueFutexWaiter queues a waiter on key when the word at addr still
// holds val: EFAULT when it cannot be read, EAGAIN when it changed. The
// read and the queueing are one critical section of futexMu, so no wake
// comes between them.
func (t *Task) queueFutexWaiter(addr uintptr, key futexKey, val, bitset uint32) (*futexWaiter, error) {
	k := t.Proc.k
	k.futexMu.Lock()
	defer k.futexMu.Unlock()
	cur, err := t.loadUser32(addr)
	if err != nil {
		return nil, unix.EFAULT
	}
	if cur != val {
		return nil, unix.EAGAIN
	}
	w := &futexWaiter{key: key, wake: make(chan struct{}), bitset: bitset}
	k.futexQueues[key] = append(k.futexQueues[key], w)
	return w, nil
}

// FutexWord is one word of a futex_waitv call: its address, the value it
// must hold for the call to sleep, and whether it is shared.
type FutexWord struct {
	Addr   uintptr
	Val    uint32
	Shared bool
}

// FutexWaitv implements futex_waitv(2): it sleeps while every word holds
// its value (EAGAIN at once when one does not), until one is woken, the
// deadline (zero: none) or an interruption, and returns the index of the
// word woken.
func (t *Task) FutexWaitv(words []FutexWord, deadline time.Time) (int, error) {
	keys := make([]futexKey, len(words))
	for i, w := range words {
		key, err := t.futexKeyOf(w.Addr, w.Shared)
		if err != nil {
			return 0, err
		}
		keys[i] = key
	}
	waiters, err := t.queueFutexVector(words, keys)
	if err != nil {
		return 0, err
	}
	err = t.Block(waiters[0].wake, deadline)
	k := t.Proc.k
	for _, w := range waiters {
		k.futexRemove(w)
	}
	select {
	case <-waiters[0].wake:
		return waiters[0].vector.woken, nil // perhaps at the same moment as the deadline
	default:
		return 0, err
	}
}

// queueFutexVector queues a waiter on each word, all sharing one wake
// channel, once every word holds its value: EAGAIN when one does not,
// EFAULT when one cannot be read.
func (t *Task) queueFutexVector(words []FutexWord, keys []futexKey) ([]*futexWaiter, error) {
	k := t.Proc.k
	k.futexMu.Lock()
	defer k.futexMu.Unlock()
	for _, w := range words {
		cur, err := t.loadUser32(w.Addr)
		if err != nil {
			return nil, unix.EFAULT
		}
		if cur != w.Val {
			return nil, unix.EAGAIN
		}
	}
	wake, vector := make(chan struct{}), &futexVector{}
	waiters := make([]*futexWaiter, len(words))
	for i := range words {
		w := &futexWaiter{key: keys[i], wake: wake, bitset: futexBitsetAny, vector: vector, index: i}
		k.futexQueues[keys[i]] = append(k.futexQueues[keys[i]], w)
		waiters[i] = w
	}
	return waiters, nil
}
