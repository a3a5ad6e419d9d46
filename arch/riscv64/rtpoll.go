//go:build riscv64

package riscv64

import "golang.org/x/sys/unix"

// The runtime's network poller, reduced to what the kernel's runtime uses
// it for: waking an M that sleeps in epoll_pwait until the next timer. It
// creates one epoll instance and one eventfd, registers the eventfd, and
// writes to it to interrupt the sleeper. The kernel's own runtime never
// polls real files; user programs get the full epoll from fs/.
const (
	rtEpollFD = 3
	rtEventFD = 4
)

var (
	rtEventCount uint64 // the eventfd's counter
	rtEventData  uint64 // epoll_event.data registered for the eventfd
	rtEventAdded bool
	// rtPollKey is what epoll_pwait sleepers block on: an address no futex uses.
	rtPollKey = uintptr(1) << 62
)

//go:nosplit
func rtEpollCtl(epfd, op, fd, event uintptr) int64 {
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

// rtEpollPwait reports the eventfd when its counter is non-zero; otherwise it
// sleeps for timeoutMs (forever when negative) or until the eventfd is
// written, and then reports no events: the runtime simply polls again.
//
//go:nosplit
func rtEpollPwait(h *hart, epfd, events, maxEvents uintptr, timeoutMs int64) int64 {
	if epfd != rtEpollFD {
		return -errEBADF
	}
	if maxEvents == 0 {
		return -errEINVAL
	}
	if rtEventAdded && rtEventCount > 0 {
		if !storeU64(events, unix.EPOLLIN) || !storeU64(events+8, rtEventData) {
			return -errEFAULT
		}
		return 1
	}
	if timeoutMs == 0 {
		return 0
	}
	var deadline uint64
	if timeoutMs > 0 {
		deadline = readTime() + nsToTicks(timeoutMs*1e6)
	}
	block(h, rtPollKey, deadline, 0)
	return 0
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
