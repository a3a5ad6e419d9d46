package kernel

import "sync/atomic"

// fsContext is what Linux keeps in a task's fs_struct: the working
// directory and the umask. A process's threads share it, and so do
// processes cloned with CLONE_FS (a chdir or umask in one is the other's
// too) until unshare(CLONE_FS) gives one a copy.
type fsContext struct {
	// cwd is the working directory's physical path: chdir in one thread
	// while another resolves a relative path or /proc reads it.
	cwd   atomic.Pointer[string]
	umask atomic.Uint32
}

// copy returns a new context with c's contents.
func (c *fsContext) copy() *fsContext {
	n := new(fsContext)
	n.cwd.Store(c.cwd.Load())
	n.umask.Store(c.umask.Load())
	return n
}

// Cwd is the working directory's physical path.
func (p *Process) Cwd() string { return *p.fs.Load().cwd.Load() }

// SetCwd changes the working directory (chdir, fchdir).
func (p *Process) SetCwd(path string) { p.fs.Load().cwd.Store(&path) }

// Umask is the file mode creation mask.
func (p *Process) Umask() uint32 { return p.fs.Load().umask.Load() }

// SetUmask sets the file mode creation mask and returns the old one.
func (p *Process) SetUmask(mask uint32) uint32 { return p.fs.Load().umask.Swap(mask) }

// unshareFS gives p a context of its own (unshare(2)'s CLONE_FS).
func (p *Process) unshareFS() { p.fs.Store(p.fs.Load().copy()) }
