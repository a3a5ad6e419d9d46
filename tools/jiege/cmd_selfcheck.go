package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/controls"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// check is one selfcheck expectation and its outcome.
type check struct {
	Target      string `json:"target"`
	About       string `json:"about,omitempty"`
	ExpectPass  bool   `json:"expect_pass"`
	ExpectStage string `json:"expect_stage,omitempty"` // the stage that must fail
	// Counted is false for a check whose outcome is reported but does not
	// decide the selfcheck (ours while it is expected to fail).
	Counted bool           `json:"counted"`
	OK      bool           `json:"ok"`
	Note    string         `json:"note,omitempty"`
	Verify  *report.Verify `json:"verify"`
}

// selfcheckResult is the JSON document of `jiege selfcheck` (schema v1).
type selfcheckResult struct {
	Schema  int             `json:"schema"`
	Kind    string          `json:"kind"` // "selfcheck"
	Started time.Time       `json:"started"`
	Total   report.Duration `json:"total_s"`
	Pass    bool            `json:"pass"`
	Checks  []check         `json:"checks"`
}

func cmdSelfcheck(ctx context.Context, args []string) error {
	fs := newFlags("selfcheck", "[--expect-ours fail|pass] [--only NAME,...]")
	c := &common{}
	c.flags(fs)
	v := &verifier{common: c, out: os.Stderr}
	var expectOurs, jsonOut, mdOut string
	var only []string
	var controlPortTimeout time.Duration
	fs.StringVar(&expectOurs, "expect-ours", "pass", "pass: ours must pass like linux; fail: ours is tried and reported, not counted")
	fs.StringSliceVar(&only, "only", nil, "run only these checks (linux, ours, ours-as-attempt, "+strings.Join(controlNames(), ", ")+")")
	fs.DurationVar(&v.portTimeout, "port-timeout", 90*time.Second, "time allowed for linux and ours to answer HTTP")
	fs.DurationVar(&controlPortTimeout, "control-port-timeout", 60*time.Second, "time allowed for a negative control to answer HTTP (no-network waits all of it)")
	fs.BoolVar(&v.noOracle, "no-oracle", false, "fingerprint without the qemu-user nginx oracle")
	fs.StringVar(&jsonOut, "json", "", "write the result as JSON to FILE")
	fs.StringVar(&mdOut, "md", "", "write the result as Markdown to FILE")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("selfcheck: unexpected argument %q", fs.Arg(0))
	}
	if expectOurs != "fail" && expectOurs != "pass" {
		return usageErr("--expect-ours %q: want fail or pass", expectOurs)
	}
	all := append([]string{kindLinux, kindOurs, kindOursAttempt}, controlNames()...)
	for _, o := range only {
		if !slices.Contains(all, o) {
			return usageErr("--only %q: want one of %s", o, strings.Join(all, ", "))
		}
	}
	c.defaults()
	if err := c.preflight(); err != nil {
		return err
	}

	res := &selfcheckResult{Schema: report.SchemaVersion, Kind: "selfcheck", Started: time.Now().UTC(), Pass: true}
	start := time.Now()
	for _, name := range all {
		if len(only) > 0 && !slices.Contains(only, name) {
			continue
		}
		ck := check{Target: name, Counted: true}
		spec := name
		switch name {
		case kindLinux:
			ck.ExpectPass, ck.About = true, "Debian's Linux with the same nginx and content"
		case kindOurs:
			ck.ExpectPass, ck.Counted, ck.About = expectOurs == "pass", expectOurs == "pass", "our kernel"
		case kindOursAttempt:
			ck.ExpectPass, ck.Counted = expectOurs == "pass", expectOurs == "pass"
			ck.About = "our kernel and rootfs packaged as an attempt (its own Makefile and QEMU command)"
		default:
			ctl, _ := controls.Find(name)
			ck.ExpectStage, ck.About, spec = ctl.Stage, ctl.About, controlPrefix+name
		}
		fmt.Fprintf(os.Stderr, "jiege: selfcheck %s: %s\n", name, ck.About)
		t, err := parseTarget(spec)
		if err != nil {
			return err
		}
		vv := *v
		if ck.ExpectStage != "" {
			vv.portTimeout = controlPortTimeout
		}
		ck.Verify = vv.run(ctx, t)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		judge(&ck)
		if ck.Counted && !ck.OK {
			res.Pass = false
		}
		fmt.Fprintf(os.Stderr, "jiege: selfcheck %s: %s\n", name, ck.Note)
		res.Checks = append(res.Checks, ck)
	}
	res.Total = report.Duration(time.Since(start))
	fmt.Print(selfcheckText(res))
	if err := writeOutputs(res, jsonOut, mdOut, selfcheckMarkdown(res)); err != nil {
		return err
	}
	if !res.Pass {
		return errFailed
	}
	return nil
}

