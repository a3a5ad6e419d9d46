//go:build riscv64

package riscv64

import "github.com/jiege-go/jiege/mm"

// The Linux system calls of the kernel's own Go runtime, served in M-mode.

// Linux errno values returned (negated) in a0.
const (
	errENOENT    = 2
	errEBADF     = 9
	errEAGAIN    = 11
	errENOMEM    = 12
	errEFAULT    = 14
	errENODEV    = 19
	errEINVAL    = 22
	errENOSYS    = 38
	errETIMEDOUT = 110
)

// Kernel-private calls, numbered far above Linux's.
const (
	sysEnterUser = 0x4a00 + iota
	sysWaitIRQ
)

// Linux riscv64 syscall numbers that the runtime uses.
const (
	sysFcntl           = 25
	sysEventfd2        = 19
	sysEpollCreate1    = 20
	sysEpollCtl        = 21
	sysEpollPwait      = 22
	sysOpenat          = 56
	sysClose           = 57
	sysRead            = 63
	sysWrite           = 64
	sysExit            = 93
	sysExitGroup       = 94
	sysFutex           = 98
	sysNanosleep       = 101
	sysClockGettime    = 113
	sysSchedYield      = 124
	sysSchedGetaff     = 123
	sysKill            = 129
	sysTkill           = 130
	sysTgkill          = 131
	sysSigaltstack     = 132
	sysRtSigaction     = 134
	sysRtSigprocmask   = 135
	sysGetpid          = 172
	sysGettid          = 178
	sysMunmap          = 215
	sysClone           = 220
	sysMmap            = 222
	sysMadvise         = 233
	sysPrlimit64       = 261
	sysGetrandom       = 278
	sysRiscvHwprobe    = 258
	sysMincore         = 232
	sysPrctl           = 167
	futexWait          = 0
	fGetfl             = 3
	oRdwr              = 2
	futexWake          = 1
	futexCmdMask       = 0x7f
	ssDisable          = 2
	clockRealtime      = 0
	clockRealtimeCoars = 5
)

var randState uint64

