package riscv64

import (
	"math/bits"
	"unsafe"
)

// keystream is the generator behind the kernel's own getrandom (the
// runtime's hash seeds, and crypto/rand in the kernel: netstack's keys for
// initial sequence numbers and timestamp offsets, its port hashing): the
// ChaCha20 block function (RFC 8439) with fast key erasure, as Linux's
// get_random_bytes: a draw's first block, under the key, gives the next
// key (words 0-7) and 32 bytes of output (words 8-15); the blocks after
// it under the same key (counter 1, 2, ...) give 64 bytes each, and the
// draw forgets that key when it ends. It runs in the trap handler, so it
// is written here, nosplit and allocation-free, and not taken from a
// library. Plain data, built on every architecture for the host tests.
type keystream struct {
	key [8]uint32
}

// draw is the output of one draw from a keystream.
type draw struct {
	key     [8]uint32 // the keystream's key when the draw started
	counter uint32    // the next block's
	block   [16]uint32
	pos     int // bytes of block used; 64: empty
}

// seed mixes b into the key and rekeys, so that what was there before
// and b both count.
//
//go:nosplit
func (k *keystream) seed(b []byte) {
	for i := 0; i < len(b); i++ {
		w := &k.key[(i/4)%8]
		*w ^= uint32(b[i]) << (8 * (i % 4))
	}
	var d draw
	k.start(&d)
	d.end()
}

// start begins a draw and gives k its next key.
//
//go:nosplit
func (k *keystream) start(d *draw) {
	d.key = k.key
	chachaBlock(&d.block, &d.key, 0, [3]uint32{})
	copy(k.key[:], d.block[:8])
	d.counter = 1
	d.pos = 32
}

// read fills b with the draw's next bytes.
//
//go:nosplit
func (d *draw) read(b []byte) {
	for len(b) > 0 {
		if d.pos == len(d.bytes()) {
			chachaBlock(&d.block, &d.key, d.counter, [3]uint32{})
			d.counter++
			d.pos = 0
		}
		n := copy(b, d.bytes()[d.pos:])
		d.pos += n
		b = b[n:]
	}
}

// bytes is the block as RFC 8439 serialises it: its words little-endian,
// as they lie in memory on RISC-V (and on the hosts the tests run on).
//
//go:nosplit
func (d *draw) bytes() *[64]byte { return (*[64]byte)(unsafe.Pointer(&d.block)) }

// end forgets the draw's key and output.
//
//go:nosplit
func (d *draw) end() { *d = draw{} }

// chachaBlock writes ChaCha20's block for key, counter and nonce to x
// (RFC 8439, 2.3). The state stays in locals, which the compiler keeps in
// registers.
//
//go:nosplit
func chachaBlock(x *[16]uint32, key *[8]uint32, counter uint32, nonce [3]uint32) {
	const c0, c1, c2, c3 = 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574
	x0, x1, x2, x3 := uint32(c0), uint32(c1), uint32(c2), uint32(c3)
	x4, x5, x6, x7 := key[0], key[1], key[2], key[3]
	x8, x9, x10, x11 := key[4], key[5], key[6], key[7]
	x12, x13, x14, x15 := counter, nonce[0], nonce[1], nonce[2]
	for i := 0; i < 10; i++ {
		x0, x4, x8, x12 = quarterRound(x0, x4, x8, x12)
		x1, x5, x9, x13 = quarterRound(x1, x5, x9, x13)
		x2, x6, x10, x14 = quarterRound(x2, x6, x10, x14)
		x3, x7, x11, x15 = quarterRound(x3, x7, x11, x15)
		x0, x5, x10, x15 = quarterRound(x0, x5, x10, x15)
		x1, x6, x11, x12 = quarterRound(x1, x6, x11, x12)
		x2, x7, x8, x13 = quarterRound(x2, x7, x8, x13)
		x3, x4, x9, x14 = quarterRound(x3, x4, x9, x14)
	}
	*x = [16]uint32{x0 + c0, x1 + c1, x2 + c2, x3 + c3,
		x4 + key[0], x5 + key[1], x6 + key[2], x7 + key[3],
		x8 + key[4], x9 + key[5], x10 + key[6], x11 + key[7],
		x12 + counter, x13 + nonce[0], x14 + nonce[1], x15 + nonce[2]}
}

//go:nosplit
func quarterRound(a, b, c, d uint32) (uint32, uint32, uint32, uint32) {
	a += b
	d = bits.RotateLeft32(d^a, 16)
	c += d
	b = bits.RotateLeft32(b^c, 12)
	a += b
	d = bits.RotateLeft32(d^a, 8)
	c += d
	b = bits.RotateLeft32(b^c, 7)
	return a, b, c, d
}
