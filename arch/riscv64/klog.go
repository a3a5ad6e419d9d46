//go:build riscv64

package riscv64

// The kernel's log: what the kernel's own runtime writes to the console
// (the boot messages, fmt's output, a panic) is also kept in a ring, in
// the records syslog(2) reads on Linux: each line as "<6>[    s.micros] "
// and its text (all at KERN_INFO: the kernel gives its messages no
// levels). It is written under the console lock, in a trap as anywhere.

// KernelLogSize is the ring's size: Linux's default log_buf_len
// (CONFIG_LOG_BUF_SHIFT 17).
const KernelLogSize = 128 << 10

var (
	klog        [KernelLogSize]byte
	klogWritten uint64 // bytes ever put in the ring, which holds the last KernelLogSize
	klogMidLine bool   // the last byte put was not a newline
)

// klogPut appends c to the log, its line's prefix first when c starts one
// (console lock held).
//
//go:nosplit
func klogPut(c byte) {
	if !klogMidLine {
		klogPrefix()
	}
	klogByte(c)
	klogMidLine = c != '\n'
}

//go:nosplit
func klogByte(c byte) {
	klog[klogWritten%KernelLogSize] = c
	klogWritten++
}

// klogPrefix writes "<6>[%5d.%06d] " with the time since boot.
//
//go:nosplit
func klogPrefix() {
	us := uint64(ticksToNs(readTime()-bootTicks)) / 1000
	klogByte('<')
	klogByte('6')
	klogByte('>')
	klogByte('[')
	sec := us / 1e6
	width := 1
	for p := uint64(10); p <= sec && width < 20; p *= 10 {
		width++
	}
	for ; width < 5; width++ {
		klogByte(' ')
	}
	klogDigits(sec, 0)
	klogByte('.')
	klogDigits(us%1e6, 6)
	klogByte(']')
	klogByte(' ')
}

// klogDigits writes v in decimal, zero-padded to width.
//
//go:nosplit
func klogDigits(v uint64, width int) {
	var d [20]byte
	n := 0
	for v > 0 || n == 0 || n < width {
		d[n] = byte('0' + v%10)
		v /= 10
		n++
	}
	for n > 0 {
		n--
		klogByte(d[n])
	}
}

// KernelLog copies the log from position from (a count of bytes since
// boot) into buf, and returns how many bytes it copied and the position
// they start at: later than from when the ring no longer holds what was
// there. The end is the position written up to now.
func KernelLog(buf *[KernelLogSize]byte, from uint64) (n int, start uint64) {
	old := disableInterrupts()
	lockConsole()
	n, start = klogCopy(buf, from)
	unlockConsole()
	restoreInterrupts(old)
	return n, start
}

//go:nosplit
func klogCopy(buf *[KernelLogSize]byte, from uint64) (int, uint64) {
	start := from
	if klogWritten > KernelLogSize && start < klogWritten-KernelLogSize {
		start = klogWritten - KernelLogSize
	}
	if start > klogWritten {
		start = klogWritten
	}
	n := 0
	for p := start; p < klogWritten; p++ {
		buf[n] = klog[p%KernelLogSize]
		n++
	}
	return n, start
}