func controlNames() []string {
	var n []string
	for _, c := range controls.All() {
		n = append(n, c.Name)
	}
	return n
}

// judge compares a check's verify result with its expectation.
func judge(ck *check) {
	v := ck.Verify
	got := "pass"
	if !v.Pass {
		s, _ := v.Stage(v.FailedStage)
		got = fmt.Sprintf("fail at %s [%s]: %s", v.FailedStage, s.Class, s.Detail)
	}
	switch {
	case ck.ExpectStage != "":
		ck.OK = !v.Pass && v.FailedStage == ck.ExpectStage
		if ck.OK {
			ck.Note = "rejected as expected: " + got
		} else {
			ck.Note = fmt.Sprintf("WRONG: must fail at %s, got %s", ck.ExpectStage, got)
		}
	case ck.ExpectPass:
		ck.OK = v.Pass
		ck.Note = got
	default: // ours while its failure is expected
		ck.OK = !v.Pass
		if ck.OK {
			ck.Note = "expected failure (not counted): " + got
		} else {
			ck.Note = "passes now (not counted): switch to --expect-ours pass"
		}
	}
}

func verdict(ck check) string {
	switch {
	case ck.OK && ck.Counted:
		return "ok"
	case !ck.Counted:
		return "info"
	}
	return "WRONG"
}

func expectation(ck check) string {
	if ck.ExpectStage != "" {
		return "fail at " + ck.ExpectStage
	}
	if ck.ExpectPass {
		return "pass"
	}
	return "fail (not counted)"
}

func outcome(ck check) string {
	if ck.Verify.Pass {
		return "pass"
	}
	s, _ := ck.Verify.Stage(ck.Verify.FailedStage)
	return fmt.Sprintf("fail at %s [%s]", ck.Verify.FailedStage, s.Class)
}

func selfcheckText(r *selfcheckResult) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tEXPECT\tGOT\tVERDICT\tTIME")
	for _, ck := range r.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0fs\n", ck.Target, expectation(ck), outcome(ck), verdict(ck), ck.Verify.Total.Seconds())
	}
	tw.Flush()
	for _, ck := range r.Checks {
		if ck.Verify.ConsoleLog != "" {
			fmt.Fprintf(&b, "%s: %s (console %s)\n", ck.Target, ck.Note, ck.Verify.ConsoleLog)
		}
	}
	status := "PASS"
	if !r.Pass {
		status = "FAIL"
	}
	fmt.Fprintf(&b, "selfcheck: %s in %.0fs\n", status, r.Total.Seconds())
	return b.String()
}

func selfcheckMarkdown(r *selfcheckResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# jiege selfcheck\n\n| check | expect | got | verdict | time |\n|---|---|---|---|---|\n")
	for _, ck := range r.Checks {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.0f s |\n", ck.Target, expectation(ck), outcome(ck), verdict(ck), ck.Verify.Total.Seconds())
	}
	status := "PASS"
	if !r.Pass {
		status = "FAIL"
	}
	fmt.Fprintf(&b, "\n**%s** in %.0f s\n\n", status, r.Total.Seconds())
	for _, ck := range r.Checks {
		fmt.Fprintf(&b, "- **%s** (%s): %s\n", ck.Target, ck.About, strings.ReplaceAll(ck.Note, "|", "\\|"))
	}
	return b.String()
}
