package kernel

import (
	"strings"
	"sync/atomic"

	"github.com/jiege-go/jiege/fs"
)

// fsContext is what Linux keeps in a task's fs_struct: the root and
// working directories and the umask. A process's threads share it, and
// so do processes cloned with CLONE_FS (a chdir, chroot or umask in one is
// the other's too) until unshare(CLONE_FS) gives one a copy; a fork's
// child starts with a copy.
type fsContext struct {
	// cwd is the working directory's physical path: chdir in one thread
	// while another resolves a relative path or /proc reads it.
	cwd atomic.Pointer[string]
	// root is the root directory's physical path (chroot), nil for the
	// tree's root.
	root  atomic.Pointer[string]
	umask atomic.Uint32
}

// copy returns a new context with c's contents.
func (c *fsContext) copy() *fsContext {
	n := new(fsContext)
	n.cwd.Store(c.cwd.Load())
	n.root.Store(c.root.Load())
	n.umask.Store(c.umask.Load())
	return n
}

// RootDir is the root directory's physical path: "/" unless the process
// (or one sharing its context) called chroot.
func (p *Process) RootDir() string {
	if r := p.fs.Load().root.Load(); r != nil {
		return *r
	}
	return "/"
}

// SetRootDir changes the root directory (chroot) to a physical path.
func (p *Process) SetRootDir(path string) {
	if path == "/" {
		p.fs.Load().root.Store(nil)
		return
	}
	p.fs.Load().root.Store(&path)
}

// Resolve is how the process's paths resolve: under its root directory
// after a chroot (absolute paths and links start there, ".." stops
// there); nil, the tree's root, otherwise.
func (p *Process) Resolve() *fs.Resolve {
	if root := p.fs.Load().root.Load(); root != nil {
		return &fs.Resolve{Root: *root}
	}
	return nil
}

// Visible is a physical path as the process names it, from its root
// directory, and whether it is under that root at all; one that is not is
// shown from the tree's root, as Linux's d_path does.
func (p *Process) Visible(path string) (string, bool) {
	root := p.RootDir()
	if root == "/" {
		return path, true
	}
	if path == root {
		return "/", true
	}
	if rest, ok := strings.CutPrefix(path, root); ok && rest[0] == '/' {
		return rest, true
	}
	return path, false
}

// Cwd is the working directory's physical path.
func (p *Process) Cwd() string { return *p.fs.Load().cwd.Load() }

// SetCwd changes the working directory (chdir, fchdir).
func (p *Process) SetCwd(path string) { p.fs.Load().cwd.Store(&path) }

// Umask is the file mode creation mask.
func (p *Process) Umask() uint32 { return p.fs.Load().umask.Load() }

// SetUmask sets the file mode creation mask and returns the old one.
func (p *Process) SetUmask(mask uint32) uint32 { return p.fs.Load().umask.Swap(mask) }

// sharesFS reports whether another thread or process shares p's context
// (Linux's fs->users above 1).
func (p *Process) sharesFS() bool {
	if len(tasksOf(p)) > 1 {
		return true
	}
	c := p.fs.Load()
	for _, q := range p.k.Processes() {
		if q != p && q.fs.Load() == c {
			return true
		}
	}
	return false
}

// PivotRoot implements pivot_root(2) for a caller with CAP_SYS_ADMIN:
// fs.Tree.PivotRoot in the process's mount namespace, whose processes'
// roots and working directories follow the mounts they were in (the old
// root's become the new root's).
func (t *Task) PivotRoot(newRoot, putOld string) error {
	p := t.Proc
	mnt := p.ns.Load().mnt
	rebase, err := p.Root.PivotRoot(p.Cred(), newRoot, putOld)
	if err != nil {
		return err
	}
	seen := map[*fsContext]bool{}
	for _, q := range p.k.Processes() {
		c := q.fs.Load()
		if q.ns.Load().mnt != mnt || seen[c] {
			continue
		}
		seen[c] = true
		cwd := rebase(*c.cwd.Load())
		c.cwd.Store(&cwd)
		if r := c.root.Load(); r != nil {
			root := rebase(*r)
			c.root.Store(&root)
		}
	}
	return nil
}

// unshareFS gives p a context of its own (unshare(2)'s CLONE_FS).
func (p *Process) unshareFS() { p.fs.Store(p.fs.Load().copy()) }
