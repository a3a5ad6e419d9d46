package ltp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Result is one test's outcome.
type Result struct {
	Name, Family string
	Status       int  // exit status, 128 + signal; -1 when the kernel did not survive it
	TimedOut     bool // killed after the guest's per-test limit
	// Kernel is "died" (QEMU stopped: a panic, a power-off) or "hung" (no
	// console line for KernelSilence) when the kernel did not survive the
	// test; then First is the console's last line.
	Kernel string
	First  string // the first TFAIL or TBROK line
}

// Verdict is PASS (exit 0), TCONF (32: not applicable, not a pass),
// TIMEOUT, DIED, HUNG or FAIL.
func (r Result) Verdict() string {
	switch {
	case r.Kernel != "":
		return strings.ToUpper(r.Kernel)
	case r.TimedOut:
		return "TIMEOUT"
	case r.Status == 0:
		return "PASS"
	case r.Status == 32:
		return "TCONF"
	}
	return "FAIL"
}

// Machine boots a kernel with an LTP image: Command returns the QEMU
// command that runs the list from entry start on.
type Machine struct {
	Name    string
	Command func(ctx context.Context, start int) *exec.Cmd
	// Silence is how long a test may go without a console line before
	// the kernel counts as hung; 0 means KernelSilence.
	Silence time.Duration
}

const (
	// BootSilence bounds the wait for the first test of a boot.
	BootSilence = 4 * time.Minute
	// KernelSilence bounds a test: the guest's init kills it after 60 s of
	// guest time and drains its output for 2 more; beyond this the kernel
	// is hung.
	KernelSilence = 150 * time.Second
)

// Run runs the entries on m, booting again after the test a kernel did
// not survive. Each boot's console goes to logPrefix-bootN.log; progress
// gets a line per test.
func Run(ctx context.Context, m Machine, es []Entry, logPrefix string, progress io.Writer) ([]Result, int, error) {
	var results []Result
	boots := 0
	for start := 0; start < len(es); {
		boots++
		log, err := os.Create(fmt.Sprintf("%s-boot%d.log", logPrefix, boots))
		if err != nil {
			return results, boots, err
		}
		got, next, err := boot(ctx, m, es, start, log, progress)
		log.Close()
		results = append(results, got...)
		if err != nil {
			return results, boots, fmt.Errorf("%s, boot %d from test %d (%s): %w", m.Name, boots, start, es[start].Name, err)
		}
		start = next
	}
	return results, boots, nil
}

// Guest lines are tab-separated; see tools/ltp/init.c.
const (
	startTag  = "LTP-START\t"
	resultTag = "LTP-RESULT\t"
	doneTag   = "LTP-DONE"
)

// boot runs one guest from entry start and returns its results and the
// entry to start the next boot from.
func boot(ctx context.Context, m Machine, es []Entry, start int, log, progress io.Writer) ([]Result, int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := m.Command(ctx, start)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, start, err
	}
	cmd.Stderr = cmd.Stdout
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, start, err
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- strings.TrimRight(sc.Text(), "\r"):
			case <-ctx.Done():
				return
			}
		}
	}()

	var results []Result
	current, next := -1, start
	last := "" // the console's last line that is not the guest init's
	limit := m.Silence
	if limit == 0 {
		limit = KernelSilence
	}
	silence := time.NewTimer(max(BootSilence, limit))
	defer silence.Stop()
	lost := func(how string) ([]Result, int, error) {
		if current < 0 {
			if len(results) == 0 {
				return results, next, fmt.Errorf("the kernel %s before the first test: %s", how, last)
			}
			return results, next, nil // between tests: go on with the next
		}
		e := es[current]
		r := Result{Name: e.Name, Family: e.Family, Status: -1, Kernel: how, First: last}
		fmt.Fprintf(progress, "%s %s %s: %s\n", m.Name, r.Verdict(), r.Name, r.First)
		return append(results, r), current + 1, nil
	}
	for {
		select {
		case <-ctx.Done():
			return results, next, ctx.Err()
		case <-silence.C:
			cmd.Process.Kill()
			return lost("hung")
		case l, ok := <-lines:
			if !ok {
				return lost("died")
			}
			fmt.Fprintln(log, l)
			switch {
			case strings.HasPrefix(l, startTag):
				i, _, err := parseIndex(strings.TrimPrefix(l, startTag), len(es))
				if err != nil {
					return results, next, err
				}
				current = i
				silence.Reset(limit)
			case strings.HasPrefix(l, resultTag):
				r, i, err := parseResult(strings.TrimPrefix(l, resultTag), es)
				if err != nil {
					return results, next, err
				}
				results = append(results, r)
				current, next = -1, i+1
				silence.Reset(limit)
				fmt.Fprintf(progress, "%s %s %s %s\n", m.Name, r.Verdict(), r.Name, r.First)
			case l == doneTag:
				return results, len(es), nil
			case l != "":
				last = l
			}
		}
	}
}

func parseIndex(s string, n int) (int, string, error) {
	idx, rest, _ := strings.Cut(s, "\t")
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || i >= n {
		return 0, "", fmt.Errorf("guest line with a bad index: %q", s)
	}
	return i, rest, nil
}

// parseResult reads "index name status timed-out first".
func parseResult(s string, es []Entry) (Result, int, error) {
	i, rest, err := parseIndex(s, len(es))
	if err != nil {
		return Result{}, 0, err
	}
	f := strings.SplitN(rest, "\t", 4)
	if len(f) != 4 || f[0] != es[i].Name {
		return Result{}, 0, fmt.Errorf("guest result line not for test %d (%s): %q", i, es[i].Name, s)
	}
	status, err1 := strconv.Atoi(f[1])
	timedOut, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return Result{}, 0, fmt.Errorf("guest result line: %q", s)
	}
	return Result{Name: f[0], Family: es[i].Family, Status: status, TimedOut: timedOut != 0, First: strings.TrimSpace(f[3])}, i, nil
}
