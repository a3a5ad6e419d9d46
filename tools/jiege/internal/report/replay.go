package report

import (
	"bytes"
	"fmt"
	"text/tabwriter"
	"time"
)

// KindReplay is the kind of `jiege replay`'s JSON document.
const KindReplay = "replay"

// Milestone is one step of an attempt's objective timeline: the stage
// whose pass marks it.
type Milestone struct {
	Name  string // as printed
	Stage string // the stage that must pass
}

// Milestones are the timeline's steps, in the order verify reaches them.
var Milestones = []Milestone{
	{"boots", StageBoot},
	{"opens the port", StagePortOpen},
	{"serves 200", StageFirst200},
	{"passes the fingerprint", StageFingerprint},
	{"passes stability", StageStability},
}

// Reached reports whether a verify result passed the milestone's stage.
func (m Milestone) Reached(v *Verify) bool {
	s, ok := v.Stage(m.Stage)
	return ok && s.Passed()
}

// ReplayCommit is one commit of the first-parent line and, if it was
// verified, its result.
type ReplayCommit struct {
	Hash    string    `json:"hash"`
	Time    time.Time `json:"time"` // committer time
	Subject string    `json:"subject"`
	// Sampled is true for the every-Nth commits, false for those verified
	// while bisecting; absent Verify means not verified.
	Sampled bool    `json:"sampled,omitempty"`
	Verify  *Verify `json:"verify,omitempty"`
}

// TimelineEntry is the first commit that reached a milestone.
type TimelineEntry struct {
	Milestone string `json:"milestone"`
	Stage     string `json:"stage"`
	Reached   bool   `json:"reached"`
	// Index is the commit's position on the first-parent line (0: the first).
	Index   int       `json:"index"`
	Hash    string    `json:"hash,omitempty"`
	Time    time.Time `json:"time,omitzero"`
	Subject string    `json:"subject,omitempty"`
	// After is the time from the first commit to this one.
	After Duration `json:"after_first_commit_s,omitempty"`
	// Exact is true when the commit before it was verified and failed (or
	// it is the first commit): it is the first passing commit, not only the
	// first sampled one.
	Exact bool `json:"exact"`
}

// Replay is the result of `jiege replay`.
type Replay struct {
	Schema   int             `json:"schema"`
	Kind     string          `json:"kind"` // KindReplay
	Started  time.Time       `json:"started"`
	Dir      string          `json:"dir"`
	Every    int             `json:"every"`
	Host     string          `json:"host,omitempty"`
	Commits  []ReplayCommit  `json:"commits"` // oldest first
	Timeline []TimelineEntry `json:"timeline"`
	Total    Duration        `json:"total_s"`
}

// NewReplay returns a Replay with the schema and kind set.
func NewReplay(dir string, every int) *Replay {
	return &Replay{Schema: SchemaVersion, Kind: KindReplay, Started: time.Now().UTC(), Dir: dir, Every: every}
}

func (r *Replay) verified() int {
	n := 0
	for _, c := range r.Commits {
		if c.Verify != nil {
			n++
		}
	}
	return n
}

func short(hash string) string { return hash[:min(len(hash), 12)] }

func (r *Replay) header() string {
	return fmt.Sprintf("jiege replay %s: %d commits on the first-parent line, %d verified (every %d, then bisected)",
		r.Dir, len(r.Commits), r.verified(), r.Every)
}

func replayTimelineRows(r *Replay) [][]string {
	rows := [][]string{{"milestone", "first commit", "time", "after first commit", "subject"}}
	for _, e := range r.Timeline {
		if !e.Reached {
			rows = append(rows, []string{e.Milestone, "never", "-", "-", "-"})
			continue
		}
		id := short(e.Hash)
		if !e.Exact {
			id += " (first sampled)"
		}
		rows = append(rows, []string{e.Milestone, id, e.Time.UTC().Format("2006-01-02 15:04:05 UTC"),
			e.After.D().Round(time.Second).String(), oneLine(e.Subject)})
	}
	return rows
}

func replayCommitRows(r *Replay) [][]string {
	rows := [][]string{{"#", "commit", "time", "verified", "result"}}
	for i, c := range r.Commits {
		how, result := "-", "-"
		if c.Verify != nil {
			how = "bisect"
			if c.Sampled {
				how = "sample"
			}
			result = c.Verify.verdict()
		}
		rows = append(rows, []string{fmt.Sprint(i), short(c.Hash), c.Time.UTC().Format("2006-01-02 15:04:05"), how, result})
	}
	return rows
}

// ReplayText renders a replay as terminal tables: the timeline, then
// every commit and what its verification found.
func ReplayText(r *Replay) string {
	var b bytes.Buffer
	b.WriteString(r.header() + "\n\n")
	for _, rows := range [][][]string{replayTimelineRows(r), replayCommitRows(r)} {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, row := range rows {
			for i, c := range row {
				if i > 0 {
					tw.Write([]byte("\t"))
				}
				tw.Write([]byte(c))
			}
			tw.Write([]byte("\n"))
		}
		tw.Flush()
		b.WriteString("\n")
	}
	return b.String()
}

// ReplayMarkdown renders a replay as Markdown.
func ReplayMarkdown(r *Replay) string {
	var b bytes.Buffer
	b.WriteString("## " + mdCell(r.header()) + "\n\n")
	for _, rows := range [][][]string{replayTimelineRows(r), replayCommitRows(r)} {
		for i, row := range rows {
			b.WriteString("|")
			for _, c := range row {
				b.WriteString(" " + mdCell(c) + " |")
			}
			b.WriteString("\n")
			if i == 0 {
				for range row {
					b.WriteString("|---")
				}
				b.WriteString("|\n")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("A first commit marked \"first sampled\" was not bisected: the commit before it was not verified.\n")
	return b.String()
}
