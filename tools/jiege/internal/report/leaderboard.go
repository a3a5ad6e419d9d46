package report

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"slices"
	"strings"
)

// Shard says which share of a manifest a partial leaderboard holds:
// attempt i (from 0, in manifest order) belongs to shard i mod Count.
type Shard struct {
	Index int `json:"index"` // from 0
	Count int `json:"count"`
	// Attempts names every attempt of the manifest, in order, so that a
	// merge can tell a missing shard or a different manifest.
	Attempts []string `json:"attempts"`
}

// Holds reports whether attempt i of the manifest belongs to the shard.
func (s Shard) Holds(i int) bool { return i%s.Count == s.Index }

// PeerKind is the kernel kind of the row bench ratios are taken to.
const PeerKind = "linux"

// ComputePeerRatios sets Peer to the first row that ran Debian's Linux and
// has bench figures, and every row's Stat.Ratio to its median over the
// peer's. Without such a row every ratio is cleared.
func (c *Compare) ComputePeerRatios() {
	var peer *BenchTarget
	c.Peer = ""
	for i := range c.Rows {
		r := &c.Rows[i]
		if r.Verify != nil && r.Verify.KernelKind == PeerKind && r.Bench != nil && len(r.Bench.KeepAliveRPS.Runs) > 0 {
			peer, c.Peer = r.Bench, r.Name
			break
		}
	}
	for i := range c.Rows {
		b := c.Rows[i].Bench
		if b == nil {
			continue
		}
		for _, m := range slices.Concat(Metrics, CountedMetrics) {
			s := m.Get(b)
			s.Ratio = 0
			if peer != nil && m.Get(peer).Median != 0 && len(s.Runs) > 0 {
				s.Ratio = s.Median / m.Get(peer).Median
			}
		}
	}
}

// noisyNote explains the "noisy" mark in cells.
var noisyNote = fmt.Sprintf("; noisy: its runs spread by more than a factor %.1f (largest over smallest), its ratio only as sure as its min-max", NoisyFactor)

// ratioNote explains the xN in cells, when there are ratios.
func (c *Compare) ratioNote() string {
	if c.Peer == "" {
		return ""
	}
	return fmt.Sprintf("; xN is the ratio to %s (Debian's Linux) on the same figure", c.Peer)
}

// MergeCompare joins the partial results of one manifest's shards into one
// leaderboard, ranked and with ratios to the Linux peer. names are the
// partials' file names, recorded in Merged. Every shard of the manifest
// must be given exactly once.
func MergeCompare(parts []*Compare, names []string) (*Compare, error) {
	if len(parts) == 0 {
		return nil, errors.New("merge: no partial results")
	}
	first := parts[0]
	if first.Kind != KindCompare || first.Shard == nil {
		return nil, fmt.Errorf("merge: %s is not a partial leaderboard (compare --shard)", names[0])
	}
	count := first.Shard.Count
	seen := make([]string, count)
	out := NewCompare(first.Manifest)
	out.Host = first.Host
	out.Merged = names
	for i, p := range parts {
		switch {
		case p.Schema != SchemaVersion:
			return nil, fmt.Errorf("merge: %s: schema %d, want %d", names[i], p.Schema, SchemaVersion)
		case p.Kind != KindCompare || p.Shard == nil:
			return nil, fmt.Errorf("merge: %s is not a partial leaderboard (compare --shard)", names[i])
		case p.Shard.Count != count || !slices.Equal(p.Shard.Attempts, first.Shard.Attempts):
			return nil, fmt.Errorf("merge: %s is a shard of another manifest or split (%d shards of %s; %s has %d of %s)",
				names[i], p.Shard.Count, strings.Join(p.Shard.Attempts, ","), names[0], count, strings.Join(first.Shard.Attempts, ","))
		case p.Shard.Index < 0 || p.Shard.Index >= count:
			return nil, fmt.Errorf("merge: %s: shard %d of %d", names[i], p.Shard.Index, count)
		case seen[p.Shard.Index] != "":
			return nil, fmt.Errorf("merge: shard %d/%d given twice: %s and %s", p.Shard.Index, count, seen[p.Shard.Index], names[i])
		}
		seen[p.Shard.Index] = names[i]
		if p.Started.Before(out.Started) {
			out.Started = p.Started
		}
		if p.Host != out.Host && !strings.Contains(out.Host, p.Host) {
			out.Host += "; " + p.Host
		}
		for _, r := range p.Rows {
			r.Rank = 0
			out.Rows = append(out.Rows, r)
		}
	}
	var missing []string
	for i, s := range seen {
		if s == "" {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("merge: shards missing: %s", strings.Join(missing, ", "))
	}
	var got []string
	for _, r := range out.Rows {
		got = append(got, r.Name)
	}
	want := slices.Clone(first.Shard.Attempts)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return nil, fmt.Errorf("merge: the shards hold attempts %s, the manifest %s", strings.Join(got, ","), strings.Join(want, ","))
	}
	out.Rank()
	out.ComputePeerRatios()
	return out, nil
}

