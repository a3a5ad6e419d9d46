package main

import (
	"slices"
	"testing"
)

func TestReplaySamples(t *testing.T) {
	for _, c := range []struct {
		n, every int
		want     []int
	}{
		{1, 10, []int{0}},
		{5, 2, []int{0, 2, 4}},
		{6, 2, []int{0, 2, 4, 5}},
		{25, 10, []int{0, 10, 20, 24}},
		{3, 1, []int{0, 1, 2}},
	} {
		if got := samples(c.n, c.every); !slices.Equal(got, c.want) {
			t.Errorf("samples(%d, %d) = %v, want %v", c.n, c.every, got, c.want)
		}
	}
}
