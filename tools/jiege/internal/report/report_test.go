package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func sampleVerify() *Verify {
	v := NewVerify("ours", "ours")
	v.Add(Passf(StageBuild, 1200*time.Millisecond, "make kernel"))
	v.Add(Passf(StageBoot, 2*time.Second, "console output"))
	v.Add(Passf(StagePortOpen, 3*time.Second, "answered"))
	v.Add(Passf(StageFirst200, 500*time.Millisecond, "200 after 3 attempts"))
	v.Add(Failf(StageFingerprint, ClassNotNginx, 10*time.Millisecond, "no Server header | pipe"))
	v.Add(Stage{Name: StageContent, Status: Skip, Detail: "an earlier stage failed"})
	v.Total = Duration(7 * time.Second)
	v.ConsoleLog = "build/console.log"
	return v
}

func TestVerifyPassLogic(t *testing.T) {
	v := NewVerify("linux", "linux")
	if v.Pass {
		t.Error("a verify with no stages passes")
	}
	v.Add(Passf(StageBuild, 0, ""))
	if !v.Pass || v.FailedStage != "" {
		t.Errorf("pass %v failed %q", v.Pass, v.FailedStage)
	}
	v.Add(Failf(StageBoot, ClassBootFailed, 0, "x"))
	v.Add(Failf(StagePortOpen, ClassTimeout, 0, "y"))
	if v.Pass || v.FailedStage != StageBoot {
		t.Errorf("pass %v failed %q, want boot", v.Pass, v.FailedStage)
	}
	v = NewVerify("x", "path")
	v.Add(Passf(StageBuild, 0, ""))
	v.Add(Stage{Name: StageBoot, Status: Skip})
	if v.Pass {
		t.Error("a skipped stage counts as passing")
	}
}

func TestVerifyJSON(t *testing.T) {
	v := sampleVerify()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["schema"] != float64(1) || m["kind"] != "verify" || m["pass"] != false || m["failed_stage"] != StageFingerprint {
		t.Errorf("top level: %v", m)
	}
	if m["total_s"] != float64(7) {
		t.Errorf("total_s = %v, want 7 (seconds)", m["total_s"])
	}
	stages := m["stages"].([]any)
	fp := stages[4].(map[string]any)
	if fp["class"] != "not-nginx" || fp["duration_s"] != 0.01 || fp["status"] != "fail" {
		t.Errorf("stage: %v", fp)
	}
	var back Verify
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Total.D() != 7*time.Second || len(back.Stages) != 6 || back.Stages[0].Duration.D() != 1200*time.Millisecond {
		t.Errorf("round trip: %+v", back)
	}
}

func TestNewStat(t *testing.T) {
	s := NewStat([]float64{3, 1, 2})
	if s.Min != 1 || s.Median != 2 || s.Max != 3 || len(s.Runs) != 3 || s.Runs[0] != 3 {
		t.Errorf("%+v", s)
	}
	if s := NewStat([]float64{4, 1, 3, 2}); s.Median != 2.5 {
		t.Errorf("even median %v", s.Median)
	}
	if s := NewStat(nil); s.Median != 0 || s.Runs != nil && len(s.Runs) != 0 {
		t.Errorf("empty %+v", s)
	}
}

func sampleBench() *Bench {
	b := NewBench(3, 50, 10*time.Second)
	b.Host = "2-core test host"
	b.Targets = []BenchTarget{
		{Target: "linux", KernelKind: "linux", KeepAliveRPS: NewStat([]float64{1000, 1100, 900}),
			FreshRPS: NewStat([]float64{100, 110, 90}), P50MS: NewStat([]float64{2, 2, 2}), P99MS: NewStat([]float64{8, 9, 10}),
			TransferMBps: NewStat([]float64{50, 60, 55}), BootToFirst200: NewStat([]float64{4, 4.2, 4.4}),
			Harts: 2, KeepAlivePerHart: NewStat([]float64{500, 550, 450})},
		{Target: "ours", KernelKind: "ours", KeepAliveRPS: NewStat([]float64{500, 550, 450}),
			FreshRPS: NewStat([]float64{50, 55, 45}), P50MS: NewStat([]float64{4, 4, 4}), P99MS: NewStat([]float64{16, 18, 20}),
			TransferMBps: NewStat([]float64{25, 30, 27.5}), BootToFirst200: NewStat([]float64{1, 1, 1}), Errors: 2, ConnectRetries: 7,
			Harts: 1, KeepAlivePerHart: NewStat([]float64{500, 550, 450})},
		{Target: "<broken>", KernelKind: "path", Error: "boot failed"},
	}
	b.ComputeRatios()
	return b
}

