package fs

import (
	"path"
	"testing"
)

// TestCleanPath: CleanPath is path.Clean of the path made absolute.
func TestCleanPath(t *testing.T) {
	for _, p := range []string{"/", "//", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/..", "/.", "a/b", "", ".", "/a/b/c.d", "/a/.b/..c", "/a/b/..", "/a/b/."} {
		if got, want := CleanPath(p), path.Clean("/"+p); got != want {
			t.Errorf("CleanPath(%q) = %q, want %q", p, got, want)
		}
	}
}
