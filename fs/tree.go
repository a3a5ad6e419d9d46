package fs

import (
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Errors are Linux errnos, which the syscall layer returns as they are.
const (
	ErrNotExist = unix.ENOENT
	ErrNotDir   = unix.ENOTDIR
	ErrLoop     = unix.ELOOP
	ErrExist    = unix.EEXIST
)

// UnixPerm are the permission bits of Node.Mode as Linux has them:
// rwxrwxrwx and, in Linux's positions, setuid (04000), setgid (02000) and
// sticky (01000), which chmod sets and stat reports.
const UnixPerm fs.FileMode = 0o7777

// Node is a file, directory or symbolic link of the in-memory tree.
// Tree.mu guards Children; a regular file's Data is guarded by the node's mu.
type Node struct {
	Mode     fs.FileMode
	UID, GID uint32
	// Times of last access, modification and status change.
	ATime, MTime, CTime time.Time
	Ino                 uint64
	Links               int    // names in the tree (regular files)
	Data                []byte // regular files
	Link                string // symbolic links
	Rdev                uint64 // character devices
	Bound               any    // the Unix socket bound to a socket node
	Children            map[string]*Node
	// Synthetic nodes (procfs, sysfs) compute their contents: a file's data
	// when it is opened, a directory's children when it is walked.
	Generate func() []byte
	ListDir  func() map[string]*Node

	mu sync.RWMutex
}

var nextIno atomic.Uint64

// NewSymlink returns a symbolic link to target.
func NewSymlink(target string) *Node {
	n := &Node{Mode: fs.ModeSymlink | 0o777, Link: target, Ino: nextIno.Add(1)}
	n.Touch()
	return n
}

// NewGenerated returns a read-only file whose data gen computes at each open.
func NewGenerated(gen func() []byte) *Node {
	n := &Node{Mode: 0o444, Generate: gen, Ino: nextIno.Add(1)}
	n.Touch()
	return n
}

// NewDir returns an empty directory.
func NewDir(perm fs.FileMode) *Node {
	return &Node{Mode: fs.ModeDir | perm, Ino: nextIno.Add(1), Children: map[string]*Node{}}
}

// IsDir reports whether n is a directory.
func (n *Node) IsDir() bool { return n.Mode.IsDir() }

// Tree is a file system tree with a root directory. It starts as the
// initramfs and takes writes in memory, as Linux's rootfs (a tmpfs) does.
type Tree struct {
	Root *Node
	mu   sync.Mutex
}

const maxSymlinks = 40

// Lookup resolves an absolute path, following symbolic links (the last
// component's too when follow is set).
func (t *Tree) Lookup(p string, follow bool) (*Node, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, _, err := t.walk(p, follow, 0)
	return n, err
}

// LookupPath resolves an absolute path, following every symbolic link, and
// returns the node and its path without links (the physical path).
func (t *Tree) LookupPath(p string) (*Node, string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.walk(p, true, 0)
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
		next, ok := cur.children()[name]
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
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.create(p, n)
}

func (t *Tree) create(p string, n *Node) error {
	dir, name := path.Split(path.Clean("/" + p))
	if name == "" || name == "." || name == ".." {
		return ErrExist
	}
	parent, _, err := t.walk(dir, true, 0)
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
	n.Links++
	parent.MTime, parent.CTime = time.Now(), time.Now()
	return nil
}

// children are a directory's entries, computed for a synthetic one.
func (n *Node) children() map[string]*Node {
	if n.ListDir != nil {
		return n.ListDir()
	}
	return n.Children
}

// Touch sets all three times to now (a new node).
func (n *Node) Touch() {
	now := time.Now()
	n.ATime, n.MTime, n.CTime = now, now, now
}

// Link gives the node at oldp another name, newp (link(2)): EPERM for a
// directory, EEXIST when newp exists.
func (t *Tree) Link(oldp, newp string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, _, err := t.walk(oldp, false, 0)
	if err != nil {
		return err
	}
	if n.IsDir() {
		return unix.EPERM
	}
	if err := t.create(newp, n); err != nil {
		return err
	}
	n.CTime = time.Now()
	return nil
}

// Mkdir creates a directory.
func (t *Tree) Mkdir(p string, perm fs.FileMode) error {
	d := NewDir(perm)
	d.Touch()
	return t.Create(p, d)
}

// OpenFlags are what open does to the path: create, exclusively, truncate.
type OpenFlags struct {
	Create, Excl, Trunc, Follow bool
	Perm                        fs.FileMode
}

// Open resolves p for opening, creating or truncating a regular file as the
// flags say.
func (t *Tree) Open(p string, o OpenFlags) (*Node, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, _, err := t.walk(p, o.Follow, 0)
	switch {
	case err == ErrNotExist && o.Create:
		n = &Node{Mode: o.Perm & UnixPerm}
		n.Touch()
		if err := t.create(p, n); err != nil {
			return nil, err
		}
		return n, nil
	case err != nil:
		return nil, err
	case o.Create && o.Excl:
		return nil, ErrExist
	}
	if o.Trunc && n.Mode.IsRegular() {
		n.mu.Lock()
		n.Data = nil
		n.mu.Unlock()
	}
	return n, nil
}

// Remove unlinks p: a directory, which must be empty, when dir is set;
// anything else otherwise.
func (t *Tree) Remove(p string, dir bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	parentPath, name := path.Split(path.Clean("/" + p))
	parent, _, err := t.walk(parentPath, true, 0)
	if err != nil {
		return err
	}
	n, ok := parent.Children[name]
	switch {
	case !ok:
		return ErrNotExist
	case dir && !n.IsDir():
		return ErrNotDir
	case !dir && n.IsDir():
		return unix.EISDIR
	case dir && len(n.Children) > 0:
		return unix.ENOTEMPTY
	}
	delete(parent.Children, name)
	n.Links--
	n.CTime = time.Now()
	parent.MTime, parent.CTime = n.CTime, n.CTime
	return nil
}

// Rename moves oldp to newp, replacing what is there as rename(2) does:
// a directory only by a directory, an empty one; never into itself.
func (t *Tree) Rename(oldp, newp string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	oldp, newp = path.Clean("/"+oldp), path.Clean("/"+newp)
	op, on := path.Split(oldp)
	np, nn := path.Split(newp)
	if on == "" || nn == "" || on == "." || on == ".." || nn == "." || nn == ".." {
		return unix.EBUSY
	}
	oldParent, _, err := t.walk(op, true, 0)
	if err != nil {
		return err
	}
	n, ok := oldParent.Children[on]
	if !ok {
		return ErrNotExist
	}
	newParent, _, err := t.walk(np, true, 0)
	if err != nil {
		return err
	}
	if !newParent.IsDir() {
		return ErrNotDir
	}
	if n.IsDir() && strings.HasPrefix(newp, oldp+"/") {
		return unix.EINVAL
	}
	if old, ok := newParent.Children[nn]; ok {
		switch {
		case old == n:
			return nil
		case n.IsDir() && !old.IsDir():
			return ErrNotDir
		case !n.IsDir() && old.IsDir():
			return unix.EISDIR
		case old.IsDir() && len(old.Children) > 0:
			return unix.ENOTEMPTY
		}
		old.Links--
	}
	delete(oldParent.Children, on)
	newParent.Children[nn] = n
	now := time.Now()
	n.CTime = now
	oldParent.MTime, oldParent.CTime, newParent.MTime, newParent.CTime = now, now, now, now
	return nil
}

// DirEntry is one name in a directory listing.
type DirEntry struct {
	Name string
	Node *Node
}

// List returns a directory's entries sorted by name.
func (t *Tree) List(d *Node) []DirEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	children := d.children()
	out := make([]DirEntry, 0, len(children))
	for name, n := range children {
		out = append(out, DirEntry{name, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
