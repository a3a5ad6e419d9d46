package report

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// verdict is PASS or FAIL with the failed stage.
func (v *Verify) verdict() string {
	if v.Pass {
		return "PASS" + deviationsText(v.Deviations)
	}
	if v.FailedStage == "" {
		return "FAIL"
	}
	s, _ := v.Stage(v.FailedStage)
	return fmt.Sprintf("FAIL at %s (%s)", v.FailedStage, s.Class)
}

// deviationsText tells a pass with configuration deviations from a plain one.
func deviationsText(devs []string) string {
	if len(devs) == 0 {
		return ""
	}
	return " with deviations (" + strings.Join(devs, ", ") + ")"
}

func secs(d Duration) string {
	switch {
	case d == 0:
		return "-"
	case d.D() < 10*time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// oneLine keeps a detail on one table row.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// VerifyText renders a verify result as a terminal table.
func VerifyText(v *Verify) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "jiege verify %s (%s): %s in %s", v.Target, v.KernelKind, v.verdict(), secs(v.Total))
	if v.BootToFirst200 > 0 {
		fmt.Fprintf(&b, ", boot to first 200 %s", secs(v.BootToFirst200))
	}
	b.WriteString("\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tSTATUS\tCLASS\tTIME\tDETAIL")
	for _, s := range v.Stages {
		class := s.Class
		if class == "" {
			class = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Status, class, secs(s.Duration), oneLine(s.Detail))
	}
	tw.Flush()
	if v.FingerprintSeed != 0 {
		fmt.Fprintf(&b, "\nfingerprint seed: %d (replay: --fingerprint-seed %d)\n", v.FingerprintSeed, v.FingerprintSeed)
	}
	if v.ConsoleLog != "" {
		fmt.Fprintf(&b, "\nconsole log: %s\n", v.ConsoleLog)
	}
	return b.String()
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	s = oneLine(s)
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "<", "&lt;")
	return s
}

// VerifyMarkdown renders a verify result as Markdown.
func VerifyMarkdown(v *Verify) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "## jiege verify `%s`: %s\n\n", mdCell(v.Target), v.verdict())
	fmt.Fprintf(&b, "- kernel kind: %s\n- total: %s\n", v.KernelKind, secs(v.Total))
	if v.BootToFirst200 > 0 {
		fmt.Fprintf(&b, "- boot to first 200: %s\n", secs(v.BootToFirst200))
	}
	if v.NginxVersion != "" {
		fmt.Fprintf(&b, "- nginx: %s\n", mdCell(v.NginxVersion))
	}
	if v.FingerprintSeed != 0 {
		fmt.Fprintf(&b, "- fingerprint seed: %d\n", v.FingerprintSeed)
	}
	if v.ConsoleLog != "" {
		fmt.Fprintf(&b, "- console log: `%s`\n", mdCell(v.ConsoleLog))
	}
	if len(v.QEMUCommand) > 0 {
		fmt.Fprintf(&b, "- QEMU: `%s`\n", mdCell(strings.Join(v.QEMUCommand, " ")))
	}
	b.WriteString("\n| Stage | Status | Class | Time | Detail |\n|---|---|---|---:|---|\n")
	for _, s := range v.Stages {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", s.Name, s.Status, mdCell(s.Class), secs(s.Duration), mdCell(s.Detail))
	}
	return b.String()
}

// formatValue prints a figure with a precision fit for its unit.
func formatValue(v float64, unit string) string {
	switch unit {
	case "req/s":
		return fmt.Sprintf("%.0f", v)
	case "MB/s":
		return fmt.Sprintf("%.1f", v)
	}
	if strings.HasPrefix(unit, UnitInstructions) {
		return siCount(v)
	}
	return fmt.Sprintf("%.2f", v)
}

