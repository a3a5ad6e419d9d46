package ltp

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

const resultsColumns = "# name\tfamily\tverdict\tstatus\ttimed-out\tfirst TFAIL/TBROK line (or the kernel's last line)"

// WriteResults writes one tab-separated line per result under a header
// of # lines (what ran, where, when).
func WriteResults(w io.Writer, header []string, rs []Result) error {
	bw := bufio.NewWriter(w)
	for _, h := range header {
		fmt.Fprintf(bw, "# %s\n", h)
	}
	fmt.Fprintln(bw, resultsColumns)
	for _, r := range rs {
		timedOut := 0
		if r.TimedOut {
			timedOut = 1
		}
		fmt.Fprintf(bw, "%s\t%s\t%s\t%d\t%d\t%s\n", r.Name, r.Family, r.Verdict(), r.Status, timedOut, r.First)
	}
	return bw.Flush()
}

// ReadResults reads what WriteResults wrote.
func ReadResults(r io.Reader) ([]Result, error) {
	var rs []Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, "\t", 6)
		if len(f) != 6 {
			return nil, fmt.Errorf("line %d: %d fields, want 6", n, len(f))
		}
		status, err1 := strconv.Atoi(f[3])
		timedOut, err2 := strconv.Atoi(f[4])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: bad status or timed-out: %q", n, line)
		}
		res := Result{Name: f[0], Family: f[1], Status: status, TimedOut: timedOut != 0, First: f[5]}
		switch f[2] {
		case "DIED", "HUNG":
			res.Kernel = strings.ToLower(f[2])
		}
		if res.Verdict() != f[2] {
			return nil, fmt.Errorf("line %d: verdict %s does not follow from status %d, timed-out %d", n, f[2], status, timedOut)
		}
		rs = append(rs, res)
	}
	return rs, sc.Err()
}

// Table is README's LTP section: per family, the tests run on both
// kernels, how many pass on Linux and on ours, the totals, then each test
// that passes on Linux and not on ours with what ours said.
func Table(linux, ours []Result) string {
	type count struct{ run, linux, ours int }
	onOurs := map[string]Result{}
	for _, r := range ours {
		onOurs[r.Name] = r
	}
	fams := map[string]*count{}
	var total count
	var regressions []string
	for _, l := range linux {
		o, ok := onOurs[l.Name]
		if !ok {
			continue
		}
		c := fams[l.Family]
		if c == nil {
			c = &count{}
			fams[l.Family] = c
		}
		c.run++
		total.run++
		if l.Verdict() == "PASS" {
			c.linux++
			total.linux++
			if o.Verdict() != "PASS" {
				what := o.First
				if what == "" {
					what = fmt.Sprintf("exit status %d", o.Status)
				}
				regressions = append(regressions, fmt.Sprintf("| %s | %s | %s | %s |", l.Name, l.Family, o.Verdict(), cell(what)))
			}
		}
		if o.Verdict() == "PASS" {
			c.ours++
			total.ours++
		}
	}
	names := make([]string, 0, len(fams))
	for f := range fams {
		names = append(names, f)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "%d LTP syscall tests ran on both kernels: %d pass on Debian's Linux 6.12, %d on ours (a pass is exit status 0; TCONF, not applicable, is not one).\n\n",
		total.run, total.linux, total.ours)
	b.WriteString("| family | run | pass on Linux | pass on ours |\n|---|---:|---:|---:|\n")
	for _, f := range names {
		c := fams[f]
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", f, c.run, c.linux, c.ours)
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d |\n", total.run, total.linux, total.ours)
	fmt.Fprintf(&b, "\n%d tests pass on Linux and not on ours:\n\n", len(regressions))
	b.WriteString("| test | family | on ours | first TFAIL/TBROK line |\n|---|---|---|---|\n")
	for _, r := range regressions {
		b.WriteString(r + "\n")
	}
	return b.String()
}

// cell makes s safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}
