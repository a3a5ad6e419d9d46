//go:build riscv64

// Package uart drives the NS16550A's receiver: input bytes arrive by
// interrupt and go to the console's terminal. Output stays the polled
// transmitter in arch/riscv64, which works in any context.
package uart

import (
	arch "github.com/jiege-go/jiege/arch/riscv64"
)

// NS16550A registers (byte offsets) and bits.
const (
	regRBR   = 0 // receiver buffer (read)
	regIER   = 1 // interrupt enable
	regFCR   = 2 // FIFO control (write)
	regLSR   = 5 // line status
	ierRx    = 1 << 0
	fcrFIFO  = 1 << 0
	lsrReady = 1 << 0
)

// Start enables the receive interrupt of the UART at base (PLIC source
// irq) and calls input with the bytes of each interrupt, from a goroutine
// of its own.
func Start(base uintptr, irq int, input func([]byte)) error {
	q, err := arch.OpenIRQ(irq)
	if err != nil {
		return err
	}
	arch.Write8(base+regFCR, fcrFIFO)
	arch.Write8(base+regIER, ierRx)
	arch.EnableIRQ(irq)
	go func() {
		buf := make([]byte, 0, 64)
		for {
			q.Wait()
			buf = buf[:0]
			for arch.Read8(base+regLSR)&lsrReady != 0 && len(buf) < cap(buf) {
				buf = append(buf, arch.Read8(base+regRBR))
			}
			if len(buf) > 0 {
				input(buf)
			}
		}
	}()
	return nil
}
