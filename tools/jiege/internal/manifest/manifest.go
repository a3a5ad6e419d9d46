// Package manifest owns the JSON manifest of `jiege compare`: the attempts
// to verify and bench one after the other, with their build and run
// commands and optional metadata, and its validation.
package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// Version is the manifest format version; "schema" may be omitted or 1.
const Version = 1

// Kernels jiege provides itself; any other Kernel value is a file path.
const (
	KernelOurs  = "ours"
	KernelLinux = "linux"
)

// Manifest lists the attempts to compare.
type Manifest struct {
	Schema   int       `json:"schema,omitempty"`
	Attempts []Attempt `json:"attempts"`
	Bench    *Bench    `json:"bench,omitempty"`
	// Path is the file the manifest was read from.
	Path string `json:"-"`
}

// Bench overrides the bench settings of `jiege compare`.
type Bench struct {
	Duration string `json:"duration,omitempty"` // Go duration, e.g. "10s"
	Runs     int    `json:"runs,omitempty"`
}

// MaxRuns bounds Bench.Runs.
const MaxRuns = 20

// LoadDuration returns the parsed Duration, or 0 when unset.
func (b *Bench) LoadDuration() time.Duration {
	if b == nil || b.Duration == "" {
		return 0
	}
	d, _ := time.ParseDuration(b.Duration) // validated by Parse
	return d
}

// Attempt is one kernel to verify and bench: either a project directory
// built and run with its own commands, or a kernel booted with jiege's
// root filesystem.
type Attempt struct {
	Name string `json:"name"`
	// Dir is an attempt's working directory (relative paths are resolved
	// against the manifest's directory).
	Dir string `json:"dir,omitempty"`
	// Kernel is "ours", "linux" or a path to a kernel ELF or Image.
	Kernel string `json:"kernel,omitempty"`
	// Build and Run are shell commands run in Dir; defaults "make build"
	// and "make run".
	Build string `json:"build,omitempty"`
	Run   string `json:"run,omitempty"`
	// GuestPort is the port nginx listens on in the guest; default 80.
	GuestPort int `json:"guest_port,omitempty"`
	// QEMUArgs are extra QEMU arguments for a "dir" attempt's QEMU
	// (e.g. ["-m", "1G"]): an option QEMU takes once replaces the
	// attempt's own, others are appended.
	QEMUArgs []string `json:"qemu_args,omitempty"`
	Metadata Metadata `json:"metadata"`
}

// Metadata describes how an attempt was made. Values may be written as
// JSON strings or numbers; they are kept as text.
type Metadata struct {
	Model    Text `json:"model,omitempty"`
	Duration Text `json:"duration,omitempty"`
	Cost     Text `json:"cost,omitempty"`
}

// Meta converts the metadata for a leaderboard row.
func (m Metadata) Meta() report.Meta {
	return report.Meta{Model: string(m.Model), Duration: string(m.Duration), Cost: string(m.Cost)}
}

// Text is a string that also accepts a JSON number, kept as written.
type Text string

// UnmarshalJSON accepts a string or a number.
func (t *Text) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Text(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("want a string or a number, got %s", b)
	}
	*t = Text(n.String())
	return nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Load reads and validates the manifest at path, resolves relative paths
// against its directory, and checks that every directory and kernel file
// exists.
func Load(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.Path = path
	base := filepath.Dir(path)
	var problems []string
	for i := range m.Attempts {
		a := &m.Attempts[i]
		switch {
		case a.Dir != "":
			a.Dir = resolve(base, a.Dir)
			if st, err := os.Stat(a.Dir); err != nil || !st.IsDir() {
				problems = append(problems, fmt.Sprintf("attempt %q: directory %s does not exist", a.Name, a.Dir))
			}
		case a.Kernel != KernelOurs && a.Kernel != KernelLinux:
			a.Kernel = resolve(base, a.Kernel)
			if st, err := os.Stat(a.Kernel); err != nil || st.IsDir() {
				problems = append(problems, fmt.Sprintf("attempt %q: kernel file %s does not exist", a.Name, a.Kernel))
			}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: %s", path, strings.Join(problems, "; "))
	}
	return m, nil
}

func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	abs, err := filepath.Abs(filepath.Join(base, p))
	if err != nil {
		return filepath.Join(base, p)
	}
	return abs
}

// Parse decodes and validates a manifest without touching the file system.
// Unknown fields are errors (a misspelt "biuld" would otherwise be ignored
// silently); every problem found is reported, not just the first.
func Parse(data []byte) (*Manifest, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var m Manifest
	if err := d.Decode(&m); err != nil {
		return nil, decodeError(data, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("manifest: data after the JSON object")
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// decodeError adds a line and column to JSON syntax and type errors.
func decodeError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if errors.Is(err, io.EOF) {
		return errors.New("manifest: empty file")
	}
	if off < 0 {
		return fmt.Errorf("manifest: %w", err)
	}
	line, col := 1, 1
	for _, c := range data[:min(int(off), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("manifest: line %d, column %d: %w", line, col, err)
}

func (m *Manifest) validate() error {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if m.Schema != 0 && m.Schema != Version {
		add("schema %d is not supported (this jiege reads schema %d)", m.Schema, Version)
	}
	if len(m.Attempts) == 0 {
		add(`no attempts: "attempts" must list at least one`)
	}
	seen := map[string]bool{}
	for i, a := range m.Attempts {
		where := fmt.Sprintf("attempts[%d]", i)
		if a.Name != "" {
			where += fmt.Sprintf(" (%q)", a.Name)
		}
		switch {
		case a.Name == "":
			add("%s: no name", where)
		case !nameRE.MatchString(a.Name):
			add("%s: name must be 1-64 letters, digits, '.', '_' or '-' (it names output files)", where)
		case seen[a.Name]:
			add("%s: name used twice", where)
		}
		seen[a.Name] = true
		switch {
		case a.Dir == "" && a.Kernel == "":
			add(`%s: give "dir" (a project built and run with its own commands) or "kernel" ("ours", "linux" or a kernel file)`, where)
		case a.Dir != "" && a.Kernel != "":
			add(`%s: "dir" and "kernel" are both set; give one`, where)
		case a.Kernel != "" && (a.Build != "" || a.Run != "" || len(a.QEMUArgs) > 0):
			add(`%s: "build", "run" and "qemu_args" apply only to a "dir" attempt`, where)
		}
		if a.GuestPort < 0 || a.GuestPort > 65535 {
			add("%s: guest_port %d is not a port", where, a.GuestPort)
		}
	}
	if b := m.Bench; b != nil {
		if b.Duration != "" {
			if d, err := time.ParseDuration(b.Duration); err != nil || d <= 0 {
				add("bench.duration %q is not a positive Go duration such as \"10s\"", b.Duration)
			}
		}
		if b.Runs < 0 || b.Runs > MaxRuns {
			add("bench.runs %d is outside 1..%d", b.Runs, MaxRuns)
		}
	}
	if len(p) > 0 {
		return errors.New("manifest: " + strings.Join(p, "; "))
	}
	return nil
}