// siCount prints a count with three significant digits and k, M or G.
func siCount(v float64) string {
	for _, p := range []struct {
		scale  float64
		suffix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= p.scale {
			return strconv.FormatFloat(v/p.scale, 'g', 3, 64) + p.suffix
		}
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// cell renders a Stat as "median (min-max)", with "x ratio" when asked.
func (s Stat) cell(unit string, ratio bool) string {
	if len(s.Runs) == 0 {
		return "-"
	}
	out := formatValue(s.Median, unit)
	if len(s.Runs) > 1 {
		out += fmt.Sprintf(" (%s-%s)", formatValue(s.Min, unit), formatValue(s.Max, unit))
	}
	if ratio && s.Ratio != 0 {
		out += fmt.Sprintf(" x%.2f", s.Ratio)
	}
	return out
}

// compareCell is cell, marked "noisy" when the runs spread more than
// NoisyFactor.
func (s Stat) compareCell(unit string, ratio bool) string {
	if s.Noisy() {
		return s.cell(unit, ratio) + " noisy"
	}
	return s.cell(unit, ratio)
}

func (b *Bench) header() string {
	return fmt.Sprintf("jiege bench: %d run(s) per target, %s load each, %d keep-alive connections",
		b.Runs, b.Load.D().Round(time.Millisecond), b.Conns)
}

// benchRows returns the table as rows of cells: one row per metric, one
// column per target; later targets carry their ratio to the first.
// openSBIRow is ours's first 200 through OpenSBI, under the first-200 row,
// when a target has it (none, or one row).
func openSBIRow(b *Bench) [][]string {
	row := []string{"boot to first 200 via OpenSBI (s)"}
	have := false
	for _, t := range b.Targets {
		row = append(row, t.BootToFirst200OpenSBI.cell("s", false))
		have = have || len(t.BootToFirst200OpenSBI.Runs) > 0
	}
	if !have {
		return nil
	}
	return [][]string{row}
}

func benchRows(b *Bench) [][]string {
	head := []string{"metric"}
	for _, t := range b.Targets {
		head = append(head, t.Target)
	}
	rows := [][]string{head}
	harts := []string{"harts (-smp)"}
	for _, t := range b.Targets {
		harts = append(harts, strconv.Itoa(t.Harts))
		if t.Harts == 0 {
			harts[len(harts)-1] = "-"
		}
	}
	rows = append(rows, harts)
	metrics := Metrics
	if hasCounted(b.Targets) {
		metrics = slices.Concat(metrics, CountedMetrics)
	}
	for _, m := range metrics {
		row := []string{m.Label + " (" + m.Unit + ")"}
		for i := range b.Targets {
			row = append(row, m.Get(&b.Targets[i]).cell(m.Unit, i > 0))
		}
		rows = append(rows, row)
		if m.Key == "boot_to_first_200_s" {
			rows = append(rows, openSBIRow(b)...)
		}
	}
	wrk := []string{"wrk keep-alive (req/s)"}
	have := false
	for _, t := range b.Targets {
		if t.WrkKeepAliveRPS != nil {
			wrk = append(wrk, t.WrkKeepAliveRPS.cell("req/s", false))
			have = true
		} else {
			wrk = append(wrk, "-")
		}
	}
	if have {
		rows = append(rows, wrk)
	}
	errs := []string{"errors / connect retries"}
	for _, t := range b.Targets {
		errs = append(errs, fmt.Sprintf("%d / %d", t.Errors, t.ConnectRetries))
	}
	return append(rows, errs)
}

// BenchText renders a bench result as a terminal table.
func BenchText(b *Bench) string {
	var out bytes.Buffer
	out.WriteString(b.header() + "\n")
	if b.Host != "" {
		out.WriteString("host: " + b.Host + "\n")
	}
	out.WriteString("cells: median (min-max) over runs; xN = ratio to the first target\n\n")
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	for _, r := range benchRows(b) {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	for _, t := range b.Targets {
		if t.Error != "" {
			fmt.Fprintf(&out, "%s: %s\n", t.Target, oneLine(t.Error))
		}
	}
	return out.String()
}

// BenchMarkdown renders a bench result as Markdown.
func BenchMarkdown(b *Bench) string {
	var out bytes.Buffer
	out.WriteString("## " + b.header() + "\n\n")
	if b.Host != "" {
		out.WriteString("Measured on: " + mdCell(b.Host) + "\n\n")
	}
	rows := benchRows(b)
	for i, r := range rows {
		cells := make([]string, len(r))
		for j, c := range r {
			cells[j] = mdCell(c)
		}
		out.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		if i == 0 {
			out.WriteString("|---" + strings.Repeat("|---:", len(r)-1) + "|\n")
		}
	}
	out.WriteString("\nCells: median (min-max) over runs; xN is the ratio to the first target.\n")
	for _, t := range b.Targets {
		if t.Error != "" {
			fmt.Fprintf(&out, "\n- %s: %s\n", mdCell(t.Target), mdCell(t.Error))
		}
	}
	return out.String()
}

func (r *Row) verdict() string {
	if r.Pass {
		return "pass" + deviationsText(r.Deviations)
	}
	if r.FailedStage == "" {
		return "fail"
	}
	return fmt.Sprintf("fail at %s (%s)", r.FailedStage, r.FailClass)
}

// maxCause is how much of a failed stage's detail a leaderboard row shows.
const maxCause = 240

// cause is why the row's attempt failed, in its row: the failed stage's
// detail, on one line and clipped ("-" for a pass).
func (r *Row) cause() string {
	if r.Pass || r.Verify == nil {
		return "-"
	}
	s, ok := r.Verify.Stage(r.FailedStage)
	if !ok || s.Detail == "" {
		return "-"
	}
	d := oneLine(s.Detail)
	if len(d) > maxCause {
		d = strings.ToValidUTF8(d[:maxCause], "") + "..."
	}
	return d
}

// compareMetrics are the bench figures shown on the leaderboard.
var compareMetrics = []Metric{Metrics[0], Metrics[1], Metrics[3], Metrics[4], Metrics[5]}

// compareCountedMetrics are the counted figures shown on the leaderboard
// when it has them (compare --icount): the kernel's instructions of each
// phase and QEMU's CPU time per request.
var compareCountedMetrics = []Metric{CountedMetrics[0], CountedMetrics[3], CountedMetrics[4], CountedMetrics[7], CountedMetrics[8], CountedMetrics[12]}

// metrics are the figures c's leaderboard shows.
func (c *Compare) metrics() []Metric {
	for _, r := range c.Rows {
		if r.Bench != nil && r.Bench.Counted != nil {
			return slices.Concat(compareMetrics, compareCountedMetrics)
		}
	}
	return compareMetrics
}

func compareRows(c *Compare) [][]string {
	head := []string{"#", "attempt", "model", "duration", "cost", "verdict", "cause", "stages"}
	for _, m := range c.metrics() {
		head = append(head, m.Label+" ("+m.Unit+")")
	}
	rows := [][]string{head}
	for i := range c.Rows {
		r := &c.Rows[i]
		row := []string{fmt.Sprint(r.Rank), r.Name, dash(r.Meta.Model), dash(r.Meta.Duration), dash(r.Meta.Cost),
			r.verdict(), r.cause(), fmt.Sprintf("%d/%d", r.StagesPassed, r.StagesTotal)}
		for _, m := range c.metrics() {
			if r.Bench == nil {
				row = append(row, "-")
			} else {
				row = append(row, m.Get(r.Bench).compareCell(m.Unit, c.Peer != ""))
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (c *Compare) header() string {
	return fmt.Sprintf("jiege compare %s: %d attempts", c.Manifest, len(c.Rows))
}

// CompareText renders the leaderboard as a terminal table.
func CompareText(c *Compare) string {
	var out bytes.Buffer
	out.WriteString(c.header() + "\n\n")
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	for _, r := range compareRows(c) {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	if c.Peer != "" {
		out.WriteString("cells: median (min-max) over runs" + c.ratioNote() + noisyNote + "\n")
	}
	return out.String()
}

// CompareMarkdown renders the leaderboard as Markdown.
func CompareMarkdown(c *Compare) string {
	var out bytes.Buffer
	out.WriteString("## " + mdCell(c.header()) + "\n\n")
	if c.Host != "" {
		out.WriteString("Measured on: " + mdCell(c.Host) + "\n\n")
	}
	if c.Shard != nil {
		fmt.Fprintf(&out, "Partial result: shard %d of %d of the manifest's %d attempts.\n\n", c.Shard.Index, c.Shard.Count, len(c.Shard.Attempts))
	}
	if len(c.Merged) > 0 {
		out.WriteString("Merged from: " + mdCell(strings.Join(c.Merged, ", ")) + "\n\n")
	}
	for i, r := range compareRows(c) {
		cells := make([]string, len(r))
		for j, s := range r {
			cells[j] = mdCell(s)
		}
		out.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		if i == 0 {
			out.WriteString("|---:|---|---|---|---|---|---|---:" + strings.Repeat("|---:", len(c.metrics())) + "|\n")
		}
	}
	out.WriteString("\nCells: median (min-max) over runs" + c.ratioNote() + noisyNote + ". Ranked by verdict, stages passed, then keep-alive req/s.\n")
	return out.String()
}

// bar is one bar of an SVG chart.
type bar struct {
	Label string
	Value float64
	Text  string
	Fail  bool
}

// chart is a horizontal bar chart drawn as inline SVG.
type chart struct {
	Title string
	Bars  []bar
}

// svgBar is a bar laid out in SVG coordinates.
type svgBar struct {
	bar
	Y, W, TextX, LabelY float64
}

const (
	chartLabelW = 180.0
	chartBarW   = 420.0
	chartRowH   = 28.0
)

// chartLayout is a chart's bars in SVG coordinates and its height.
type chartLayout struct {
	Bars   []svgBar
	Height float64
}

// Layout places the bars, scaled to the largest value.
func (c chart) Layout() chartLayout {
	maxV := 0.0
	for _, b := range c.Bars {
		maxV = max(maxV, b.Value)
	}
	var l chartLayout
	for i, b := range c.Bars {
		w := 0.0
		if maxV > 0 {
			w = chartBarW * b.Value / maxV
		}
		y := 30 + float64(i)*chartRowH
		l.Bars = append(l.Bars, svgBar{bar: b, Y: y, W: w, TextX: chartLabelW + w + 6, LabelY: y + 15})
	}
	l.Height = 30 + float64(len(c.Bars))*chartRowH + 10
	return l
}

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:4px 8px}
.r{text-align:right}
th{background:#f0f0f0}
.l{text-align:left}
.pass{color:#17692b;font-weight:bold}.fail{color:#a11;font-weight:bold}
svg text{font-size:12px;font-family:system-ui,sans-serif}
</style></head><body>
<h1>{{.Title}}</h1>
{{range .Notes}}<p>{{.}}</p>
{{end}}{{range .Charts}}{{template "chart" .}}
{{end}}<table>
{{range $i, $r := .Cells}}<tr>{{range $r}}{{if eq $i 0}}<th class="{{.Class}}">{{.Text}}</th>{{else}}<td class="{{.Class}}">{{.Text}}</td>{{end}}{{end}}</tr>
{{end}}</table>
</body></html>
{{define "chart"}}{{$l := .Layout}}<figure><svg role="img" aria-label="{{.Title}}" width="700" height="{{$l.Height}}" viewBox="0 0 700 {{$l.Height}}">
<text x="0" y="16" font-weight="bold">{{.Title}}</text>
{{range $l.Bars}}<text x="0" y="{{.LabelY}}">{{.Label}}</text>
<rect x="180" y="{{.Y}}" width="{{printf "%.1f" .W}}" height="20" fill="{{if .Fail}}#c66{{else}}#4a7ebb{{end}}"><title>{{.Label}}: {{.Text}}</title></rect>
<text x="{{printf "%.1f" .TextX}}" y="{{.LabelY}}">{{.Text}}</text>
{{end}}</svg></figure>{{end}}`))

// page is the data of an HTML report.
type page struct {
	Title      string
	Notes      []string
	Charts     []chart
	Rows       [][]string
	LeftCols   int // columns aligned left
	VerdictCol int // column coloured by pass/fail, -1 for none
	Cells      [][]htmlCell
}

// htmlCell is a table cell with its CSS class.
type htmlCell struct{ Text, Class string }

func renderPage(p page) string {
	for i, r := range p.Rows {
		row := make([]htmlCell, len(r))
		for j, text := range r {
			c := htmlCell{Text: text, Class: "r"}
			if j < p.LeftCols {
				c.Class = "l"
			}
			if i > 0 && j == p.VerdictCol {
				c.Class = "l fail"
				if strings.HasPrefix(text, "pass") {
					c.Class = "l pass"
				}
			}
			row[j] = c
		}
		p.Cells = append(p.Cells, row)
	}
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, p); err != nil {
		// The template and its data are ours: failing here is a bug.
		panic(err)
	}
	return b.String()
}

// BenchHTML renders a bench result as a self-contained HTML page with bar
// charts of the throughput figures.
func BenchHTML(b *Bench) string {
	p := page{Title: b.header(), Rows: benchRows(b), LeftCols: 1, VerdictCol: -1}
	if b.Host != "" {
		p.Notes = append(p.Notes, "Measured on: "+b.Host)
	}
	p.Notes = append(p.Notes, "Cells: median (min-max) over runs; xN is the ratio to the first target.")
	for _, m := range Metrics {
		if !m.HigherBetter {
			continue
		}
		c := chart{Title: m.Label + " (" + m.Unit + ", median)"}
		for i := range b.Targets {
			s := m.Get(&b.Targets[i])
			c.Bars = append(c.Bars, bar{Label: b.Targets[i].Target, Value: s.Median, Text: s.cell(m.Unit, false), Fail: len(s.Runs) == 0})
		}
		p.Charts = append(p.Charts, c)
	}
	return renderPage(p)
}
