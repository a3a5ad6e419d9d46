package riscv64

import "math/bits"

// keystream is the generator behind the kernel's own getrandom (the
// runtime's hash seeds, and crypto/rand in the kernel: netstack's keys for
// initial sequence numbers and timestamp offsets, its port hashing): the
// ChaCha20 block function (RFC 8439) with fast key erasure, each block
// giving the next key (words 0-7) and 32 bytes of output (words 8-15).
// It runs in the trap handler, so it is written here, nosplit and
// allocation-free, and not taken from a library. Plain data, built on
// every architecture for the host tests.
type keystream struct {
	key [8]uint32
	out [8]uint32
	pos int // bytes of out used; 32: empty
}

// seed mixes b into the key and refills, so that what was there before
// and b both count.
//
//go:nosplit
func (k *keystream) seed(b []byte) {
	for i := 0; i < len(b); i++ {
		w := &k.key[(i/4)%8]
		*w ^= uint32(b[i]) << (8 * (i % 4))
	}
	k.refill()
}

// refill runs the block function on the key with a zero counter and
// nonce: the first half of the block is the next key, the second the
// output.
//
//go:nosplit
func (k *keystream) refill() {
	var x [16]uint32
	chachaBlock(&x, &k.key, 0, [3]uint32{})
	copy(k.key[:], x[:8])
	copy(k.out[:], x[8:])
	k.pos = 0
}

// byte returns the next byte of the stream.
//
//go:nosplit
func (k *keystream) byte() byte {
	if k.pos >= 4*len(k.out) {
		k.refill()
	}
	b := byte(k.out[k.pos/4] >> (8 * (k.pos % 4)))
	k.pos++
	return b
}

// chachaBlock writes ChaCha20's block for key, counter and nonce to x
// (RFC 8439, 2.3).
//
//go:nosplit
func chachaBlock(x *[16]uint32, key *[8]uint32, counter uint32, nonce [3]uint32) {
	in := [16]uint32{0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
		key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
		counter, nonce[0], nonce[1], nonce[2]}
	*x = in
	for i := 0; i < 10; i++ {
		quarterRound(x, 0, 4, 8, 12)
		quarterRound(x, 1, 5, 9, 13)
		quarterRound(x, 2, 6, 10, 14)
		quarterRound(x, 3, 7, 11, 15)
		quarterRound(x, 0, 5, 10, 15)
		quarterRound(x, 1, 6, 11, 12)
		quarterRound(x, 2, 7, 8, 13)
		quarterRound(x, 3, 4, 9, 14)
	}
	for i := range x {
		x[i] += in[i]
	}
}

//go:nosplit
func quarterRound(x *[16]uint32, a, b, c, d int) {
	x[a] += x[b]
	x[d] = bits.RotateLeft32(x[d]^x[a], 16)
	x[c] += x[d]
	x[b] = bits.RotateLeft32(x[b]^x[c], 12)
	x[a] += x[b]
	x[d] = bits.RotateLeft32(x[d]^x[a], 8)
	x[c] += x[d]
	x[b] = bits.RotateLeft32(x[b]^x[c], 7)
}