func TestBenchRatios(t *testing.T) {
	b := sampleBench()
	ours := b.Targets[1]
	if ours.KeepAliveRPS.Ratio != 0.5 || ours.P99MS.Ratio != 2 || ours.BootToFirst200.Ratio != 1/4.2 {
		t.Errorf("ratios %v %v %v", ours.KeepAliveRPS.Ratio, ours.P99MS.Ratio, ours.BootToFirst200.Ratio)
	}
	if b.Targets[0].KeepAliveRPS.Ratio != 1 || b.Targets[2].KeepAliveRPS.Ratio != 0 {
		t.Errorf("first %v, broken %v", b.Targets[0].KeepAliveRPS.Ratio, b.Targets[2].KeepAliveRPS.Ratio)
	}
}

func TestVerifyText(t *testing.T) {
	out := VerifyText(sampleVerify())
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "FAIL at nginx-fingerprint (not-nginx)") {
		t.Errorf("headline %q", lines[0])
	}
	// Header plus one row per stage, each starting with the stage name.
	var rows []string
	for _, l := range lines {
		if strings.HasPrefix(l, "STAGE") || regexp.MustCompile(`^[a-z0-9-]+ +(pass|fail|skip) `).MatchString(l) {
			rows = append(rows, l)
		}
	}
	if len(rows) != 7 {
		t.Fatalf("%d table rows:\n%s", len(rows), out)
	}
	// Columns line up: STATUS starts at the same offset in every row.
	col := strings.Index(rows[0], "STATUS")
	for _, r := range rows[1:] {
		if st := r[col:]; !strings.HasPrefix(st, "pass") && !strings.HasPrefix(st, "fail") && !strings.HasPrefix(st, "skip") {
			t.Errorf("misaligned row %q", r)
		}
	}
	if !strings.Contains(out, "console log: build/console.log") {
		t.Error("no console log path")
	}
}

// mdTable returns the rows of the first Markdown table in s, split into cells.
func mdTable(t *testing.T, s string) [][]string {
	t.Helper()
	var rows [][]string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		if regexp.MustCompile(`^[|:-]+$`).MatchString(l) {
			continue // the separator row
		}
		rows = append(rows, splitRow(l))
	}
	if len(rows) < 2 {
		t.Fatalf("no table in\n%s", s)
	}
	for i, r := range rows {
		if len(r) != len(rows[0]) {
			t.Fatalf("row %d has %d cells, header %d: %q", i, len(r), len(rows[0]), r)
		}
	}
	return rows
}

