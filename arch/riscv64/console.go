//go:build riscv64

package riscv64

// Console output that works in any context, trap handler included: a
// polled transmitter, of a 16550 (ns16550a, or snps,dw-apb-uart as on the
// VisionFive 2, with the tree's reg-shift and reg-io-width) or of SiFive's
// UART (sifive,uart0), the first of them the device tree has. The console
// driver proper (input, interrupts) lives in drivers/.

import "sync/atomic"

const (
	uartTHR          = 0
	uartLSR          = 5
	uartLSRTHRE      = 1 << 5
	sifiveTxData     = 0
	sifiveTxDataFull = 1 << 31
)

// UART is a console UART as the device tree describes it.
type UART struct {
	Base uintptr
	// RegShift: register n is at Base + n<<RegShift.
	RegShift uint
	// RegIOWidth: 1 (byte accesses) or 4 (32-bit accesses).
	RegIOWidth int
	// SiFive: SiFive's UART, not a 16550.
	SiFive bool
}

// consoleUARTs are the compatible strings of the UARTs the console
// drives, looked for in this order; a fixed table, only read.
var consoleUARTs = [...]string{"ns16550a", "ns16550", "snps,dw-apb-uart", "sifive,uart0"}

// console is the console's UART (Base 0 until the device tree names one).
var console UART

// findConsole sets console from the device tree.
//
//go:nosplit
func findConsole(dtb uintptr) {
	for _, c := range consoleUARTs {
		node := fdtCompatible(dtb, c)
		if node == 0 {
			continue
		}
		v, n, ok := fdtFindFrom(dtb, node, "", "reg")
		if !ok || n < 16 {
			continue
		}
		u := UART{Base: uintptr(be64(v)), RegIOWidth: 1, SiFive: c == "sifive,uart0"}
		if v, n, ok := fdtFindFrom(dtb, node, "", "reg-shift"); ok && n == 4 {
			u.RegShift = uint(be32(v))
		}
		if v, n, ok := fdtFindFrom(dtb, node, "", "reg-io-width"); ok && n == 4 {
			u.RegIOWidth = int(be32(v))
		}
		console = u
		return
	}
}

// ConsoleUART returns the console's UART (Base 0 when there is none).
func ConsoleUART() UART { return console }

// Read16550 reads register reg of the 16550 u.
//
//go:nosplit
func (u *UART) Read16550(reg uintptr) byte {
	a := u.Base + reg<<u.RegShift
	if u.RegIOWidth == 4 {
		return byte(Read32(a))
	}
	return Read8(a)
}

// Write16550 writes register reg of the 16550 u.
//
//go:nosplit
func (u *UART) Write16550(reg uintptr, v byte) {
	a := u.Base + reg<<u.RegShift
	if u.RegIOWidth == 4 {
		Write32(a, uint32(v))
	} else {
		Write8(a, v)
	}
}

// uartPutc writes c to the console's UART, waiting while its transmitter is full.
//
//go:nosplit
func uartPutc(c byte) {
	u := &console
	if u.SiFive {
		for Read32(u.Base+sifiveTxData)&sifiveTxDataFull != 0 {
		}
		Write32(u.Base+sifiveTxData, uint32(c))
		return
	}
	for u.Read16550(uartLSR)&uartLSRTHRE == 0 {
	}
	u.Write16550(uartTHR, c)
}

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
	if console.Base == 0 { // the SBI console: a call per byte
		for ; done < n; done++ {
			putc(piece[done])
		}
	} else {
		for ; done < n && uartReady(); done++ {
			putc(piece[done]) // a '\n' waits for room for its '\r' too, as every putc
		}
	}
	unlockConsole()
	restoreInterrupts(old)
	return done
}

// uartReady reports whether the console's UART takes a byte now.
//
//go:nosplit
func uartReady() bool {
	u := &console
	if u.SiFive {
		return Read32(u.Base+sifiveTxData)&sifiveTxDataFull == 0
	}
	return u.Read16550(uartLSR)&uartLSRTHRE != 0
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
