//go:build riscv64

// Package uart drives the console UART's receiver: input bytes arrive by
// interrupt and go to the console's terminal. Output stays the polled
// transmitter in arch/riscv64, which works in any context. Two kinds: a
// 16550 (ns16550a, snps,dw-apb-uart) at the device tree's reg-shift and
// reg-io-width, and SiFive's UART.
package uart

import (
	arch "github.com/jiege-go/jiege/arch/riscv64"
)

// 16550 registers (numbers, spaced by reg-shift) and bits.
const (
	regRBR   = 0 // receiver buffer (read)
	regIER   = 1 // interrupt enable
	regFCR   = 2 // FIFO control (write)
	regLSR   = 5 // line status
	ierRx    = 1 << 0
	fcrFIFO  = 1 << 0
	lsrReady = 1 << 0
)

// SiFive UART registers (byte offsets) and bits.
const (
	sifiveRxData  = 0x04 // bit 31: empty, else the byte
	sifiveRxCtrl  = 0x0c // bit 0: receiver on; bits 16-18: watermark
	sifiveIE      = 0x10 // bit 1: interrupt while the receive FIFO is above the watermark
	sifiveRxEmpty = 1 << 31
	sifiveRxOn    = 1 << 0
	sifiveIERx    = 1 << 1
)

// Start enables the receive interrupt of UART u (PLIC source irq) and
// calls input with the bytes of each interrupt, from a goroutine of its own.
func Start(u arch.UART, irq int, input func([]byte)) error {
	q, err := arch.OpenIRQ(irq)
	if err != nil {
		return err
	}
	if u.SiFive {
		// Watermark 0: interrupt while the FIFO holds more than none.
		arch.Write32(u.Base+sifiveRxCtrl, sifiveRxOn)
		arch.Write32(u.Base+sifiveIE, sifiveIERx)
	} else {
		u.Write16550(regFCR, fcrFIFO)
		u.Write16550(regIER, ierRx)
	}
	arch.EnableIRQ(irq)
	go func() {
		buf := make([]byte, 0, 64)
		for {
			q.Wait()
			buf = buf[:0]
			for len(buf) < cap(buf) {
				b, ok := readByte(&u)
				if !ok {
					break
				}
				buf = append(buf, b)
			}
			if len(buf) > 0 {
				input(buf)
			}
		}
	}()
	return nil
}

// readByte takes one received byte, if there is one.
func readByte(u *arch.UART) (byte, bool) {
	if u.SiFive {
		v := arch.Read32(u.Base + sifiveRxData)
		return byte(v), v&sifiveRxEmpty == 0
	}
	if u.Read16550(regLSR)&lsrReady == 0 {
		return 0, false
	}
	return u.Read16550(regRBR), true
}
