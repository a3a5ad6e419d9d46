//go:build riscv64

package riscv64

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/mm"
)

// The Linux system calls of the kernel's own Go runtime, served in M-mode.

// Linux errno values returned (negated) in a0.
const (
	errENOENT    = int64(unix.ENOENT)
	errEBADF     = int64(unix.EBADF)
	errEAGAIN    = int64(unix.EAGAIN)
	errENOMEM    = int64(unix.ENOMEM)
	errEFAULT    = int64(unix.EFAULT)
	errENODEV    = int64(unix.ENODEV)
	errEINVAL    = int64(unix.EINVAL)
	errENOSYS    = int64(unix.ENOSYS)
	errETIMEDOUT = int64(unix.ETIMEDOUT)
)

// Kernel-private calls, numbered far above Linux's.
const (
	sysShootdown = 0x4a00 + iota // a0: root of a user page table that changed (userShootdown)
	sysRetire                    // a0: root of a user page table about to be freed (FreePageTable)
	sysSyncCode                  // a0: root of a user page table code was written for (SyncICache)
)

const (
	futexCmdMask = 0x7f // FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME off
	oRdwr        = int64(unix.O_RDWR)
	// Constants x/sys/unix does not define.
	ssDisable = 2 // sigaltstack's SS_DISABLE
	futexWait = 0 // FUTEX_WAIT
	futexWake = 1 // FUTEX_WAKE
)

var (
	// randStream is the kernel's own getrandom; seeded from the time CSR
	// at first use and from virtio-rng at boot (SeedRandom), under the
	// kernel lock.
	randStream   keystream
	randSeeded   bool
	rtClockTraps uint64 // clock_gettime calls that trapped: none once the runtime uses its vDSO
)

