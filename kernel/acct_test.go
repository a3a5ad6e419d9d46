package kernel

import "testing"

// comp_t as Linux's encode_comp_t makes it: a 13-bit mantissa and a
// base-8 exponent above it, rounded up when the last bit shifted out of
// the three is set (values worked out by hand from kernel/acct.c).
func TestCompT(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		want uint16
	}{
		{0, 0},
		{100, 100},
		{8191, 8191},         // the largest mantissa, exponent 0
		{8192, 1<<13 | 1024}, // 8192 >> 3, no rounding
		{8196, 1<<13 | 1025}, // bit 2 set: rounded up
		{65528, 1<<13 | 8191},
		{65532, 2<<13 | 1024}, // rounded up past the mantissa: one more shift
		{1 << 40, 0xffff},     // past exponent 7: saturated
	} {
		if got := compT(c.v); got != c.want {
			t.Errorf("compT(%d) = %#x, want %#x", c.v, got, c.want)
		}
	}
}
