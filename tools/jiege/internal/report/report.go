// Package report owns jiege's result types (verify, bench and compare
// results, JSON schema version 1, documented in SCHEMA.md) and their
// renderings: a terminal table, Markdown, and a self-contained HTML page.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"
)

// SchemaVersion is the value of the "schema" field of every JSON document
// written by this package. Bump it when a field changes meaning or goes away.
const SchemaVersion = 1

// Document kinds, the "kind" field.
const (
	KindVerify  = "verify"
	KindBench   = "bench"
	KindCompare = "compare"
)

// Stage names, in the order jiege verify runs them.
const (
	StageBuild       = "build"
	StageBoot        = "boot"
	StageProvenance  = "provenance"
	StagePortOpen    = "port-open"
	StageFirst200    = "first-200"
	StageFingerprint = "nginx-fingerprint"
	StageContent     = "content"
	StageStability   = "stability"
	StageSurvival    = "survival"
)

// StageOrder lists the stages in run order.
var StageOrder = []string{StageBuild, StageBoot, StageProvenance, StagePortOpen, StageFirst200,
	StageFingerprint, StageContent, StageStability, StageSurvival}

// Stage statuses.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
)

// Failure classes: the "class" of a failed stage. SCHEMA.md explains each.
const (
	ClassTimeout         = "timeout"          // the stage's deadline passed
	ClassBuildFailed     = "build-failed"     // the attempt's build command failed
	ClassBootFailed      = "boot-failed"      // QEMU exited or the guest never came up
	ClassEnvironment     = "environment"      // a host problem: QEMU missing, port taken
	ClassConnectRefused  = "connect-refused"  // nothing listens on the forwarded port
	ClassNoHTTPResponse  = "no-http-response" // TCP connects but no response bytes arrive
	ClassBadResponse     = "bad-response"     // bytes arrive but are not valid HTTP/1.1
	ClassBadStatus       = "bad-status"       // an unexpected HTTP status code
	ClassNotNginx        = "not-nginx"        // the Server header names no nginx version
	ClassFingerprint     = "fingerprint"      // nginx named, but behaviour differs from nginx
	ClassContentMismatch = "content-mismatch" // a served file differs from the rootfs
	ClassStabilityErrors = "stability-errors" // errors under the published load bars
	ClassServerDied      = "server-died"      // the server stopped answering
	ClassInternal        = "internal"         // a bug or misuse inside jiege itself
	ClassNotFromScratch  = "not-from-scratch" // the booted kernel is Linux
	ClassKernelPanic     = "kernel-panic"     // a panic line, or a trap dump and then silence
	ClassQEMUExited      = "qemu-exited"      // QEMU exited while the stage ran
	// ClassStoppedAnswering: the server stopped answering during the stage
	// (refused, reset, timed out or closed without a byte) and answered
	// nothing afterwards.
	ClassStoppedAnswering = "stopped-answering"
	// ClassConfigDeviation: under --strict-config, the server is nginx
	// whose configuration deviates from jiege's.
	ClassConfigDeviation = "config-deviation"
)

// Duration is a time.Duration that JSON encodes as seconds (a number).
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Seconds returns d in seconds.
func (d Duration) Seconds() float64 { return time.Duration(d).Seconds() }

// MarshalJSON encodes d as seconds with millisecond-or-better precision.
func (d Duration) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, math.Round(d.Seconds()*1e6)/1e6, 'f', -1, 64), nil
}

// UnmarshalJSON decodes seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s float64
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want seconds as a number: %w", err)
	}
	*d = Duration(s * float64(time.Second))
	return nil
}

