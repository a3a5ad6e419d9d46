// Package browser owns jiege's use of a headless Chromium: loading a page
// and reading its DOM after its scripts ran and the messages it wrote to
// the console (errors included), and taking a screenshot. It drives
// Debian's chromium-headless-shell (or chromium) through its command line.
package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// Binaries are the headless browsers tried, in order.
var Binaries = []string{"chromium-headless-shell", "chromium", "google-chrome"}

// ErrNotInstalled reports that no headless browser was found.
var ErrNotInstalled = errors.New("no headless Chromium on PATH (Debian: apt-get install chromium-headless-shell)")

// Timeout bounds one browser run.
const Timeout = 90 * time.Second

// Find returns the path of the first browser of Binaries on PATH.
func Find() (string, error) {
	for _, b := range Binaries {
		if p, err := exec.LookPath(b); err == nil {
			return p, nil
		}
	}
	return "", ErrNotInstalled
}

// Page is a loaded page.
type Page struct {
	DOM string // the document after its scripts ran
	// Console holds every message the page wrote to the console, uncaught
	// exceptions and failed loads included, as Chromium logs them.
	Console []string
}

// consoleLine matches Chromium's log line of a console message:
// [1130/225618.944709:INFO:CONSOLE:1] "message", source: URL (line)
var consoleLine = regexp.MustCompile(`:CONSOLE[:(][^\]]*\] (.*)$`)

// run starts the browser headless with a profile of its own and returns
// its standard output and the console messages of its log.
func run(ctx context.Context, bin string, args ...string) ([]byte, []string, error) {
	profile, err := os.MkdirTemp("", "jiege-browser-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
		"--hide-scrollbars", "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var console []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if m := consoleLine.FindStringSubmatch(l); m != nil {
			console = append(console, m[1])
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no result within %v", Timeout)
		}
		return nil, console, fmt.Errorf("%s: %v: %s", bin, err, lastLines(stderr.String(), 5))
	}
	return stdout.Bytes(), console, nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], " | ")
}

// Load opens url and returns the DOM once the page has loaded and its
// scripts ran, with its console messages.
func Load(ctx context.Context, bin, url string) (Page, error) {
	out, console, err := run(ctx, bin, "--dump-dom", url)
	if err != nil {
		return Page{}, err
	}
	return Page{DOM: string(out), Console: console}, nil
}

// Screenshot writes a PNG of url, as a window width x height shows it.
func Screenshot(ctx context.Context, bin, url, png string, width, height int) ([]string, error) {
	_, console, err := run(ctx, bin, "--screenshot="+png, fmt.Sprintf("--window-size=%d,%d", width, height), url)
	if err != nil {
		return console, err
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		return console, fmt.Errorf("%s: no screenshot written to %s", bin, png)
	}
	return console, nil
}
