package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

func TestParseWrk(t *testing.T) {
	out := `Running 10s test @ http://127.0.0.1:8080/
  2 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     5.10ms    1.20ms  30.00ms   90.00%
  3920 requests in 10.00s, 1.80MB read
Requests/sec:    391.95
Transfer/sec:    184.20KB
`
	if got := parseWrk([]byte(out)); got != 391.95 {
		t.Errorf("parseWrk = %v", got)
	}
	if got := parseWrk([]byte("unable to connect to 127.0.0.1:1 Connection refused\n")); got != 0 {
		t.Errorf("parseWrk(error) = %v", got)
	}
}

func TestParseTarget(t *testing.T) {
	for _, spec := range []string{"ours", "linux", "control:never-boots"} {
		if _, err := parseTarget(spec); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
	}
	junk := filepath.Join(t.TempDir(), "junk")
	os.WriteFile(junk, []byte("not a kernel at all, not even close to one......................."), 0o644)
	for _, spec := range []string{"control:nope", filepath.Join(t.TempDir(), "missing"), junk} {
		_, err := parseTarget(spec)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage {
			t.Errorf("%s: %v, want a usage error", spec, err)
		}
	}
	if _, err := attemptTarget(filepath.Join(t.TempDir(), "nope"), "", ""); err == nil {
		t.Error("missing attempt directory accepted")
	}
}

// An attempt without a run command is a usage error, not a verdict; one
// whose run target is in an included makefile has a run command.
func TestAttemptWithoutRunCommand(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("build:\n\ttrue\n"), 0o644)
	att := attemptFlags{dir: dir}
	_, err := att.target()
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "no run command") {
		t.Fatalf("no run command: %v, want a usage error", err)
	}
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("build:\n\ttrue\ninclude mk/run.mk\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "mk"), 0o755)
	os.WriteFile(filepath.Join(dir, "mk", "run.mk"), []byte("run:\n\tqemu-system-riscv64 -kernel k\n"), 0o644)
	tg, err := att.target()
	if err != nil || tg.att.RunCommand() != "make run" {
		t.Fatalf("run target in an included file: %v", err)
	}
	att.run, att.dir = "./go.sh", t.TempDir()
	if _, err := att.target(); err != nil {
		t.Errorf("a given run command: %v", err)
	}
}

func verifyFailingAt(stage string) *report.Verify {
	v := report.NewVerify("x", "control")
	for _, name := range report.StageOrder {
		if name == stage {
			v.Add(report.Failf(name, report.ClassTimeout, 0, "boom"))
			break
		}
		v.Add(report.Passf(name, 0, "ok"))
	}
	skipRest(v)
	return v
}

func TestSkipRest(t *testing.T) {
	v := verifyFailingAt(report.StageFirst200)
	if len(v.Stages) != len(report.StageOrder) || v.Pass || v.FailedStage != report.StageFirst200 {
		t.Fatalf("%+v", v)
	}
	if s, _ := v.Stage(report.StageSurvival); s.Status != report.Skip {
		t.Errorf("survival %+v", s)
	}
}

func TestJudge(t *testing.T) {
	pass := report.NewVerify("linux", "linux")
	for _, name := range report.StageOrder {
		pass.Add(report.Passf(name, 0, "ok"))
	}
	cases := []struct {
		ck     check
		ok     bool
		prefix string
	}{
		{check{ExpectStage: report.StageBoot, Counted: true, Verify: verifyFailingAt(report.StageBoot)}, true, "rejected as expected"},
		{check{ExpectStage: report.StageStability, Counted: true, Verify: verifyFailingAt(report.StagePortOpen)}, false, "WRONG"},
		{check{ExpectStage: report.StageBoot, Counted: true, Verify: pass}, false, "WRONG"},
		{check{ExpectPass: true, Counted: true, Verify: pass}, true, "pass"},
		{check{ExpectPass: true, Counted: true, Verify: verifyFailingAt(report.StageContent)}, false, "fail at content"},
		{check{Verify: verifyFailingAt(report.StagePortOpen)}, true, "expected failure (not counted)"},
		{check{Verify: pass}, false, "passes now"},
	}
	for i, c := range cases {
		judge(&c.ck)
		if c.ck.OK != c.ok || !strings.HasPrefix(c.ck.Note, c.prefix) {
			t.Errorf("case %d: ok %v note %q; want %v %q", i, c.ck.OK, c.ck.Note, c.ok, c.prefix)
		}
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"nope"}, {"verify"}, {"verify", "a", "b"}, {"bench"}, {"selfcheck", "--expect-ours", "maybe"},
		{"compare"}, {"run"}, {"rootfs", "--flavor", "bsd"}, {"verify", "--bogus"},
		{"profile"}, {"profile", "linux"}, {"profile", "ours", "--rate", "0"}, {"profile", "ours", "--rate", "20000"},
		{"profile", "ours", "--root", "/"}, {"profile", "ours", "--initrd", "/nonexistent.cpio"},
		{"profile", "ours", "--out", "/nonexistent/cpu.pb.gz"}} {
		if code := run(args); code != exitUsage {
			t.Errorf("jiege %v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code := run([]string{"verify", "--help"}); code != exitPass {
		t.Errorf("--help: exit %d", code)
	}
}

func TestProvenanceExempt(t *testing.T) {
	for spec, exempt := range map[string]bool{
		"linux": true, "ours": false,
		"control:busybox-httpd": true, "control:no-network": true, "control:linux-as-attempt": false,
	} {
		tg, err := parseTarget(spec)
		if err != nil {
			t.Fatal(err)
		}
		if why := tg.provenanceExempt(); (why != "") != exempt {
			t.Errorf("%s: exempt %q, want exempt %v", spec, why, exempt)
		}
	}
	att, err := attemptTarget(t.TempDir(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if why := att.provenanceExempt(); why != "" {
		t.Errorf("an attempt is exempt: %q", why)
	}
}

// The guest's console starts after the shim's last line.
func TestShimLineEnd(t *testing.T) {
	p := filepath.Join(t.TempDir(), "console.log")
	write := func(s string) { os.WriteFile(p, []byte(s), 0o644) }
	write("jiege: qemu -kernel a\nqemu-system-riscv64: could not load kernel 'a'\nmake: Error 1 (ignored)\njiege: qemu -kernel b -initrd c\nJiege-Go 0.1.0\n")
	text, _ := os.ReadFile(p)
	if got, want := shimLineEnd(p, 0), int64(strings.Index(string(text), "Jiege-Go")); got != want {
		t.Errorf("end %d, want %d", got, want)
	}
	if got := shimLineEnd(p, int64(strings.Index(string(text), "Jiege-Go"))); got != -1 {
		t.Errorf("after the last shim line: %d", got)
	}
	write("compiling\njiege: qemu -kernel b -initrd c")
	if got := shimLineEnd(p, 0); got != -1 {
		t.Errorf("unfinished shim line: %d", got)
	}
	write("jiege: qemu -kernel b\nhello\n")
	if got := shimLineEnd(p, 0); got != int64(len("jiege: qemu -kernel b\n")) {
		t.Errorf("shim line first: %d", got)
	}
}