// Stage is the outcome of one verification stage.
type Stage struct {
	Name     string   `json:"name"`
	Status   string   `json:"status"`          // Pass, Fail or Skip
	Class    string   `json:"class,omitempty"` // failure class when Status is Fail
	Detail   string   `json:"detail,omitempty"`
	Duration Duration `json:"duration_s"`
	// Metrics holds stage-specific figures (e.g. "requests", "connect_retries").
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Passed reports whether the stage passed.
func (s Stage) Passed() bool { return s.Status == Pass }

// Failf returns a failed stage with a class and a formatted detail.
func Failf(name, class string, d time.Duration, format string, args ...any) Stage {
	return Stage{Name: name, Status: Fail, Class: class, Detail: fmt.Sprintf(format, args...), Duration: Duration(d)}
}

// Passf returns a passed stage with a formatted detail.
func Passf(name string, d time.Duration, format string, args ...any) Stage {
	return Stage{Name: name, Status: Pass, Detail: fmt.Sprintf(format, args...), Duration: Duration(d)}
}

// Verify is the result of `jiege verify`.
type Verify struct {
	Schema     int    `json:"schema"`
	Kind       string `json:"kind"`        // KindVerify
	Target     string `json:"target"`      // as given on the command line
	KernelKind string `json:"kernel_kind"` // "ours", "linux", "path" or "attempt"
	Kernel     string `json:"kernel,omitempty"`
	Pass       bool   `json:"pass"`
	// FailedStage is the first failed stage's name, empty when Pass.
	FailedStage    string    `json:"failed_stage,omitempty"`
	Stages         []Stage   `json:"stages"`
	Started        time.Time `json:"started"`
	Total          Duration  `json:"total_s"`
	BootToFirst200 Duration  `json:"boot_to_first_200_s,omitempty"`
	ConsoleLog     string    `json:"console_log,omitempty"`
	QEMUCommand    []string  `json:"qemu_command,omitempty"`
	NginxVersion   string    `json:"nginx_version,omitempty"`
	Host           string    `json:"host,omitempty"`
	// FingerprintSeed seeds the fingerprint's random requests: `jiege
	// verify --fingerprint-seed N` replays them.
	FingerprintSeed uint64 `json:"fingerprint_seed,omitempty"`
	// Deviations lists how the nginx configuration of a passing attempt
	// deviates from jiege's (e.g. "keep-alive off"): a pass with
	// deviations, not a plain pass.
	Deviations []string `json:"deviations,omitempty"`
}

// NewVerify returns a Verify with the schema and kind set.
func NewVerify(target, kernelKind string) *Verify {
	return &Verify{Schema: SchemaVersion, Kind: KindVerify, Target: target, KernelKind: kernelKind, Started: time.Now().UTC()}
}

// Add appends a stage and keeps Pass and FailedStage consistent with the
// stages so far: the run passes only if every stage passed.
func (v *Verify) Add(s Stage) {
	v.Stages = append(v.Stages, s)
	v.Finish()
}

// Finish recomputes Pass and FailedStage from the stages.
func (v *Verify) Finish() {
	v.Pass = len(v.Stages) > 0
	v.FailedStage = ""
	for _, s := range v.Stages {
		if s.Status != Pass {
			v.Pass = false
			if s.Status == Fail && v.FailedStage == "" {
				v.FailedStage = s.Name
			}
		}
	}
}

// Stage returns the stage with the given name, if present.
func (v *Verify) Stage(name string) (Stage, bool) {
	for _, s := range v.Stages {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}

// Stat summarizes repeated measurements of one figure.
type Stat struct {
	Runs   []float64 `json:"runs"`
	Min    float64   `json:"min"`
	Median float64   `json:"median"`
	Max    float64   `json:"max"`
	// Ratio is Median divided by the first target's Median (0 if unknown).
	Ratio float64 `json:"ratio,omitempty"`
}

// NoisyFactor is how far a figure's runs may spread, the largest over the
// smallest, before the leaderboard marks it noisy (README, "The
// leaderboard page").
const NoisyFactor = 1.5

// Noisy says whether s's runs spread more than NoisyFactor.
func (s Stat) Noisy() bool { return len(s.Runs) > 1 && s.Max > NoisyFactor*s.Min }

// NewStat computes min, median and max of runs (the median of an even
// count is the mean of the middle two).
func NewStat(runs []float64) Stat {
	s := Stat{Runs: append([]float64(nil), runs...)}
	if len(runs) == 0 {
		return s
	}
	sorted := append([]float64(nil), runs...)
	sort.Float64s(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	m := len(sorted) / 2
	if len(sorted)%2 == 1 {
		s.Median = sorted[m]
	} else {
		s.Median = (sorted[m-1] + sorted[m]) / 2
	}
	return s
}

// BenchTarget holds one target's figures in a bench run.
type BenchTarget struct {
	Target         string `json:"target"`
	KernelKind     string `json:"kernel_kind"`
	KeepAliveRPS   Stat   `json:"keepalive_rps"`
	FreshRPS       Stat   `json:"fresh_rps"`
	P50MS          Stat   `json:"p50_ms"`
	P99MS          Stat   `json:"p99_ms"`
	TransferMBps   Stat   `json:"transfer_mb_per_s"`
	BootToFirst200 Stat   `json:"boot_to_first_200_s"`
	// BootToFirst200OpenSBI is ours's first 200 booted as Debian's Linux
	// boots, its Image under QEMU's OpenSBI, beside BootToFirst200 on
	// its own firmware (jiege bench ours); empty for other targets.
	BootToFirst200OpenSBI Stat `json:"boot_to_first_200_opensbi_s,omitzero"`
	// Harts is the guest's -smp (0: unknown, an attempt's own QEMU), and
	// KeepAlivePerHart the keep-alive figure divided by it, so that kernels
	// given different harts compare per hart too.
	Harts            int  `json:"harts,omitempty"`
	KeepAlivePerHart Stat `json:"keepalive_rps_per_hart"`
	// WrkKeepAliveRPS is wrk's keep-alive req/s with the same connections,
	// a cross-check of jiege's own load generator; absent without wrk.
	WrkKeepAliveRPS *Stat `json:"wrk_keepalive_rps,omitempty"`
	// Counted holds the counted figures of `jiege bench --icount`.
	Counted        *Counted `json:"counted,omitempty"`
	Errors         int64    `json:"errors"`
	ConnectRetries int64    `json:"connect_retries"`
	Error          string   `json:"error,omitempty"` // why the target has no figures
}

// Counted are the figures of `jiege bench --icount`: guest instructions
// counted by the icount QEMU plugin, by privilege mode, and the QEMU
// process's host CPU time, each per unit of a measured phase.
type Counted struct {
	KeepAlive Work `json:"keepalive_per_request"`
	Fresh     Work `json:"fresh_per_request"`
	Transfer  Work `json:"transfer_per_mb"` // MB: 10^6 bytes of the 64 MiB file
	First200  Work `json:"boot_to_first_200"`
}

// Work is one phase's counted figures per unit.
type Work struct {
	Kernel  Stat `json:"kernel_insns"`  // S-mode instructions
	Machine Stat `json:"machine_insns"` // M-mode (firmware) instructions
	User    Stat `json:"user_insns"`
	// HostCPUMS is QEMU's user and system CPU time (/proc/PID/stat), in ms.
	HostCPUMS Stat `json:"host_cpu_ms"`
}

// RunWork is one run's counted figures of one phase, per unit.
type RunWork struct{ Kernel, Machine, User, HostCPUMS float64 }

// RunCounted is one run's counted figures; Transfer is nil when the
// target has no transfer file.
type RunCounted struct {
	KeepAlive, Fresh, First200 RunWork
	Transfer                   *RunWork
}

// NewCounted sums runs up.
func NewCounted(runs []RunCounted) *Counted {
	var ka, fresh, transfer, first []RunWork
	for _, r := range runs {
		ka, fresh, first = append(ka, r.KeepAlive), append(fresh, r.Fresh), append(first, r.First200)
		if r.Transfer != nil {
			transfer = append(transfer, *r.Transfer)
		}
	}
	return &Counted{KeepAlive: newWork(ka), Fresh: newWork(fresh), Transfer: newWork(transfer), First200: newWork(first)}
}

func newWork(runs []RunWork) Work {
	var kernel, machine, user, cpu []float64
	for _, r := range runs {
		kernel, machine, user, cpu = append(kernel, r.Kernel), append(machine, r.Machine), append(user, r.User), append(cpu, r.HostCPUMS)
	}
	return Work{Kernel: NewStat(kernel), Machine: NewStat(machine), User: NewStat(user), HostCPUMS: NewStat(cpu)}
}

// Bench is the result of `jiege bench`.
type Bench struct {
	Schema  int           `json:"schema"`
	Kind    string        `json:"kind"` // KindBench
	Started time.Time     `json:"started"`
	Runs    int           `json:"runs"`        // repetitions per target
	Load    Duration      `json:"load_s"`      // load duration per measurement
	Conns   int           `json:"connections"` // keep-alive connections
	Host    string        `json:"host,omitempty"`
	Targets []BenchTarget `json:"targets"`
}

// NewBench returns a Bench with the schema and kind set.
func NewBench(runs, conns int, load time.Duration) *Bench {
	return &Bench{Schema: SchemaVersion, Kind: KindBench, Started: time.Now().UTC(), Runs: runs, Conns: conns, Load: Duration(load)}
}

// Metric describes one bench figure for rendering and ranking.
type Metric struct {
	Key          string // JSON field name
	Label        string
	Unit         string
	HigherBetter bool
	Get          func(*BenchTarget) *Stat
}

// Metrics lists the bench figures in display order.
var Metrics = []Metric{
	{"keepalive_rps", "keep-alive", "req/s", true, func(t *BenchTarget) *Stat { return &t.KeepAliveRPS }},
	{"fresh_rps", "fresh conn", "req/s", true, func(t *BenchTarget) *Stat { return &t.FreshRPS }},
	{"p50_ms", "p50", "ms", false, func(t *BenchTarget) *Stat { return &t.P50MS }},
	{"p99_ms", "p99", "ms", false, func(t *BenchTarget) *Stat { return &t.P99MS }},
	{"transfer_mb_per_s", "64 MiB transfer", "MB/s", true, func(t *BenchTarget) *Stat { return &t.TransferMBps }},
	{"boot_to_first_200_s", "boot to first 200", "s", false, func(t *BenchTarget) *Stat { return &t.BootToFirst200 }},
	{"keepalive_rps_per_hart", "keep-alive per hart", "req/s", true, func(t *BenchTarget) *Stat { return &t.KeepAlivePerHart }},
}

// CountedMetrics lists the counted figures (BenchTarget.Counted) in
// display order; a target without them gives an empty Stat.
var CountedMetrics = countedMetrics()

func countedMetrics() []Metric {
	phases := []struct {
		key, label, per string
		get             func(*Counted) *Work
	}{
		{"keepalive_per_request", "keep-alive", "/req", func(c *Counted) *Work { return &c.KeepAlive }},
		{"fresh_per_request", "fresh conn", "/req", func(c *Counted) *Work { return &c.Fresh }},
		{"transfer_per_mb", "transfer", "/MB", func(c *Counted) *Work { return &c.Transfer }},
		{"boot_to_first_200", "to first 200", "", func(c *Counted) *Work { return &c.First200 }},
	}
	parts := []struct {
		key, label, unit string
		get              func(*Work) *Stat
	}{
		{"kernel_insns", "kernel (S) instructions", UnitInstructions, func(w *Work) *Stat { return &w.Kernel }},
		{"machine_insns", "firmware (M) instructions", UnitInstructions, func(w *Work) *Stat { return &w.Machine }},
		{"user_insns", "user instructions", UnitInstructions, func(w *Work) *Stat { return &w.User }},
		{"host_cpu_ms", "QEMU host CPU", "ms", func(w *Work) *Stat { return &w.HostCPUMS }},
	}
	var ms []Metric
	for _, ph := range phases {
		for _, pt := range parts {
			ms = append(ms, Metric{Key: ph.key + "." + pt.key, Label: ph.label + " " + pt.label, Unit: pt.unit + ph.per,
				Get: func(t *BenchTarget) *Stat {
					if t.Counted == nil {
						return &Stat{}
					}
					return pt.get(ph.get(t.Counted))
				}})
		}
	}
	return ms
}

// UnitInstructions is the unit of counted guest instructions.
const UnitInstructions = "insns"

// hasCounted says whether any target has counted figures.
func hasCounted(ts []BenchTarget) bool {
	for _, t := range ts {
		if t.Counted != nil {
			return true
		}
	}
	return false
}

// ComputeRatios sets every Stat's Ratio to its median over the first
// target's median; a zero first median leaves the ratio at 0 (unknown).
func (b *Bench) ComputeRatios() {
	if len(b.Targets) == 0 {
		return
	}
	first := &b.Targets[0]
	for i := range b.Targets {
		for _, m := range slices.Concat(Metrics, CountedMetrics) {
			base, s := m.Get(first), m.Get(&b.Targets[i])
			s.Ratio = 0
			if base.Median != 0 && len(s.Runs) > 0 {
				s.Ratio = s.Median / base.Median
			}
		}
	}
}

// Meta is an attempt's metadata from the compare manifest.
type Meta struct {
	Model    string `json:"model,omitempty"`
	Duration string `json:"duration,omitempty"`
	Cost     string `json:"cost,omitempty"`
}

// Row is one attempt on the leaderboard.
type Row struct {
	Rank         int          `json:"rank"`
	Name         string       `json:"name"`
	Meta         Meta         `json:"metadata"`
	Pass         bool         `json:"pass"`
	FailedStage  string       `json:"failed_stage,omitempty"`
	FailClass    string       `json:"fail_class,omitempty"`
	Deviations   []string     `json:"deviations,omitempty"` // the verify result's
	StagesPassed int          `json:"stages_passed"`
	StagesTotal  int          `json:"stages_total"`
	Verify       *Verify      `json:"verify,omitempty"`
	Bench        *BenchTarget `json:"bench,omitempty"`
	// ConsoleTail is the last lines of the console log, kept in the
	// document because a merged leaderboard's logs are on other machines.
	ConsoleTail string `json:"console_tail,omitempty"`
}

// Compare is the result of `jiege compare`: a leaderboard.
type Compare struct {
	Schema   int       `json:"schema"`
	Kind     string    `json:"kind"` // KindCompare
	Started  time.Time `json:"started"`
	Manifest string    `json:"manifest"`
	Host     string    `json:"host,omitempty"`
	Rows     []Row     `json:"rows"`
	// Peer names the row every bench ratio is taken to (Debian's Linux),
	// when the leaderboard has it with figures.
	Peer string `json:"peer,omitempty"`
	// Shard is set on a partial result (`compare --shard`).
	Shard *Shard `json:"shard,omitempty"`
	// Merged lists the partial results a merged leaderboard was made of.
	Merged []string `json:"merged,omitempty"`
}

// NewCompare returns a Compare with the schema and kind set.
func NewCompare(manifest string) *Compare {
	return &Compare{Schema: SchemaVersion, Kind: KindCompare, Started: time.Now().UTC(), Manifest: manifest}
}

// RowFrom fills a row's verdict fields from a verify result and bench figures.
func RowFrom(name string, meta Meta, v *Verify, b *BenchTarget) Row {
	r := Row{Name: name, Meta: meta, Verify: v, Bench: b}
	if v != nil {
		r.Pass = v.Pass
		r.FailedStage = v.FailedStage
		r.StagesTotal = len(StageOrder)
		r.Deviations = v.Deviations
		for _, s := range v.Stages {
			if s.Passed() {
				r.StagesPassed++
			}
			if s.Name == v.FailedStage {
				r.FailClass = s.Class
			}
		}
	}
	return r
}

// Rank orders the rows: passing attempts first, then by stages passed, then
// by median keep-alive req/s, then by name; and numbers them from 1.
func (c *Compare) Rank() {
	rps := func(r *Row) float64 {
		if r.Bench == nil {
			return 0
		}
		return r.Bench.KeepAliveRPS.Median
	}
	sort.SliceStable(c.Rows, func(i, j int) bool {
		a, b := &c.Rows[i], &c.Rows[j]
		if a.Pass != b.Pass {
			return a.Pass
		}
		if a.StagesPassed != b.StagesPassed {
			return a.StagesPassed > b.StagesPassed
		}
		if rps(a) != rps(b) {
			return rps(a) > rps(b)
		}
		return a.Name < b.Name
	})
	for i := range c.Rows {
		c.Rows[i].Rank = i + 1
	}
}
