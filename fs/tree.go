package fs

import (
	"io/fs"
	"path"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Errors are Linux errnos, which the syscall layer returns as they are.
const (
	ErrNotExist = unix.ENOENT
	ErrNotDir   = unix.ENOTDIR
	ErrLoop     = unix.ELOOP
	ErrExist    = unix.EEXIST
)

// Node is a file, directory or symbolic link of the in-memory tree.
type Node struct {
	Mode     fs.FileMode
	UID, GID uint32
	MTime    int64
	Ino      uint64
	Data     []byte // regular files
	Link     string // symbolic links
	Children map[string]*Node
}

var nextIno atomic.Uint64

// NewDir returns an empty directory.
func NewDir(perm fs.FileMode) *Node {
	return &Node{Mode: fs.ModeDir | perm, Ino: nextIno.Add(1), Children: map[string]*Node{}}
}

// IsDir reports whether n is a directory.
func (n *Node) IsDir() bool { return n.Mode.IsDir() }

// Tree is a file system tree with a root directory.
type Tree struct{ Root *Node }

const maxSymlinks = 40

// Lookup resolves an absolute path, following symbolic links (the last
// component's too when follow is set).
func (t *Tree) Lookup(p string, follow bool) (*Node, error) {
	n, _, err := t.walk(p, follow, 0)
	return n, err
}

// walk resolves p and returns the node and its canonical path.
func (t *Tree) walk(p string, follow bool, depth int) (*Node, string, error) {
	if depth > maxSymlinks {
		return nil, "", ErrLoop
	}
	cur, curPath := t.Root, "/"
	parts := strings.Split(strings.Trim(path.Clean("/"+p), "/"), "/")
	for i, name := range parts {
		if name == "" {
			continue
		}
		if !cur.IsDir() {
			return nil, "", ErrNotDir
		}
		if name == ".." {
			cur, curPath = t.parent(curPath)
			continue
		}
		next, ok := cur.Children[name]
		if !ok {
			return nil, "", ErrNotExist
		}
		last := i == len(parts)-1
		if next.Mode&fs.ModeSymlink != 0 && (!last || follow) {
			target := next.Link
			if !strings.HasPrefix(target, "/") {
				target = path.Join(curPath, target)
			}
			rest := strings.Join(parts[i+1:], "/")
			return t.walk(path.Join(target, rest), follow, depth+1)
		}
		cur, curPath = next, path.Join(curPath, name)
	}
	return cur, curPath, nil
}

func (t *Tree) parent(p string) (*Node, string) {
	dir := path.Dir(p)
	n, _, err := t.walk(dir, true, 0)
	if err != nil {
		return t.Root, "/"
	}
	return n, dir
}

// Create adds a node at an absolute path whose parent directory exists.
func (t *Tree) Create(p string, n *Node) error {
	dir, name := path.Split(path.Clean("/" + p))
	parent, err := t.Lookup(dir, true)
	if err != nil {
		return err
	}
	if !parent.IsDir() {
		return ErrNotDir
	}
	if _, ok := parent.Children[name]; ok {
		return ErrExist
	}
	if n.Ino == 0 {
		n.Ino = nextIno.Add(1)
	}
	parent.Children[name] = n
	return nil
}
