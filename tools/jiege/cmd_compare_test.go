package main

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// TestCompareBenchesInRounds checks that compare verifies every entry
// first, then benches the passing ones, the Linux peer included, one run
// of each per round, and gives each entry its own runs.
func TestCompareBenchesInRounds(t *testing.T) {
	b := &bencher{runs: 3, out: io.Discard}
	var entries []*compareEntry
	for _, name := range []string{"linux", "ours", "broken", "attempt"} {
		entries = append(entries, &compareEntry{name: name, t: &target{name: name}})
	}
	var order []string
	verify := func(_ context.Context, e *compareEntry) *report.Verify {
		order = append(order, "verify "+e.name)
		return &report.Verify{Pass: e.name != "broken"}
	}
	figures := map[string]float64{"linux": 100, "ours": 200, "attempt": 50}
	once := func(_ context.Context, t *target) (runFigures, error) {
		order = append(order, t.name)
		return runFigures{ka: figures[t.name] + float64(len(order))}, nil
	}
	if err := b.verifyThenBench(context.Background(), entries, verify, once); err != nil {
		t.Fatal(err)
	}
	want := []string{"verify linux", "verify ours", "verify broken", "verify attempt",
		"linux", "ours", "attempt", "linux", "ours", "attempt", "linux", "ours", "attempt"}
	if !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if entries[2].bench != nil {
		t.Errorf("the failed entry was benched: %+v", entries[2].bench)
	}
	for i, runs := range map[int][]float64{0: {105, 108, 111}, 1: {206, 209, 212}, 3: {57, 60, 63}} {
		if got := entries[i].bench; got == nil || !slices.Equal(got.KeepAliveRPS.Runs, runs) || got.Target != entries[i].name {
			t.Errorf("%s: bench %+v, want keep-alive runs %v", entries[i].name, got, runs)
		}
	}

	// --no-bench verifies only.
	order = nil
	for _, e := range entries {
		e.bench = nil
	}
	if err := b.verifyThenBench(context.Background(), entries, verify, nil); err != nil {
		t.Fatal(err)
	}
	if len(order) != 4 || entries[0].bench != nil {
		t.Errorf("without bench: %v, linux bench %+v", order, entries[0].bench)
	}
}
