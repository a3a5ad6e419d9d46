//go:build riscv64

package riscv64

// Console output that works in any context, trap handler included: a
// polled NS16550A transmitter. The console driver proper (input,
// interrupts) lives in drivers/.

import "sync/atomic"

const (
	uartTHR     = 0
	uartLSR     = 5
	uartLSRTHRE = 1 << 5
)

var uartBase uintptr = 0x1000_0000 // replaced by the device tree's serial node at boot

// consoleLock keeps the kernel's log (the runtime's write, in a trap) and
// ConsoleTransmit from mixing their bytes. It is held with interrupts off
// for a few bytes at a time, and its holder touches no memory that can
// fault.
var consoleLock uint32

//go:nosplit
func lockConsole() {
	for !atomic.CompareAndSwapUint32(&consoleLock, 0, 1) {
	}
}

//go:nosplit
func unlockConsole() { atomic.StoreUint32(&consoleLock, 0) }

// transmitPiece is the most ConsoleTransmit writes at once: the 16550's
// FIFO, a few hundred microseconds at the pace QEMU's UART goes.
const transmitPiece = 16

// ConsoleTransmit writes up to 16 bytes of p to the console as ordinary
// kernel code: not in a trap and without the kernel lock, with interrupts
// off only while it writes them. It returns how many it wrote, 0 when the
// transmitter is busy: the caller then lets other goroutines run before it
// tries again, instead of holding the hart until the UART takes a byte.
func ConsoleTransmit(p []byte) int {
	var piece [transmitPiece]byte
	n := copy(piece[:], p) // any fault on p is taken here, before the lock
	return transmit(&piece, n)
}

//go:nosplit
func transmit(piece *[transmitPiece]byte, n int) int {
	old := disableInterrupts()
	lockConsole()
	done := 0
	if sbiBoot && !uartFound {
		for ; done < n; done++ {
			rawPutc(piece[done])
		}
	} else {
		for ; done < n && Read8(uartBase+uartLSR)&uartLSRTHRE != 0; done++ {
			if piece[done] == '\n' {
				Write8(uartBase+uartTHR, '\r') // as putc: the line ends CRLF
				for Read8(uartBase+uartLSR)&uartLSRTHRE == 0 {
				}
			}
			Write8(uartBase+uartTHR, piece[done])
		}
	}
	unlockConsole()
	restoreInterrupts(old)
	return done
}

//go:nosplit
func putc(c byte) {
	if c == '\n' {
		rawPutc('\r')
	}
	rawPutc(c)
}

//go:nosplit
func print(s string) {
	for i := 0; i < len(s); i++ {
		putc(s[i])
	}
}

//go:nosplit
func printHex(v uint64) {
	print("0x")
	started := false
	for shift := 60; shift >= 0; shift -= 4 {
		d := byte(v>>uint(shift)) & 15
		if d != 0 || started || shift == 0 {
			started = true
			putc("0123456789abcdef"[d])
		}
	}
}

//go:nosplit
func printDec(v int64) {
	if v < 0 {
		putc('-')
		v = -v
	}
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	for ; i < len(buf); i++ {
		putc(buf[i])
	}
}

// Console writes s to the console directly, bypassing any buffering; the
// kernel's Go code uses it for the boot log before drivers run.
func Console(s string) {
	print(s)
}
