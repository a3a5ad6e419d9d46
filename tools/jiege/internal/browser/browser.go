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
	"strconv"
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

// pageSize matches the root element's data-page-size="WxH", which a
// page that wants to be shot whole sets to its scroll size.
var pageSize = regexp.MustCompile(`<html[^>]* data-page-size="(\d+)x(\d+)"`)

// size loads url in a window width pixels wide and returns the size the
// page gives itself in data-page-size.
func size(ctx context.Context, bin, url string, width int) (w, h int, err error) {
	out, _, err := run(ctx, bin, "--dump-dom", fmt.Sprintf("--window-size=%d,%d", width, 1000), url)
	if err != nil {
		return 0, 0, err
	}
	m := pageSize.FindSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("%s: the page sets no data-page-size", url)
	}
	w, _ = strconv.Atoi(string(m[1]))
	h, _ = strconv.Atoi(string(m[2]))
	return w, h, nil
}

// FullScreenshot writes a PNG of the whole of url, a page that sets its
// size in data-page-size on its root element: at least minWidth wide, and
// wider when its content (a wide table) needs it; as tall as the page is
// at that width. It returns the console messages and the PNG's size.
func FullScreenshot(ctx context.Context, bin, url, png string, minWidth int) (console []string, w, h int, err error) {
	w, h, err = size(ctx, bin, url, minWidth)
	if err != nil {
		return nil, 0, 0, err
	}
	if w > minWidth {
		// Wider, the page lays out again: less wraps, its height changes.
		if _, h, err = size(ctx, bin, url, w); err != nil {
			return nil, 0, 0, err
		}
	}
	w = max(w, minWidth)
	console, err = Screenshot(ctx, bin, url, png, w, h)
	return console, w, h, err
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
