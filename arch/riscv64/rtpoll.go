//go:build riscv64

package riscv64

import (
	"math/bits"

	"golang.org/x/sys/unix"
)

// The runtime's network poller, reduced to what the kernel's runtime uses
// it for: waking an M that sleeps in epoll_pwait until the next timer, and
// device interrupts. The runtime creates one epoll instance and one eventfd,
// registers the eventfd, and writes to it to interrupt the sleeper. Each
// PLIC interrupt is also a descriptor (irqFDBase + irq) that a driver opens
// with os.NewFile: the runtime registers it (edge-triggered), and a
// goroutine waiting for the interrupt parks in the netpoller like one
// waiting for a socket, holding no thread. User programs get the full
// epoll from fs/.
const (
	rtEpollFD = 3
	rtEventFD = 4
)

// irqFDBase + irq is the descriptor of PLIC interrupt irq (1..maxIRQ-1).
const irqFDBase = 64

var (
	irqPolled    irqSet         // interrupts registered with the runtime's epoll
	irqEdge      irqSet         // interrupts recorded and not yet reported by epoll_pwait
	irqPollData  [maxIRQ]uint64 // their epoll_event.data
	rtEventCount uint64         // the eventfd's counter
	rtEventData  uint64         // epoll_event.data registered for the eventfd
	rtEventAdded bool
	// rtPollKey is what epoll_pwait sleepers block on: an address no futex uses.
	rtPollKey = uintptr(1) << 62
)

//go:nosplit
func rtEpollCtl(epfd, op, fd, event uintptr) int64 {
	if epfd == rtEpollFD && isIRQFD(uint64(fd)) {
		return irqEpollCtl(uint32(fd-irqFDBase), op, event)
	}
	if epfd != rtEpollFD || fd != rtEventFD {
		return -errEBADF
	}
	switch op {
	case unix.EPOLL_CTL_ADD, unix.EPOLL_CTL_MOD:
		d, ok := loadU64(event + 8)
		if !ok {
			return -errEFAULT
		}
		rtEventData, rtEventAdded = d, true
	case unix.EPOLL_CTL_DEL:
		rtEventAdded = false
	default:
		return -errEINVAL
	}
	return 0
}

// rtEpollPwait reports the eventfd when its counter is non-zero and the
// interrupts that fired since they were last reported; otherwise it sleeps
// for timeoutMs (forever when negative) or until one of those happens, and
// then reports no events: the runtime simply polls again.
//
//go:nosplit
func rtEpollPwait(h *hart, epfd, events, maxEvents uintptr, timeoutMs int64) int64 {
	if epfd != rtEpollFD {
		return -errEBADF
	}
	if maxEvents == 0 {
		return -errEINVAL
	}
	n := uintptr(0)
	if rtEventAdded && rtEventCount > 0 {
		if !storeU64(events, unix.EPOLLIN) || !storeU64(events+8, rtEventData) {
			return -errEFAULT
		}
		n++
	}
	for w := range irqEdge {
		for ready := irqEdge[w] & irqPolled[w]; ready != 0 && n < maxEvents; ready &= ready - 1 {
			irq := uint32(64*w + bits.TrailingZeros64(ready))
			if irq == 0 {
				continue
			}
			if !storeU64(events+16*n, unix.EPOLLIN) || !storeU64(events+16*n+8, irqPollData[irq]) {
				return -errEFAULT
			}
			irqEdge.remove(irq)
			n++
		}
	}
	if n > 0 || timeoutMs == 0 {
		return int64(n)
	}
	var deadline uint64
	if timeoutMs > 0 {
		deadline = readTime() + nsToTicks(timeoutMs*1e6)
	}
	block(h, rtPollKey, deadline, 0)
	return 0
}

//go:nosplit
func isIRQFD(fd uint64) bool { return fd > irqFDBase && fd < irqFDBase+maxIRQ }

//go:nosplit
func irqEpollCtl(irq uint32, op, event uintptr) int64 {
	switch op {
	case unix.EPOLL_CTL_ADD, unix.EPOLL_CTL_MOD:
		d, ok := loadU64(event + 8)
		if !ok {
			return -errEFAULT
		}
		irqPollData[irq] = d
		irqPolled.add(irq)
	case unix.EPOLL_CTL_DEL:
		irqPolled.remove(irq)
	default:
		return -errEINVAL
	}
	return 0
}

// rtIRQRead consumes a recorded interrupt (1), or unmasks the source (one
// the trap handler masked) and reports EAGAIN: the caller then waits in
// the netpoller.
//
//go:nosplit
func rtIRQRead(h *hart, irq uint32) int64 {
	if !irqPending.has(irq) && irqAcks[irq].ack == 0 {
		plicEnable(irq, true)
		// QEMU's PLIC does not re-evaluate its output when a source is
		// enabled, so an interrupt that became pending while masked is
		// claimed here.
		if plicIsPending(irq) {
			external(h)
		}
	}
	if !irqPending.has(irq) {
		return -errEAGAIN
	}
	irqPending.remove(irq)
	irqEdge.remove(irq)
	return 1
}

//go:nosplit
func rtEventWrite(buf uintptr) int64 {
	v, ok := loadU64(buf)
	if !ok {
		return -errEFAULT
	}
	rtEventCount += v
	wakeKey(rtPollKey, maxThreads)
	return 8
}

//go:nosplit
func rtEventRead(buf uintptr) int64 {
	if rtEventCount == 0 {
		return -errEAGAIN
	}
	if !storeU64(buf, rtEventCount) {
		return -errEFAULT
	}
	rtEventCount = 0
	return 8
}
