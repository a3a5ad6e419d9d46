package main

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
)

// TestBenchInterleavesTargets checks that bench boots its targets in
// rounds (one run of each per round), and that a target whose run fails
// stops while the others go on.
func TestBenchInterleavesTargets(t *testing.T) {
	b := &bencher{runs: 3, out: io.Discard}
	linux, ours, broken := &target{name: "linux"}, &target{name: "ours"}, &target{name: "broken"}
	var order []string
	once := func(_ context.Context, t *target) (runFigures, error) {
		order = append(order, t.name)
		if t == broken && len(order) > 3 {
			return runFigures{}, errors.New("no first 200")
		}
		return runFigures{ka: float64(len(order))}, nil
	}
	ss := b.measureInterleaved(context.Background(), []*target{linux, ours, broken}, once)
	want := []string{"linux", "ours", "broken", "linux", "ours", "broken", "linux", "ours"}
	if !slices.Equal(order, want) {
		t.Fatalf("runs in order %v, want %v", order, want)
	}
	if got := ss[1].result(); got.Error != "" || len(got.KeepAliveRPS.Runs) != 3 || got.KeepAliveRPS.Median != 5 {
		t.Errorf("ours: %+v, want three runs, median keep-alive 5", got.KeepAliveRPS)
	}
	if got := ss[2].result(); got.Error != "run 2: no first 200" || len(got.KeepAliveRPS.Runs) != 1 {
		t.Errorf("broken: error %q after %d runs, want run 2's after 1", got.Error, len(got.KeepAliveRPS.Runs))
	}
}
