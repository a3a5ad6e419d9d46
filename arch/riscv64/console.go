//go:build riscv64

package riscv64

// Console output that works in any context, trap handler included: a
// polled NS16550A transmitter. The console driver proper (input,
// interrupts) lives in drivers/.

const (
	uartTHR     = 0
	uartLSR     = 5
	uartLSRTHRE = 1 << 5
)

var uartBase uintptr = 0x1000_0000 // replaced by the device tree's serial node at boot

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