// splitRow splits a Markdown table row on its unescaped pipes.
func splitRow(l string) []string {
	var cells []string
	var cur strings.Builder
	for i := 1; i < len(l); i++ {
		switch {
		case l[i] == '\\' && i+1 < len(l):
			cur.WriteByte(l[i])
			cur.WriteByte(l[i+1])
			i++
		case l[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(l[i])
		}
	}
	return cells
}

func TestVerifyMarkdown(t *testing.T) {
	out := VerifyMarkdown(sampleVerify())
	rows := mdTable(t, out)
	if len(rows) != 1+6 {
		t.Fatalf("%d rows", len(rows))
	}
	if !strings.Contains(out, `no Server header \| pipe`) {
		t.Error("pipe in a detail not escaped")
	}
}

func TestBenchRender(t *testing.T) {
	b := sampleBench()
	md := BenchMarkdown(b)
	rows := mdTable(t, md)
	// header, harts, 7 metrics, errors row; three target columns.
	if len(rows) != 10 || len(rows[0]) != 4 {
		t.Fatalf("table %d x %d:\n%s", len(rows), len(rows[0]), md)
	}
	if harts := strings.Join(rows[1], "|"); harts != "harts (-smp)|2|1|-" {
		t.Errorf("harts row %q", harts)
	}
	ka := strings.Join(rows[2], "|")
	if !strings.Contains(ka, "1000 (900-1100)") || !strings.Contains(ka, "500 (450-550) x0.50") {
		t.Errorf("keep-alive row %q", ka)
	}
	// Linux's 1000 req/s on two harts is ours's 500 on one, per hart.
	if perHart := strings.Join(rows[8], "|"); !strings.Contains(perHart, "500 (450-550) x1.00") {
		t.Errorf("per-hart row %q", perHart)
	}
	if !strings.Contains(md, "boot failed") || !strings.Contains(md, "2-core test host") {
		t.Error("missing target error or host")
	}
	txt := BenchText(b)
	if !strings.Contains(txt, "x0.50") || !strings.Contains(txt, "2 / 7") {
		t.Errorf("text:\n%s", txt)
	}
	b.Targets[0].WrkKeepAliveRPS = &Stat{Runs: []float64{1200}, Median: 1200, Min: 1200, Max: 1200}
	if !strings.Contains(BenchText(b), "wrk keep-alive") {
		t.Error("no wrk row")
	}
}

func sampleCompare() *Compare {
	c := NewCompare("attempts.json")
	failing := sampleVerify()
	passing := NewVerify("a", "attempt")
	for _, s := range StageOrder {
		passing.Add(Passf(s, time.Second, ""))
	}
	bt := sampleBench().Targets
	c.Rows = []Row{
		RowFrom("slow-but-broken", Meta{Model: "m1"}, failing, &bt[0]),
		RowFrom("<b>fast</b>", Meta{Model: "m2", Duration: "3h", Cost: "$12"}, passing, &bt[1]),
		RowFrom("faster", Meta{Model: "m3"}, passing, &bt[0]),
	}
	c.Rank()
	return c
}

func TestCompareRank(t *testing.T) {
	c := sampleCompare()
	var names []string
	for _, r := range c.Rows {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "faster,<b>fast</b>,slow-but-broken" {
		t.Errorf("order %v", names)
	}
	last := c.Rows[2]
	if last.Rank != 3 || last.Pass || last.FailedStage != StageFingerprint || last.FailClass != ClassNotNginx || last.StagesPassed != 4 || last.StagesTotal != len(StageOrder) {
		t.Errorf("row %+v", last)
	}
}

func TestCompareMarkdownAndText(t *testing.T) {
	c := sampleCompare()
	rows := mdTable(t, CompareMarkdown(c))
	if len(rows) != 4 || rows[1][0] != "1" || rows[1][1] != "faster" || !strings.HasPrefix(rows[3][5], "fail at nginx-fingerprint") {
		t.Errorf("rows %q", rows)
	}
	if rows[2][1] != "&lt;b>fast&lt;/b>" {
		t.Errorf("HTML in a name not neutralised: %q", rows[2][1])
	}
	txt := CompareText(c)
	if !strings.Contains(txt, "$12") || !strings.Contains(txt, fmt.Sprintf("%d/%d", len(StageOrder), len(StageOrder))) {
		t.Errorf("text:\n%s", txt)
	}
}

// parseHTML checks that s is well-formed (our pages are also valid XML)
// and returns the elements by name.
func parseHTML(t *testing.T, s string) map[string][]xml.StartElement {
	t.Helper()
	body := strings.TrimPrefix(s, "<!DOCTYPE html>\n")
	d := xml.NewDecoder(strings.NewReader(body))
	d.Strict = true
	els := map[string][]xml.StartElement{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, s)
		}
		if se, ok := tok.(xml.StartElement); ok {
			els[se.Name.Local] = append(els[se.Name.Local], se)
		}
	}
	return els
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// selfContained checks that a page loads nothing from elsewhere: links
// only to its own elements, scripts only inline.
func selfContained(t *testing.T, s string) {
	t.Helper()
	for _, bad := range []string{"<link", "src=", "url(", "@import", "http://", "https://"} {
		if strings.Contains(s, bad) {
			t.Errorf("page refers to something outside itself: %q", bad)
		}
	}
	if n, local := strings.Count(s, "href="), strings.Count(s, `href="#`); n != local {
		t.Errorf("%d of %d links lead outside the page", n-local, n)
	}
}

// peerCompare is sampleCompare with Debian's Linux as a fourth row.
func peerCompare() *Compare {
	c := sampleCompare()
	lv := NewVerify("linux", "linux")
	for _, s := range StageOrder {
		lv.Add(Passf(s, time.Second, ""))
	}
	lv.FingerprintSeed = 424242
	lv.QEMUCommand = []string{"qemu-system-riscv64", "-machine", "virt", "-append", "console=ttyS0 quiet"}
	bt := sampleBench().Targets
	c.Rows = append(c.Rows, RowFrom("linux", Meta{}, lv, &bt[0]))
	c.Rows[0].ConsoleTail = "boot line\n<panic> here"
	c.Rank()
	c.ComputePeerRatios()
	return c
}

func TestComputePeerRatios(t *testing.T) {
	c := peerCompare()
	if c.Peer != "linux" {
		t.Fatalf("peer %q", c.Peer)
	}
	for _, r := range c.Rows {
		var want float64
		switch r.Name {
		case "<b>fast</b>":
			want = 0.5
		case "linux", "faster", "slow-but-broken":
			want = 1
		}
		if r.Bench.KeepAliveRPS.Ratio != want {
			t.Errorf("%s: keep-alive ratio %v, want %v", r.Name, r.Bench.KeepAliveRPS.Ratio, want)
		}
	}
	if r := c.Rows[2]; r.Name != "<b>fast</b>" || r.Bench.P99MS.Ratio != 2 || r.Bench.BootToFirst200.Ratio != 1/4.2 {
		t.Errorf("row %s: p99 x%v boot x%v", r.Name, r.Bench.P99MS.Ratio, r.Bench.BootToFirst200.Ratio)
	}
	md := CompareMarkdown(c)
	if !strings.Contains(md, "x0.50") || !strings.Contains(md, "ratio to linux") {
		t.Errorf("markdown lacks the ratios:\n%s", md)
	}
	// Without a Linux row there is no peer and no ratio.
	c = sampleCompare()
	c.ComputePeerRatios()
	if c.Peer != "" || c.Rows[0].Bench.KeepAliveRPS.Ratio != 0 || strings.Contains(CompareMarkdown(c), " x") {
		t.Errorf("peer %q, ratio %v", c.Peer, c.Rows[0].Bench.KeepAliveRPS.Ratio)
	}
}

func TestCompareHTML(t *testing.T) {
	c := peerCompare()
	s := CompareHTML(c)
	selfContained(t, s)
	els := parseHTML(t, s)
	var rows, links, details []string
	for _, tr := range els["tr"] {
		if a := attr(tr, "data-attempt"); a != "" {
			rows = append(rows, a)
		}
	}
	for _, a := range els["a"] {
		// The page's script unescapes the fragment as the browser gives it.
		l, err := url.PathUnescape(attr(a, "href"))
		if err != nil {
			t.Fatal(err)
		}
		links = append(links, l)
	}
	for _, d := range els["details"] {
		details = append(details, "#"+attr(d, "id"))
	}
	if strings.Join(rows, ",") != "faster,linux,<b>fast</b>,slow-but-broken" {
		t.Errorf("table rows %q", rows)
	}
	// Every attempt's name leads to its evidence.
	if strings.Join(links, ",") != strings.Join(details, ",") || len(details) != 4 {
		t.Errorf("links %q, evidence %q", links, details)
	}
	// Stages passed, then one chart per leaderboard figure, one bar per row.
	if len(els["svg"]) != 1+len(compareMetrics) || len(els["rect"]) != 4*(1+len(compareMetrics)) {
		t.Fatalf("svg %d rect %d", len(els["svg"]), len(els["rect"]))
	}
	// Keep-alive (second chart): scaled to the largest median, 1000 req/s
	// fills the width, 500 half of it; a failed attempt is red.
	w := func(i int) string { return attr(els["rect"][4+i], "width") }
	if w(0) != "420.0" || w(2) != "210.0" || attr(els["rect"][7], "fill") != "#c66" || attr(els["rect"][4], "fill") == "#c66" {
		t.Errorf("keep-alive bars: %v", els["rect"][4:8])
	}
	for _, want := range []string{
		"500 (450-550) x0.50",                    // a table cell with its ratio to the peer
		"&lt;b&gt;fast&lt;/b&gt;",                // names escaped
		"no Server header | pipe",                // a stage's detail in the evidence
		"jiege verify --fingerprint-seed 424242", // the seed and how to replay it
		"qemu-system-riscv64 -machine virt -append &#39;console=ttyS0 quiet&#39;", // the exact command, quoted
		"boot line\n&lt;panic&gt; here",                                           // the console tail
		"ratio to linux",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(s, "<b>fast</b>") {
		t.Error("attempt name not escaped in HTML")
	}
}

func TestBenchHTML(t *testing.T) {
	s := BenchHTML(sampleBench())
	selfContained(t, s)
	els := parseHTML(t, s)
	// One chart per higher-is-better figure, one bar per target.
	if len(els["svg"]) != 4 || len(els["rect"]) != 12 {
		t.Fatalf("svg %d rect %d", len(els["svg"]), len(els["rect"]))
	}
	if attr(els["rect"][2], "width") != "0.0" || attr(els["rect"][2], "fill") != "#c66" {
		t.Errorf("target without figures: %v", els["rect"][2])
	}
}

func TestVerifySeedRendered(t *testing.T) {
	v := sampleVerify()
	if strings.Contains(VerifyText(v), "fingerprint seed") {
		t.Error("a seed shown where none was drawn")
	}
	v.FingerprintSeed = 4191616466619739
	if out := VerifyText(v); !strings.Contains(out, "fingerprint seed: 4191616466619739 (replay: --fingerprint-seed 4191616466619739)") {
		t.Errorf("text lacks the seed:\n%s", out)
	}
	if out := VerifyMarkdown(v); !strings.Contains(out, "- fingerprint seed: 4191616466619739") {
		t.Errorf("markdown lacks the seed:\n%s", out)
	}
	b, err := json.Marshal(v)
	if err != nil || !strings.Contains(string(b), `"fingerprint_seed":4191616466619739`) {
		t.Errorf("json %s (%v)", b, err)
	}
}

// shardsOf splits a leaderboard's rows into partial results as compare
// --shard would write them.
func shardsOf(c *Compare, n int) ([]*Compare, []string) {
	var names []string
	for _, r := range c.Rows {
		names = append(names, r.Name)
	}
	var parts []*Compare
	var files []string
	for k := range n {
		p := NewCompare(c.Manifest)
		p.Host = c.Host
		p.Shard = &Shard{Index: k, Count: n, Attempts: names}
		for i, r := range c.Rows {
			if p.Shard.Holds(i) {
				r.Rank, r.Bench = 0, cloneBench(r.Bench)
				p.Rows = append(p.Rows, r)
			}
		}
		parts = append(parts, p)
		files = append(files, fmt.Sprintf("shard-%d.json", k))
	}
	return parts, files
}

func cloneBench(b *BenchTarget) *BenchTarget {
	if b == nil {
		return nil
	}
	c := *b
	return &c
}

func TestMergeCompare(t *testing.T) {
	whole := peerCompare()
	parts, files := shardsOf(whole, 3)
	m, err := MergeCompare(parts, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Rows) != len(whole.Rows) || m.Peer != "linux" || strings.Join(m.Merged, ",") != "shard-0.json,shard-1.json,shard-2.json" {
		t.Fatalf("merged %d rows, peer %q, from %v", len(m.Rows), m.Peer, m.Merged)
	}
	if md := CompareMarkdown(m); !strings.Contains(md, "Merged from: shard-0.json, shard-1.json, shard-2.json") {
		t.Errorf("merged markdown:\n%s", md)
	}
	if md := CompareMarkdown(parts[1]); !strings.Contains(md, "Partial result: shard 1 of 3 of the manifest's 4 attempts.") {
		t.Errorf("partial markdown:\n%s", md)
	}
	for i, r := range m.Rows {
		w := whole.Rows[i]
		if r.Name != w.Name || r.Rank != w.Rank || r.Pass != w.Pass || r.FailedStage != w.FailedStage ||
			(r.Bench != nil && r.Bench.KeepAliveRPS.Ratio != w.Bench.KeepAliveRPS.Ratio) {
			t.Errorf("row %d: %s rank %d, want %s rank %d", i, r.Name, r.Rank, w.Name, w.Rank)
		}
	}
	for _, c := range []struct {
		name  string
		parts []*Compare
		files []string
		want  string
	}{
		{"missing", parts[:2], files[:2], "shards missing: 2/3"},
		{"twice", []*Compare{parts[0], parts[1], parts[1], parts[2]}, []string{"a", "b", "c", "d"}, "shard 1/3 given twice: b and c"},
		{"not a shard", []*Compare{whole}, []string{"whole.json"}, "whole.json is not a partial leaderboard"},
	} {
		if _, err := MergeCompare(c.parts, c.files); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	other, ofiles := shardsOf(sampleCompare(), 3)
	if _, err := MergeCompare([]*Compare{parts[0], other[1], parts[2]}, []string{files[0], ofiles[1], files[2]}); err == nil ||
		!strings.Contains(err.Error(), "another manifest") {
		t.Errorf("shards of two manifests: %v", err)
	}
}

// A figure whose runs spread more than NoisyFactor is marked noisy, with
// its min-max, in the Markdown and on the page; a steady one is not.
func TestNoisyFigures(t *testing.T) {
	c := peerCompare()
	var linux *BenchTarget
	for i, r := range c.Rows {
		if r.Name == "linux" {
			own := *r.Bench // the sample's rows share their figures
			linux, c.Rows[i].Bench = &own, &own
		}
	}
	if linux.KeepAliveRPS.Noisy() {
		t.Fatalf("900-1100 req/s marked noisy")
	}
	linux.KeepAliveRPS = NewStat([]float64{108, 1263, 1100})
	c.ComputePeerRatios()
	if !linux.KeepAliveRPS.Noisy() {
		t.Fatal("108-1263 req/s not noisy")
	}
	if md := CompareMarkdown(c); !strings.Contains(md, "| 1100 (108-1263) x1.00 noisy |") || strings.Count(md, " noisy |") != 1 {
		t.Errorf("markdown:\n%s", md)
	}
	page := CompareHTML(c)
	if !strings.Contains(page, `<td class="n noisy">1100 (108-1263) x1.00 noisy</td>`) || strings.Count(page, `class="n noisy"`) != 1 {
		t.Errorf("page lacks the one noisy cell:\n%s", page)
	}
}

// A failed attempt's cause, its failed stage's detail, is in its row of
// the table (Markdown and page), not only in the evidence below.
func TestLeaderboardRowCause(t *testing.T) {
	c := peerCompare()
	var broken *Row
	for i := range c.Rows {
		if !c.Rows[i].Pass {
			broken = &c.Rows[i]
		}
	}
	s, _ := broken.Verify.Stage(broken.FailedStage)
	if s.Detail == "" {
		t.Fatal("the sample's failed stage has no detail")
	}
	cause := oneLine(s.Detail)
	if md := CompareMarkdown(c); !strings.Contains(md, "| "+broken.verdict()+" | "+mdCell(cause)+" | ") {
		t.Errorf("markdown row lacks the cause %q:\n%s", cause, md)
	}
	page := CompareHTML(c)
	row := page[strings.Index(page, `<tr data-attempt="`+broken.Name+`">`):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, `<td class="cause">`+template.HTMLEscapeString(cause)+`</td>`) {
		t.Errorf("page row lacks the cause %q:\n%s", cause, row)
	}
	for i := range broken.Verify.Stages {
		if broken.Verify.Stages[i].Name == broken.FailedStage {
			broken.Verify.Stages[i].Detail = strings.Repeat("long ", 100)
		}
	}
	if got := broken.cause(); len(got) != maxCause+3 || !strings.HasSuffix(got, "...") {
		t.Errorf("a long cause is not clipped: %d bytes", len(got))
	}
}

// A pass with configuration deviations says so in every rendering and in
// the leaderboard's verdict, distinct from a plain pass.
func TestPassWithDeviations(t *testing.T) {
	v := NewVerify("--attempt a", "attempt")
	for _, name := range StageOrder {
		v.Add(Passf(name, time.Second, "ok"))
	}
	v.Deviations = []string{"keep-alive off"}
	if !v.Pass {
		t.Fatal("deviations made it fail")
	}
	b, err := json.Marshal(v)
	if err != nil || !strings.Contains(string(b), `"deviations":["keep-alive off"]`) {
		t.Errorf("JSON %s, %v", b, err)
	}
	const want = "with deviations (keep-alive off)"
	if !strings.Contains(VerifyText(v), "PASS "+want) || !strings.Contains(VerifyMarkdown(v), "PASS "+want) {
		t.Errorf("text or Markdown lacks %q:\n%s\n%s", want, VerifyText(v), VerifyMarkdown(v))
	}
	r := RowFrom("a", Meta{}, v, nil)
	if r.verdict() != "pass "+want || strings.Join(r.Deviations, ",") != "keep-alive off" {
		t.Errorf("row verdict %q, deviations %q", r.verdict(), r.Deviations)
	}
	v.Deviations = nil
	if r = RowFrom("a", Meta{}, v, nil); r.verdict() != "pass" {
		t.Errorf("plain pass: %q", r.verdict())
	}
}

// TestCountedFigures: bench --icount's figures get rows, ratios to the
// first target and the leaderboard's columns; without them neither shows.
func TestCountedFigures(t *testing.T) {
	b := sampleBench()
	if strings.Contains(BenchText(b), "instructions") {
		t.Fatal("counted rows without counted figures")
	}
	b.Targets[0].Counted = NewCounted([]RunCounted{{KeepAlive: RunWork{Kernel: 62000, User: 19000, HostCPUMS: 0.5}, First200: RunWork{Kernel: 2e9}}})
	b.Targets[1].Counted = NewCounted([]RunCounted{
		{KeepAlive: RunWork{Kernel: 93000, User: 19100, HostCPUMS: 0.4}, Transfer: &RunWork{Kernel: 5.9e6}, First200: RunWork{Kernel: 5e7}},
		{KeepAlive: RunWork{Kernel: 95000, User: 19100, HostCPUMS: 0.3}, Transfer: &RunWork{Kernel: 6.1e6}, First200: RunWork{Kernel: 5e7}},
	})
	b.ComputeRatios()
	ka := b.Targets[1].Counted.KeepAlive
	if ka.Kernel.Median != 94000 || ka.Kernel.Ratio != 94000.0/62000 || b.Targets[1].Counted.First200.Kernel.Ratio != 0.025 {
		t.Errorf("keep-alive kernel %+v, first 200 %+v", ka.Kernel, b.Targets[1].Counted.First200.Kernel)
	}
	if len(b.Targets[0].Counted.Transfer.Kernel.Runs) != 0 {
		t.Error("a run without a transfer counted one")
	}
	txt := BenchText(b)
	for _, want := range []string{"keep-alive kernel (S) instructions (insns/req)", "62k", "94k (93k-95k) x1.52", "transfer kernel (S) instructions (insns/MB)", "6M (5.9M-6.1M)", "2G", "50M (50M-50M) x0.03", "QEMU host CPU (ms/req)"} {
		if !strings.Contains(txt, want) {
			t.Errorf("no %q in:\n%s", want, txt)
		}
	}
	c := sampleCompare()
	if strings.Contains(CompareText(c), "instructions") {
		t.Error("counted columns on a leaderboard without counted figures")
	}
	c.Rows[1].Bench.Counted = b.Targets[1].Counted
	if !strings.Contains(CompareText(c), "keep-alive kernel (S) instructions (insns/req)") {
		t.Errorf("no counted column:\n%s", CompareText(c))
	}
}

// TestBenchRenderOpenSBI: ours's first 200 through OpenSBI gets its row
// under the first-200 row, only when a target has it.
func TestBenchRenderOpenSBI(t *testing.T) {
	b := sampleBench()
	b.Targets[1].BootToFirst200OpenSBI = NewStat([]float64{1.5, 1.25, 1.75})
	rows := mdTable(t, BenchMarkdown(b))
	if len(rows) != 11 {
		t.Fatalf("%d rows, want 11", len(rows))
	}
	first := slices.IndexFunc(rows, func(r []string) bool { return strings.HasPrefix(r[0], "boot to first 200 (s)") })
	if first < 0 || first+1 >= len(rows) {
		t.Fatalf("no first-200 row: %q", rows)
	}
	if got := strings.Join(rows[first+1], "|"); got != "boot to first 200 via OpenSBI (s)|-|1.50 (1.25-1.75)|-" {
		t.Errorf("row under first 200: %q", got)
	}
	j, err := json.Marshal(b.Targets[0])
	if err != nil || strings.Contains(string(j), "opensbi") {
		t.Errorf("a target without the figure has it in JSON: %s %v", j, err)
	}
}
