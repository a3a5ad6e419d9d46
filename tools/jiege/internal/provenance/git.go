package provenance

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// History summarises an attempt's git history along HEAD's first parents.
type History struct {
	Commits    int
	First      string // abbreviated hash of the first commit
	FirstTime  time.Time
	FirstFiles int
	FirstLines int
	HeadFiles  int
	HeadLines  int
}

// Most is the share of HEAD's lines a first commit must already hold to be
// a sign, and MinLines the size below which a history says nothing (a
// first commit with a Makefile and a stub holds all of a tiny project).
const (
	Most     = 0.5
	MinLines = 1000
)

// GitTimeout bounds all git commands of one GitHistory call.
const GitTimeout = 30 * time.Second

// GitHistory reads the history of the git work tree whose top level is dir.
// It returns nil and no error when dir is not such a top level (no git, no
// repository, or a directory inside a larger repository).
func GitHistory(ctx context.Context, dir string) (*History, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, GitTimeout)
	defer cancel()
	git := func(args ...string) (string, error) {
		// safe.directory: an attempt's directory belongs to whoever made it.
		cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "safe.directory=*", "-C", dir}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return string(out), nil
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, nil
	}
	if !sameDir(strings.TrimSpace(top), dir) {
		return nil, nil
	}
	revs, err := git("rev-list", "--first-parent", "HEAD")
	if err != nil {
		return nil, nil // a repository without commits
	}
	list := strings.Fields(revs)
	if len(list) == 0 {
		return nil, nil
	}
	first := list[len(list)-1]
	h := &History{Commits: len(list), First: first[:min(12, len(first))]}
	if t, err := git("show", "-s", "--format=%cI", first); err == nil {
		h.FirstTime, _ = time.Parse(time.RFC3339, strings.TrimSpace(t))
	}
	empty, err := git("hash-object", "-t", "tree", "/dev/null")
	if err != nil {
		return nil, err
	}
	count := func(rev string) (files, lines int, err error) {
		out, err := git("diff", "--numstat", strings.TrimSpace(empty), rev)
		if err != nil {
			return 0, 0, err
		}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) < 3 {
				continue
			}
			files++
			n, _ := strconv.Atoi(f[0]) // "-" for a binary file
			lines += n
		}
		return files, lines, nil
	}
	if h.FirstFiles, h.FirstLines, err = count(first); err != nil {
		return nil, err
	}
	if h.HeadFiles, h.HeadLines, err = count("HEAD"); err != nil {
		return nil, err
	}
	return h, nil
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// Share is the part of HEAD's lines the first commit held.
func (h *History) Share() float64 {
	if h.HeadLines == 0 {
		return 0
	}
	return float64(h.FirstLines) / float64(h.HeadLines)
}

// Suspicious reports whether the first commit already held most of the
// code of a project of some size.
func (h *History) Suspicious() bool {
	return h.HeadLines >= MinLines && h.Share() >= Most
}

func (h *History) String() string {
	when := ""
	if !h.FirstTime.IsZero() {
		when = " (" + h.FirstTime.UTC().Format("2006-01-02 15:04") + ")"
	}
	commits := "commits"
	if h.Commits == 1 {
		commits = "commit"
	}
	return fmt.Sprintf("git: %d %s; the first, %s%s, holds %d of HEAD's %d lines (%.0f%%) in %d of %d files",
		h.Commits, commits, h.First, when, h.FirstLines, h.HeadLines, 100*h.Share(), h.FirstFiles, h.HeadFiles)
}
