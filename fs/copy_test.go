package fs

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCopyBytes: every offset of dst and src within a word, lengths
// around the word loop's edges, bytes beyond n untouched.
func TestCopyBytes(t *testing.T) {
	src := make([]byte, 600)
	for i := range src {
		src[i] = byte(rand.IntN(256))
	}
	for dOff := range 8 {
		for sOff := range 8 {
			for _, n := range []int{0, 1, 7, 63, 64, 65, 71, 72, 100, 257, 512} {
				dst := bytes.Repeat([]byte{0xee}, 600)
				got := copyBytes(dst[dOff:dOff+n], src[sOff:sOff+n+3])
				if got != n || !bytes.Equal(dst[dOff:dOff+n], src[sOff:sOff+n]) {
					t.Fatalf("dst+%d src+%d n %d: copied %d, bytes differ", dOff, sOff, n, got)
				}
				if dst[dOff+n] != 0xee || (dOff > 0 && dst[dOff-1] != 0xee) {
					t.Fatalf("dst+%d src+%d n %d: wrote outside dst", dOff, sOff, n)
				}
			}
		}
	}
}

func BenchmarkCopyBytesMisaligned(b *testing.B) {
	dst, src := make([]byte, 1<<16), make([]byte, 1<<16+8)
	b.SetBytes(1 << 16)
	for b.Loop() {
		copyBytes(dst, src[4:])
	}
}