//go:nosplit
func runtimeSyscall(h *hart, t *thread, f *Frame) {
	a := &f.X
	nr := a[RegA7]
	var r int64
	switch nr {
	case unix.SYS_WRITE:
		if a[RegA0] == rtEventFD && a[RegA2] == 8 {
			r = rtEventWrite(uintptr(a[RegA1]))
		} else {
			r = rtWrite(uintptr(a[RegA0]), uintptr(a[RegA1]), uintptr(a[RegA2]))
		}
	case unix.SYS_READ:
		switch fd := a[RegA0]; {
		case fd == rtEventFD && a[RegA2] == 8:
			r = rtEventRead(uintptr(a[RegA1]))
		case isIRQFD(fd):
			r = rtIRQRead(h, uint32(fd-irqFDBase))
		default:
			r = -errEBADF
		}
	case unix.SYS_EPOLL_CREATE1:
		r = rtEpollFD
	case unix.SYS_EVENTFD2:
		r = rtEventFD
	case unix.SYS_EPOLL_CTL:
		r = rtEpollCtl(uintptr(a[RegA0]), uintptr(a[RegA1]), uintptr(a[RegA2]), uintptr(a[RegA3]))
	case unix.SYS_EPOLL_PWAIT:
		r = rtEpollPwait(h, uintptr(a[RegA0]), uintptr(a[RegA1]), uintptr(a[RegA2]), int64(int32(a[RegA3])))
	case unix.SYS_OPENAT:
		r = -errENOENT
	case unix.SYS_FCNTL:
		// The console is open on 0, 1 and 2, read-write and blocking.
		switch {
		case isIRQFD(a[RegA0]) && a[RegA1] == unix.F_GETFL:
			r = oRdwr | int64(unix.O_NONBLOCK)
		case isIRQFD(a[RegA0]):
		case a[RegA0] > 2:
			r = -errEBADF
		case a[RegA1] == unix.F_GETFL:
			r = oRdwr
		}
	case unix.SYS_CLOSE:
		if a[RegA0] != rtEpollFD && a[RegA0] != rtEventFD && !isIRQFD(a[RegA0]) {
			r = -errEBADF
		}
	case unix.SYS_MMAP:
		r = rtMmap(uintptr(a[RegA0]), uintptr(a[RegA1]), uintptr(a[RegA3]))
	case unix.SYS_MUNMAP:
		r = rtMunmap(uintptr(a[RegA0]), uintptr(a[RegA1]))
	case unix.SYS_MADVISE:
		r = rtMadvise(uintptr(a[RegA0]), uintptr(a[RegA1]), uintptr(a[RegA2]))
	case unix.SYS_MINCORE, unix.SYS_RISCV_HWPROBE:
		r = -errENOSYS
	case unix.SYS_PRCTL:
		r = -errEINVAL // no named anonymous mappings
	case unix.SYS_CLONE:
		r = rtClone(f)
	case unix.SYS_EXIT:
		t.state = threadFree
		return
	case unix.SYS_EXIT_GROUP:
		print("kernel: exit_group(")
		printDec(int64(a[RegA0]))
		print(")\n")
		powerOff(int(a[RegA0] & 0xff))
	case unix.SYS_FUTEX:
		r = rtFutex(h, uintptr(a[RegA0]), int(a[RegA1]), uint32(a[RegA2]), uintptr(a[RegA3]))
	case unix.SYS_NANOSLEEP:
		r = rtNanosleep(h, uintptr(a[RegA0]))
	case unix.SYS_SCHED_YIELD:
		t.state = threadRunnable
	case unix.SYS_CLOCK_GETTIME:
		rtClockTraps++
		r = rtClockGettime(int(a[RegA0]), uintptr(a[RegA1]))
	case unix.SYS_SCHED_GETAFFINITY:
		// One bit per hart: that is where GOMAXPROCS comes from.
		if a[RegA1] < 8 || !storeU64(uintptr(a[RegA2]), 1<<nHarts-1) {
			r = -errEINVAL
		} else {
			r = 8
		}
	case unix.SYS_GETTID:
		r = int64(t.tid)
	case unix.SYS_GETPID:
		r = 1
	case unix.SYS_KILL, unix.SYS_TKILL, unix.SYS_TGKILL:
		r = 0 // the kernel's runtime gets no signals
	case unix.SYS_RT_SIGACTION, unix.SYS_RT_SIGPROCMASK:
		if old := uintptr(a[RegA2]); old != 0 {
			for off := uintptr(0); off < 24; off += 8 {
				storeU64(old+off, 0)
			}
		}
	case unix.SYS_SIGALTSTACK:
		if old := uintptr(a[RegA1]); old != 0 {
			storeU64(old, 0)
			storeU64(old+8, ssDisable)
			storeU64(old+16, 0)
		}
	case unix.SYS_PRLIMIT64:
		if old := uintptr(a[RegA3]); old != 0 {
			storeU64(old, 1024)
			storeU64(old+8, 1024)
		}
	case unix.SYS_GETRANDOM:
		r = rtGetrandom(uintptr(a[RegA0]), uintptr(a[RegA1]))
	case sysShootdown:
		shootdown(h, mm.SatpSv39(uintptr(a[RegA0])))
	case sysRetire:
		retire(h, mm.SatpSv39(uintptr(a[RegA0])))
	case sysSyncCode:
		syncCode(h, mm.SatpSv39(uintptr(a[RegA0])))
	default:
		print("\nkernel: the kernel's runtime made syscall ")
		printDec(int64(nr))
		print(" (")
		print(sysno.Name(nr))
		print("), which the kernel does not serve; pc ")
		printHex(f.PC - 4)
		print("\n")
		powerOff(4)
	}
	a[RegA0] = uint64(r)
}

//go:nosplit
func rtWrite(fd, buf, n uintptr) int64 {
	if fd != 1 && fd != 2 {
		return -errEBADF
	}
	lockConsole()
	r := rtWriteConsole(buf, n)
	unlockConsole()
	return r
}

// rtWriteConsole is rtWrite's work under the console lock.
//
//go:nosplit
func rtWriteConsole(buf, n uintptr) int64 {
	for done := uintptr(0); done < n; {
		pa := kva(buf + done)
		if pa == 0 {
			return -errEFAULT
		}
		chunk := min(n-done, mmPage-(buf+done)&pageMask)
		for i := uintptr(0); i < chunk; i++ {
			c := *(*byte)(mm.Ptr(pa + i))
			putc(c)
			klogPut(c)
		}
		done += chunk
	}
	return int64(n)
}