// shellJoin quotes argv for a POSIX shell.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:@+%") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// lbRow is one leaderboard row as the page shows it.
type lbRow struct {
	Row
	ID      string // the evidence element's id
	Verdict string
	Cause   string
	Cells   []htmlCell // the figures
}

type lbPage struct {
	Title  string
	Notes  []string
	Head   []string
	Rows   []lbRow
	Charts []chart
}

// evidenceID is the id of a row's evidence element.
func evidenceID(name string) string { return "evidence-" + name }

var leaderboardTmpl = template.Must(template.Must(pageTmpl.Clone()).New("leaderboard").
	Funcs(template.FuncMap{"qemuCommand": shellJoin}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:4px 8px;vertical-align:top}
th{background:#f0f0f0}
td.n,td.pass,td.fail{white-space:nowrap}td.n{text-align:right}
td.noisy{background:#fff3cd}
td.cause{min-width:16em;max-width:32em;overflow-wrap:anywhere}
.pass{color:#17692b;font-weight:bold}.fail{color:#a11;font-weight:bold}.skip{color:#888}
svg text{font-size:12px;font-family:system-ui,sans-serif}
.charts{display:flex;flex-wrap:wrap;gap:0 2em}
details{border:1px solid #ccc;border-radius:4px;margin:.5em 0;padding:.3em .8em}
details[open]{background:#fafafa}
summary{cursor:pointer;font-weight:bold}
pre{background:#f4f4f4;padding:.6em;overflow-x:auto;white-space:pre-wrap;word-break:break-all;max-height:30em}
dt{font-weight:bold;float:left;clear:left;width:11em}dd{margin-left:12em}
</style></head><body>
<h1>{{.Title}}</h1>
{{range .Notes}}<p>{{.}}</p>
{{end}}<table id="leaderboard">
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}
<tr data-attempt="{{.Name}}"><td class="n">{{.Rank}}</td><td><a href="#{{.ID}}">{{.Name}}</a></td><td>{{or .Meta.Model "-"}}</td><td>{{or .Meta.Duration "-"}}</td><td>{{or .Meta.Cost "-"}}</td><td class="{{if .Pass}}pass{{else}}fail{{end}}">{{.Verdict}}</td><td class="cause">{{.Cause}}</td><td class="n">{{.StagesPassed}}/{{.StagesTotal}}</td>{{range .Cells}}<td class="{{.Class}}">{{.Text}}</td>{{end}}</tr>{{end}}
</tbody></table>
<h2>Charts</h2>
<div class="charts">{{range .Charts}}{{template "chart" .}}
{{end}}</div>
<h2>Evidence</h2>
<p>Each attempt's stages, console, QEMU command and fingerprint seed; the attempt's name in the table opens it.</p>
{{range .Rows}}<details id="{{.ID}}" class="evidence"><summary>{{.Rank}}. {{.Name}}: {{.Verdict}}</summary>
{{with .Verify}}<dl>
<dt>target</dt><dd>{{.Target}} ({{.KernelKind}})</dd>
{{if .Kernel}}<dt>kernel</dt><dd>{{.Kernel}}</dd>{{end}}
{{if .NginxVersion}}<dt>nginx</dt><dd>{{.NginxVersion}}</dd>{{end}}
<dt>fingerprint seed</dt><dd>{{if .FingerprintSeed}}<code>{{.FingerprintSeed}}</code> (replay: <code>jiege verify --fingerprint-seed {{.FingerprintSeed}}</code>){{else}}- (the fingerprint did not run){{end}}</dd>
{{if .ConsoleLog}}<dt>console log</dt><dd><code>{{.ConsoleLog}}</code></dd>{{end}}
<dt>verified</dt><dd>{{.Started.Format "2006-01-02 15:04:05 UTC"}}, {{printf "%.0f" .Total.Seconds}} s{{if .Host}} on {{.Host}}{{end}}</dd>
</dl>
<table class="stages"><thead><tr><th>stage</th><th>status</th><th>class</th><th>time</th><th>detail</th></tr></thead><tbody>
{{range .Stages}}<tr><td>{{.Name}}</td><td class="{{.Status}}">{{.Status}}</td><td>{{or .Class "-"}}</td><td class="n">{{printf "%.1f" .Duration.Seconds}} s</td><td>{{.Detail}}</td></tr>
{{end}}</tbody></table>
<h4>QEMU command</h4>
<pre class="qemu">{{if .QEMUCommand}}{{qemuCommand .QEMUCommand}}{{else}}(QEMU did not start){{end}}</pre>
{{else}}<p>No verification result.</p>
{{end}}<h4>Console tail</h4>
<pre class="console">{{or .ConsoleTail "(no console output)"}}</pre>
</details>
{{end}}<script>
// Following an attempt's link opens its evidence.
function openEvidence() {
  var d = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (d !== null) {
    if (d.tagName === "DETAILS") { d.open = true; }
  }
}
window.addEventListener("hashchange", openEvidence);
openEvidence();
// The page's whole size, for a screenshot that shows all of it.
var root = document.documentElement;
root.setAttribute("data-page-size", root.scrollWidth + "x" + root.scrollHeight);
</script>
</body></html>
`))

// CompareHTML renders the leaderboard as a self-contained page: the table,
// a bar chart of stages passed and one per bench figure (failed attempts
// in red, ratios to the Linux peer in the labels), and each attempt's
// evidence one click away.
func CompareHTML(c *Compare) string {
	p := lbPage{Title: c.header()}
	if c.Host != "" {
		p.Notes = append(p.Notes, "Measured on: "+c.Host)
	}
	if c.Shard != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("Partial result: shard %d of %d (attempts %d, %d+%d, ... of the manifest's %d).",
			c.Shard.Index, c.Shard.Count, c.Shard.Index, c.Shard.Index, c.Shard.Count, len(c.Shard.Attempts)))
	}
	if len(c.Merged) > 0 {
		p.Notes = append(p.Notes, "Merged from: "+strings.Join(c.Merged, ", "))
	}
	p.Notes = append(p.Notes, "Ranked by verdict, stages passed, then keep-alive req/s. Cells: median (min-max) over runs"+c.ratioNote()+noisyNote+".")
	head := compareRows(c)[0]
	p.Head = head
	stages := chart{Title: fmt.Sprintf("stages passed (of %d)", len(StageOrder))}
	for _, r := range c.Rows {
		lr := lbRow{Row: r, ID: evidenceID(r.Name), Verdict: r.verdict(), Cause: r.cause()}
		for _, m := range c.metrics() {
			cell := htmlCell{Text: "-", Class: "n"}
			if r.Bench != nil {
				s := m.Get(r.Bench)
				cell.Text = s.compareCell(m.Unit, c.Peer != "")
				if s.Noisy() {
					cell.Class = "n noisy"
				}
			}
			lr.Cells = append(lr.Cells, cell)
		}
		p.Rows = append(p.Rows, lr)
		stages.Bars = append(stages.Bars, bar{Label: fmt.Sprintf("%d. %s", r.Rank, r.Name), Value: float64(r.StagesPassed),
			Text: fmt.Sprintf("%d/%d %s", r.StagesPassed, r.StagesTotal, r.verdict()), Fail: !r.Pass})
	}
	p.Charts = append(p.Charts, stages)
	for _, m := range c.metrics() {
		better := "higher is better"
		if !m.HigherBetter {
			better = "lower is better"
		}
		title := fmt.Sprintf("%s (%s, median; %s)", m.Label, m.Unit, better)
		if c.Peer != "" {
			title = fmt.Sprintf("%s (%s, median; xN to %s; %s)", m.Label, m.Unit, c.Peer, better)
		}
		ch := chart{Title: title}
		for _, r := range c.Rows {
			v, text := 0.0, "-"
			if r.Bench != nil {
				if s := m.Get(r.Bench); len(s.Runs) > 0 {
					v, text = s.Median, formatValue(s.Median, m.Unit)
					if c.Peer != "" && s.Ratio != 0 {
						text += fmt.Sprintf(" x%.2f", s.Ratio)
					}
				}
			}
			ch.Bars = append(ch.Bars, bar{Label: fmt.Sprintf("%d. %s", r.Rank, r.Name), Value: v, Text: text, Fail: !r.Pass})
		}
		p.Charts = append(p.Charts, ch)
	}
	var b bytes.Buffer
	if err := leaderboardTmpl.Execute(&b, p); err != nil {
		// The template and its data are ours: failing here is a bug.
		panic(err)
	}
	return b.String()
}
