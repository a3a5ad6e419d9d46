package main

import (
	"strings"
	"testing"
)

func TestRepeatabilityJudge(t *testing.T) {
	run := func(pass bool, outcomes ...string) selfcheckOutcome {
		o := selfcheckOutcome{Pass: pass, Outcomes: map[string]string{}}
		for i := 0; i < len(outcomes); i += 2 {
			o.Order = append(o.Order, outcomes[i])
			o.Outcomes[outcomes[i]] = outcomes[i+1]
		}
		return o
	}
	same := &repeatResult{
		Selfchecks:        []selfcheckOutcome{run(true, "linux", "pass", "forgery", "fail at nginx-fingerprint [fingerprint]"), run(true, "linux", "pass", "forgery", "fail at nginx-fingerprint [fingerprint]")},
		SelfcheckExitCode: []int{0, 0},
		Probes:            []probeRun{{Seed: 7, Requests: 300}, {Seed: 8, Requests: 300}},
	}
	same.judge()
	if !same.Pass || !same.SameVerdicts || same.ProbeDifferences != 0 {
		t.Errorf("identical runs: %+v", same)
	}
	md := repeatMarkdown(same)
	if !strings.Contains(md, "2 runs, 600 requests in all, 0 differences") || !strings.Contains(md, "Every run gave every check the same verdict") {
		t.Errorf("markdown:\n%s", md)
	}

	differ := &repeatResult{
		Selfchecks:        []selfcheckOutcome{run(true, "linux", "pass", "forgery", "fail at nginx-fingerprint [fingerprint]"), run(false, "linux", "pass", "forgery", "pass")},
		SelfcheckExitCode: []int{0, 1},
		Probes:            []probeRun{{Seed: 7, Requests: 300, Differences: []string{"#12 GET /: status 200, oracle 206"}}},
	}
	differ.judge()
	if differ.Pass || differ.SameVerdicts || differ.ProbeDifferences != 1 ||
		len(differ.Disagreement) != 1 || differ.Disagreement[0] != "forgery: run 1 fail at nginx-fingerprint [fingerprint], run 2 pass" {
		t.Errorf("differing runs: %+v", differ)
	}
	if md := repeatMarkdown(differ); !strings.Contains(md, "The runs disagree") || !strings.Contains(md, "seed 7: #12 GET /") {
		t.Errorf("markdown:\n%s", md)
	}
}