const mmPage = pageMask + 1

//go:nosplit
func rtClone(f *Frame) int64 {
	i := allocThread()
	if i < 0 {
		return -errEAGAIN
	}
	c := &threads[i]
	c.frame = *f
	c.frame.X[RegSP] = f.X[RegA1]
	c.frame.X[RegA0] = 0
	c.user, c.lastUser = 0, 0
	c.tid = nextTID
	nextTID++
	c.waitKey, c.deadline = 0, 0
	c.state = threadRunnable
	kickIdle(thisHart())
	return int64(c.tid)
}

// readTimespec converts a relative struct timespec at va into ticks.
//
//go:nosplit
func readTimespec(va uintptr) (uint64, bool) {
	sec, ok1 := loadU64(va)
	nsec, ok2 := loadU64(va + 8)
	if !ok1 || !ok2 {
		return 0, false
	}
	return nsToTicks(int64(sec)*1e9 + int64(nsec)), true
}

//go:nosplit
func rtFutex(h *hart, addr uintptr, op int, val uint32, timeout uintptr) int64 {
	if addr&3 != 0 {
		return -errEINVAL
	}
	pa := kva(addr)
	if pa == 0 {
		return -errEFAULT
	}
	switch op & futexCmdMask {
	case futexWait:
		if *(*uint32)(mm.Ptr(pa)) != val {
			return -errEAGAIN
		}
		var deadline uint64
		if timeout != 0 {
			d, ok := readTimespec(timeout)
			if !ok {
				return -errEFAULT
			}
			deadline = readTime() + max(d, 1)
		}
		block(h, pa, deadline, -errETIMEDOUT)
		return 0
	case futexWake:
		return int64(wakeKey(pa, int(val)))
	}
	return -errENOSYS
}

// rtNanosleep sleeps for the duration, in time CSR ticks; one shorter
// than 10 µs is a yield. The runtime sleeps 3 µs (runqgrab) to give a P
// running on another hart the moment to run the goroutine it has just
// readied; under QEMU setting a timer that near and taking its interrupt
// costs more than that, and the runtime yields instead on its own where
// timers are coarse (osHasLowResTimer).
//
//go:nosplit
func rtNanosleep(h *hart, req uintptr) int64 {
	d, ok := readTimespec(req)
	if !ok {
		return -errEFAULT
	}
	if d < timebase/100_000 {
		threads[h.current].state = threadRunnable
		return 0
	}
	block(h, 0, readTime()+max(d, 1), 0)
	return 0
}

//go:nosplit
func rtClockGettime(clock int, tp uintptr) int64 {
	ns := ticksToNs(readTime())
	if clock == unix.CLOCK_REALTIME || clock == unix.CLOCK_REALTIME_COARSE {
		ns += wallOffsetNs
	}
	if !storeU64(tp, uint64(ns/1e9)) || !storeU64(tp+8, uint64(ns%1e9)) {
		return -errEFAULT
	}
	return 0
}

// rtGetrandom fills the buffer from randStream (ChaCha20, chacha.go).
//
//go:nosplit
func rtGetrandom(buf, n uintptr) int64 {
	if !randSeeded {
		t := readTime()
		randStream.seed([]byte{byte(t), byte(t >> 8), byte(t >> 16), byte(t >> 24), byte(t >> 32), byte(t >> 40), byte(t >> 48), byte(t >> 56)})
		randSeeded = true
	}
	for i := uintptr(0); i < n; {
		pa := kva(buf + i)
		if pa == 0 {
			return -errEFAULT
		}
		// One translation and one draw serve the rest of the page.
		var d draw
		randStream.start(&d)
		chunk := min(n-i, mm.PageSize-(buf+i)&pageMask)
		d.read(unsafe.Slice((*byte)(mm.Ptr(pa)), chunk))
		d.end()
		i += chunk
	}
	return int64(n)
}
