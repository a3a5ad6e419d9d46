package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jiege-go/jiege/tools/jiege/internal/browser"
	"github.com/jiege-go/jiege/tools/jiege/internal/console"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

// consoleTailLines is how much of an attempt's console the leaderboard keeps.
const consoleTailLines = 40

// consoleTail returns the last lines of a console log, or "".
func consoleTail(path string) string {
	if path == "" {
		return ""
	}
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	f := console.Follow(path, max(0, st.Size()-64<<10))
	// A last line without a newline counts after two polls that add nothing.
	for range 3 {
		if f.Poll() != nil {
			return ""
		}
	}
	return strings.Join(f.Tail(consoleTailLines), "\n")
}

// parseShard parses --shard K/N: shard K (from 0) of N.
func parseShard(s string) (index, count int, err error) {
	k, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(k)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || count < 1 || index < 0 || index >= count {
		return 0, 0, usageErr("--shard %q: want K/N with 0 <= K < N (K as JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID count from 0)", s)
	}
	return index, count, nil
}

// leaderboardBase is the file name, without extension, of a leaderboard:
// shards of one manifest write next to each other.
func leaderboardBase(c *report.Compare) string {
	if c.Shard != nil {
		return fmt.Sprintf("leaderboard-shard-%d-of-%d", c.Shard.Index, c.Shard.Count)
	}
	return "leaderboard"
}

// writeLeaderboard writes the leaderboard as JSON, Markdown and HTML into
// dir, and with screenshot a PNG of the page next to them.
func writeLeaderboard(ctx context.Context, c *report.Compare, dir string, screenshot bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return envErr(err)
	}
	base := filepath.Join(dir, leaderboardBase(c))
	j, md, html := base+".json", base+".md", base+".html"
	if err := writeOutputs(c, j, md, report.CompareMarkdown(c)); err != nil {
		return err
	}
	if err := os.WriteFile(html, []byte(report.CompareHTML(c)), 0o644); err != nil {
		return envErr(err)
	}
	fmt.Printf("leaderboard: %s, %s, %s\n", j, md, html)
	if !screenshot {
		return nil
	}
	bin, err := browser.Find()
	if err != nil {
		return envErr(fmt.Errorf("--screenshot: %w", err))
	}
	abs, err := filepath.Abs(html)
	if err != nil {
		return envErr(err)
	}
	png := base + ".png"
	// The whole page: at least 1280 px wide, wider when the table is.
	msgs, w, h, err := browser.FullScreenshot(ctx, bin, "file://"+abs, png, 1280)
	if err != nil {
		return envErr(fmt.Errorf("--screenshot: %w", err))
	}
	for _, m := range msgs {
		fmt.Fprintf(os.Stderr, "jiege: warning: the leaderboard page wrote to the browser console: %s\n", m)
	}
	fmt.Printf("screenshot: %s (%dx%d, the whole page)\n", png, w, h)
	return nil
}

func cmdMerge(ctx context.Context, args []string) error {
	fs := newFlags("merge", "--out DIR PARTIAL.json... (the leaderboard-shard-K-of-N.json of every shard)")
	var outDir string
	var screenshot bool
	fs.StringVar(&outDir, "out", "", "write leaderboard.json, leaderboard.md and leaderboard.html here")
	fs.BoolVar(&screenshot, "screenshot", false, "also write leaderboard.png, the page as headless Chromium shows it")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("merge: want the partial results of every shard")
	}
	var parts []*report.Compare
	for _, p := range fs.Args() {
		b, err := os.ReadFile(p)
		if err != nil {
			return usageErr("merge: %v", err)
		}
		var c report.Compare
		if err := json.Unmarshal(b, &c); err != nil {
			return usageErr("merge: %s: %v", p, err)
		}
		parts = append(parts, &c)
	}
	res, err := report.MergeCompare(parts, fs.Args())
	if err != nil {
		return usageErr("%v", err)
	}
	fmt.Print(report.CompareText(res))
	if outDir != "" {
		if err := writeLeaderboard(ctx, res, outDir, screenshot); err != nil {
			return err
		}
	}
	for _, r := range res.Rows {
		if !r.Pass {
			return errFailed
		}
	}
	return nil
}
