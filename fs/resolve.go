package fs

import (
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// Resolve confines how a walk resolves a path, as openat2's RESOLVE_
// flags do (Linux's LOOKUP_BENEATH, IN_ROOT, NO_SYMLINKS, NO_MAGICLINKS,
// NO_XDEV). A Cred carries it into every walk of the operation, symbolic
// links included.
type Resolve struct {
	// Root is the tree path that "/" means and that ".." does not climb
	// above (RESOLVE_IN_ROOT: the directory the lookup starts at); "" is
	// the tree's root.
	Root string
	// Beneath makes leaving Root (an absolute path or link, or ".."
	// above it) EXDEV rather than staying at Root (RESOLVE_BENEATH).
	Beneath bool
	// Scoped says Root is the lookup's own (RESOLVE_BENEATH, IN_ROOT),
	// not the process's root directory: magic links are EXDEV.
	Scoped bool
	// NoSymlinks refuses to follow any symbolic link (ELOOP),
	// NoMagicLinks a procfs link to an open object (ELOOP): scoped lookups
	// refuse those with EXDEV.
	NoSymlinks, NoMagicLinks bool
	// NoXDev refuses to leave the file system of Start, the directory the
	// lookup starts at (EXDEV). Nodes are told apart by their device, so
	// a bind mount of the same file system is not a crossing, nor a ".."
	// that leaves a mount and comes back into it.
	NoXDev bool
	Start  string

	startDev   uint64 // Start's device, found at the first walk
	startFound bool
}

// Join resolves p from dir (a tree path) under r: an absolute p starts at
// r's Root, and ".." stops at Root when dir is inside it (a walk that
// started outside it never passes it), or with Beneath fails with EXDEV.
// A nil r joins as path.Join. The result is clean.
func (r *Resolve) Join(dir, p string) (string, error) {
	abs := strings.HasPrefix(p, "/")
	if r == nil {
		if abs {
			return CleanPath(p), nil
		}
		return CleanPath(dir + "/" + p), nil
	}
	root := strings.TrimSuffix(r.Root, "/") // "": the tree's root
	if abs {
		if r.Beneath {
			return "", unix.EXDEV
		}
		return r.under(root, CleanPath(p)), nil
	}
	rel, ok := strings.CutPrefix(dir, root)
	if !ok || (rel != "" && rel[0] != '/') {
		return CleanPath(dir + "/" + p), nil // dir is outside Root
	}
	joined := rel + "/" + p
	if r.Beneath && climbsAbove(joined) {
		return "", unix.EXDEV
	}
	return r.under(root, CleanPath(joined)), nil
}

// under is the clean path p (absolute, relative to root) in the tree.
func (r *Resolve) under(root, p string) string {
	if p == "/" && root != "" {
		return root
	}
	return root + p
}

// climbsAbove reports whether a ".." in p goes above its start.
func climbsAbove(p string) bool {
	depth := 0
	for _, name := range strings.Split(p, "/") {
		switch name {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// root is the tree path of Root.
func (r *Resolve) root() string {
	if r.Root == "" {
		return "/"
	}
	return r.Root
}

// FollowsMagicLinks reports whether a walk under r follows a magic link
// to its object (a nil r does).
func (r *Resolve) FollowsMagicLinks() bool {
	return r == nil || !(r.NoSymlinks || r.NoMagicLinks || r.Scoped || r.NoXDev)
}

// follow checks that the walk may follow the link n met at dir, and
// returns where the link leads (with the rest of the path still to walk
// appended by the caller).
func (r *Resolve) follow(n *Node, dir string) (string, error) {
	switch {
	case r == nil:
		if strings.HasPrefix(n.Link, "/") {
			return n.Link, nil
		}
		return path.Join(dir, n.Link), nil
	case r.NoSymlinks:
		return "", unix.ELOOP
	case n.magic && r.NoMagicLinks:
		return "", unix.ELOOP
	case n.magic && (r.Scoped || r.NoXDev):
		return "", unix.EXDEV
	case n.magic:
		return n.Link, nil // the object itself, wherever it is
	case r.NoXDev && strings.HasPrefix(n.Link, "/") && (r.Start != r.root() || n.Dev != r.startDev):
		// Linux's nd_jump_root: a jump to the root is allowed only from
		// its file system, and only when the lookup started there.
		return "", unix.EXDEV
	}
	return r.Join(dir, n.Link)
}

// crosses reports whether the walk, at node n with tree path p, has left
// NoXDev's file system: a node on another device than Start's that is
// neither Start nor one of its ancestors (the way down to Start).
func (r *Resolve) crosses(n *Node, p string) bool {
	if r == nil || !r.NoXDev || p == r.Start || strings.HasPrefix(r.Start, p+"/") {
		return false
	}
	return n.Dev != r.startDev
}