//go:nosplit
func runtimeSyscall(h *hart, t *thread, f *Frame) {
	a := &f.X
	nr := a[RegA7]
	var r int64
	switch nr {
	case sysWrite:
		if a[RegA0] == rtEventFD && a[RegA2] == 8 {
			r = rtEventWrite(uintptr(a[RegA1]))
		} else {
			r = rtWrite(uintptr(a[RegA0]), uintptr(a[RegA1]), uintptr(a[RegA2]))
		}
	case sysRead:
		if a[RegA0] == rtEventFD && a[RegA2] == 8 {
			r = rtEventRead(uintptr(a[RegA1]))
		} else {
			r = -errEBADF
		}
	case sysEpollCreate1:
		r = rtEpollFD
	case sysEventfd2:
		r = rtEventFD
	case sysEpollCtl:
		r = rtEpollCtl(uintptr(a[RegA0]), uintptr(a[RegA1]), uintptr(a[RegA2]), uintptr(a[RegA3]))
	case sysEpollPwait:
		r = rtEpollPwait(h, uintptr(a[RegA0]), uintptr(a[RegA1]), uintptr(a[RegA2]), int64(int32(a[RegA3])))
	case sysOpenat:
		r = -errENOENT
	case sysFcntl:
		// The console is open on 0, 1 and 2, read-write and blocking.
		switch {
		case a[RegA0] > 2:
			r = -errEBADF
		case a[RegA1] == fGetfl:
			r = oRdwr
		}
	case sysClose:
		if a[RegA0] != rtEpollFD && a[RegA0] != rtEventFD {
			r = -errEBADF
		}
	case sysMmap:
		r = rtMmap(uintptr(a[RegA0]), uintptr(a[RegA1]), uintptr(a[RegA3]))
	case sysMunmap:
		r = rtMunmap(uintptr(a[RegA0]), uintptr(a[RegA1]))
	case sysMadvise:
		r = rtMadvise(uintptr(a[RegA0]), uintptr(a[RegA1]), uintptr(a[RegA2]))
	case sysMincore, sysRiscvHwprobe:
		r = -errENOSYS
	case sysPrctl:
		r = -errEINVAL // no named anonymous mappings
	case sysClone:
		r = rtClone(f)
	case sysExit:
		t.state = threadFree
		return
	case sysExitGroup:
		print("kernel: exit_group(")
		printDec(int64(a[RegA0]))
		print(")\n")
		powerOff(int(a[RegA0] & 0xff))
	case sysFutex:
		r = rtFutex(h, uintptr(a[RegA0]), int(a[RegA1]), uint32(a[RegA2]), uintptr(a[RegA3]))
	case sysNanosleep:
		r = rtNanosleep(h, uintptr(a[RegA0]))
	case sysSchedYield:
		t.state = threadRunnable
	case sysClockGettime:
		r = rtClockGettime(int(a[RegA0]), uintptr(a[RegA1]))
	case sysSchedGetaff:
		// One bit per running hart: that is where GOMAXPROCS comes from.
		if a[RegA1] < 8 || !storeU64(uintptr(a[RegA2]), 1) {
			r = -errEINVAL
		} else {
			r = 8
		}
	case sysGettid:
		r = int64(t.tid)
	case sysGetpid:
		r = 1
	case sysKill, sysTkill, sysTgkill:
		r = 0 // the kernel's runtime gets no signals
	case sysRtSigaction, sysRtSigprocmask:
		if old := uintptr(a[RegA2]); old != 0 {
			for off := uintptr(0); off < 24; off += 8 {
				storeU64(old+off, 0)
			}
		}
	case sysSigaltstack:
		if old := uintptr(a[RegA1]); old != 0 {
			storeU64(old, 0)
			storeU64(old+8, ssDisable)
			storeU64(old+16, 0)
		}
	case sysPrlimit64:
		if old := uintptr(a[RegA3]); old != 0 {
			storeU64(old, 1024)
			storeU64(old+8, 1024)
		}
	case sysGetrandom:
		r = rtGetrandom(uintptr(a[RegA0]), uintptr(a[RegA1]))
	case sysEnterUser:
		t.user = uintptr(a[RegA0])
		return
	case sysWaitIRQ:
		irq := a[RegA0]
		if irq == 0 || irq >= 64 {
			r = -errEINVAL
		} else if irqPending&(1<<irq) != 0 {
			irqPending &^= 1 << irq
		} else {
			plicEnable(h, uint32(irq), true)
			block(h, uintptr(irq), 0, 0)
		}
	default:
		print("\nkernel: the kernel's runtime made syscall ")
		printDec(int64(nr))
		print(" (")
		print(syscallName(nr))
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
	for done := uintptr(0); done < n; {
		pa := kva(buf + done)
		if pa == 0 {
			return -errEFAULT
		}
		chunk := min(n-done, mmPage-(buf+done)&pageMask)
		for i := uintptr(0); i < chunk; i++ {
			putc(*(*byte)(mm.Ptr(pa + i)))
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
	c.user = 0
	c.tid = nextTID
	nextTID++
	c.waitKey, c.deadline = 0, 0
	c.state = threadRunnable
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

//go:nosplit
func rtNanosleep(h *hart, req uintptr) int64 {
	d, ok := readTimespec(req)
	if !ok {
		return -errEFAULT
	}
	block(h, 0, readTime()+max(d, 1), 0)
	return 0
}

//go:nosplit
func rtClockGettime(clock int, tp uintptr) int64 {
	ns := ticksToNs(readTime())
	if clock == clockRealtime || clock == clockRealtimeCoars {
		ns += wallOffsetNs
	}
	if !storeU64(tp, uint64(ns/1e9)) || !storeU64(tp+8, uint64(ns%1e9)) {
		return -errEFAULT
	}
	return 0
}

// rtGetrandom fills the buffer from a xorshift generator seeded with the
// time CSR, and reseeded from virtio-rng at boot when that device is
// present (SeedRandom). It is not cryptographic: the kernel's runtime uses
// getrandom only to seed its hash functions and scheduler.
//
//go:nosplit
func rtGetrandom(buf, n uintptr) int64 {
	if randState == 0 {
		randState = readTime() | 1
	}
	for i := uintptr(0); i < n; i++ {
		randState ^= randState << 13
		randState ^= randState >> 7
		randState ^= randState << 17
		pa := kva(buf + i)
		if pa == 0 {
			return -errEFAULT
		}
		*(*byte)(mm.Ptr(pa)) = byte(randState)
	}
	return int64(n)
}

//go:nosplit
func syscallName(nr uint64) string {
	switch nr {
	case 17:
		return "getcwd"
	case 23:
		return "dup"
	case 24:
		return "dup3"
	case 29:
		return "ioctl"
	case 48:
		return "faccessat"
	case 62:
		return "lseek"
	case 78:
		return "readlinkat"
	case 79:
		return "newfstatat"
	case 80:
		return "fstat"
	case 96:
		return "set_tid_address"
	case 99:
		return "set_robust_list"
	case 103:
		return "setitimer"
	case 107:
		return "timer_create"
	case 110:
		return "timer_settime"
	case 111:
		return "timer_delete"
	case 160:
		return "uname"
	case 163:
		return "getrlimit"
	case 169:
		return "gettimeofday"
	case 174:
		return "getuid"
	case 198:
		return "socket"
	case 203:
		return "connect"
	case 214:
		return "brk"
	case 59:
		return "pipe2"
	case 72:
		return "pselect6"
	case 139:
		return "rt_sigreturn"
	case 293:
		return "rseq"
	}
	return "unknown"
}
