package riscv64

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// TestChachaBlock checks the block function against RFC 8439's test
// vector (2.3.2).
func TestChachaBlock(t *testing.T) {
	var key [8]uint32
	for i := range key {
		key[i] = binary.LittleEndian.Uint32([]byte{byte(4 * i), byte(4*i + 1), byte(4*i + 2), byte(4*i + 3)})
	}
	nonce := [3]uint32{0x09000000, 0x4a000000, 0}
	var x [16]uint32
	chachaBlock(&x, &key, 1, nonce)
	got := make([]byte, 64)
	for i, w := range x {
		binary.LittleEndian.PutUint32(got[4*i:], w)
	}
	want, _ := hex.DecodeString("10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e" +
		"d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
	if !bytes.Equal(got, want) {
		t.Errorf("block:\n got %x\nwant %x", got, want)
	}
}

// TestKeystream: the stream depends on every byte of the seed and on what
// was mixed in before; each draw erases the key it was made under (its
// first block's first half is the next key, not output), and what follows
// its first 32 bytes are that key's blocks 1, 2, ... (RFC 8439).
func TestKeystream(t *testing.T) {
	read := func(k *keystream, n int) []byte {
		var d draw
		k.start(&d)
		defer d.end()
		b := make([]byte, n)
		for i := 0; i < n; i += 7 { // pieces across the blocks' edges
			d.read(b[i:min(n, i+7)])
		}
		return b
	}
	seed := bytes.Repeat([]byte{7}, 32)
	var a, b keystream
	a.seed(seed)
	b.seed(seed)
	if !bytes.Equal(read(&a, 100), read(&b, 100)) {
		t.Fatal("one seed gave two streams")
	}
	for i := range seed {
		var c keystream
		s := bytes.Clone(seed)
		s[i] ^= 1
		c.seed(s)
		var d keystream
		d.seed(seed)
		if bytes.Equal(read(&c, 32), read(&d, 32)) {
			t.Errorf("seed byte %d does not change the stream", i)
		}
	}
	var e, f keystream
	e.seed([]byte{1})
	e.seed(seed)
	f.seed(seed)
	if bytes.Equal(read(&e, 32), read(&f, 32)) {
		t.Error("a second seed erased the first")
	}
	keyBytes := func(key [8]uint32) []byte {
		b := make([]byte, 32)
		for i, w := range key {
			binary.LittleEndian.PutUint32(b[4*i:], w)
		}
		return b
	}
	var g keystream
	g.seed(seed)
	key := g.key
	out := read(&g, 32+3*64)
	next := g.key
	if key == next {
		t.Fatal("a draw kept the key")
	}
	if bytes.Contains(out, keyBytes(key)) || bytes.Contains(out, keyBytes(next)) {
		t.Error("the output holds a key")
	}
	for blk := 1; blk <= 3; blk++ {
		var x [16]uint32
		chachaBlock(&x, &key, uint32(blk), [3]uint32{})
		want := make([]byte, 64)
		for i, w := range x {
			binary.LittleEndian.PutUint32(want[4*i:], w)
		}
		if got := out[32+64*(blk-1) : 32+64*blk]; !bytes.Equal(got, want) {
			t.Errorf("block %d of the draw:\n got %x\nwant %x", blk, got, want)
		}
	}
	if bytes.Equal(read(&g, 64), out[:64]) {
		t.Error("two draws gave the same bytes")
	}
}
