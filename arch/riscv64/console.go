//go:build riscv64

package riscv64

// Console output that works in any context, trap handler included: a
// polled transmitter, of a 16550 (ns16550a, or snps,dw-apb-uart as on the
// VisionFive 2, with the tree's reg-shift and reg-io-width) or of SiFive's
// UART (sifive,uart0), the first of them the device tree has. The console
// driver proper (input, interrupts) lives in drivers/.

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
