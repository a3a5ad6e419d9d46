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

// nameMax is NAME_MAX: a longer name is ENAMETOOLONG where a directory
// would be searched for it, as Linux's file systems' lookups answer.
const nameMax = 255

// Node is a file, directory or symbolic link of the in-memory tree.
// Tree.mu guards Children; a regular file's contents are guarded by the node's mu.
type Node struct {
	Mode     fs.FileMode
	UID, GID uint32
	// Times of last access, modification and status change.
	ATime, MTime, CTime time.Time
	Ino                 uint64
	Links               int               // names in the tree (regular files)
	charged             int64             // bytes of pages charged to the tree's size limit
	Data                []byte            // a regular file's contents until written (usage.go)
	disk                *diskFile         // or its contents on a root image's disk, until written
	written             *filePages        // a regular file's own pages, once written
	opens               int               // open descriptions of a regular file
	writers             int               // of which writable
	Link                string            // symbolic links
	magic               bool              // a magic link (NewMagicLink)
	object              *Node             // a magic link's object when no path leads to it (NewObjectLink)
	Rdev                uint64            // character devices
	xattrs              map[string][]byte // extended attributes (xattr.go), guarded by mu
	memfd               bool              // a memfd file, which seals apply to (memfd.go)
	linkable            bool              // made by open(O_TMPFILE) without O_EXCL, and not named yet
	setting             bool              // a /proc/sys setting (NewSetting), whose bits bind root too (perm.go)
	seals               uint32            // F_SEAL_*, guarded by mu
	flags               atomic.Uint32     // inode flags (attrflags.go)
	Bound               any               // the Unix socket bound to a socket node; a FIFO's pipe, guarded by mu
	Dev                 uint64            // st_dev when not the tree's own (procfs, sysfs)
	tree                *Tree             // the tree it was named in, whose limits its pages count against
	Children            map[string]*Node
	subdirs             int // directories among Children (st_nlink), under the tree's lock
	// mountedOn counts the mounts on the node in every namespace, under
	// the tree's lock: a walk asks its namespace only where it is not 0.
	mountedOn int32
	// Synthetic nodes (procfs, sysfs) compute their contents: a file's data
	// when it is opened (for the viewer that opens it, OpenNodeFor), a
	// directory's children when it is walked.
	Generate func(viewer any) []byte
	ListDir  func() map[string]*Node
	// Store takes what is written to a synthetic file that is a setting
	// (/proc/sys), each write on its own, for the viewer that opened it.
	Store func(viewer any, b []byte) error
	// ReadInPlace reads a synthetic file too large to generate whole
	// (/proc/PID/pagemap) at an offset, in place: into p, how much it
	// filled, 0 at its end.
	ReadInPlace func(p []byte, off int64) (int, error)
	// mapped is the memory of the node's shared mappings (mapped.go),
	// guarded by mu.
	mapped FileMapping
	// inLockTable is set while the node has an entry in its tree's lock
	// table (lock.go), so that a close of a file no one locked skips the
	// table, as Linux's locks_remove_posix skips an inode with no lock
	// context.
	inLockTable atomic.Bool

	mu sync.RWMutex
}

// nextIno numbers the nodes, pipes, epoll and event files of every tree
// in the process. It stays package-level because most of them are made
// without a tree at hand (NewDir, NewPipe, NewEpoll...); inode numbers
// need only be unique, and nothing depends on which tree counted them.
var nextIno atomic.Uint64

// NewSymlink returns a symbolic link to target.
func NewSymlink(target string) *Node {
	n := &Node{Mode: fs.ModeSymlink | 0o777, Link: target, Ino: nextIno.Add(1)}
	n.Touch()
	return n
}

// NewMagicLink returns a procfs link to an open object (/proc/PID/exe,
// cwd, root, fd/N), which leads to the object wherever it is, as Linux's
// magic links; openat2's RESOLVE_NO_MAGICLINKS refuses it.
func NewMagicLink(target string) *Node {
	n := &Node{Mode: fs.ModeSymlink | 0o777, Link: target, Ino: nextIno.Add(1), Dev: DevProc, magic: true}
	n.Touch()
	return n
}

// NewObjectLink returns a magic link whose object no path reaches, a
// namespace's file (/proc/PID/ns/uts): readlink shows name, and a walk
// that follows the link ends at object, as Linux's ns_get_path.
func NewObjectLink(name string, object *Node) *Node {
	n := NewMagicLink(name)
	n.object = object
	return n
}

// Magic reports whether n is a magic link (NewMagicLink).
func (n *Node) Magic() bool { return n.magic }

// Devices of the synthetic file systems, for st_dev (as Linux numbers
// its anonymous ones).
const (
	DevProc     = 3
	DevSysfs    = 4
	DevDevtmpfs = 6
	DevMqueue   = 16 // the POSIX message queues' (kernel/ipc)
	DevNsfs     = 5  // the namespaces' files (Linux's nsfs)
)

// NewGenerated returns a read-only file whose data gen computes at each open.
func NewGenerated(gen func() []byte) *Node {
	return NewGeneratedFor(func(any) []byte { return gen() })
}

// NewSettingFor is NewSetting for a file whose contents and writes
// depend on the viewer that opens it.
func NewSettingFor(gen func(viewer any) []byte, store func(viewer any, b []byte) error) *Node {
	n := NewGeneratedFor(gen)
	n.Mode, n.Store = 0o644, store
	return n
}

// NewGeneratedFor returns a read-only file whose data gen computes at
// each open for the viewer that opens it (a task: a file that depends on
// the reader's namespaces, as /proc/uptime on its time namespace).
func NewGeneratedFor(gen func(viewer any) []byte) *Node {
	n := &Node{Mode: 0o444, Generate: gen, Ino: nextIno.Add(1), Dev: DevProc}
	n.Touch()
	return n
}

// NewReadAt returns a synthetic file read in place by readAt, of size 0
// as Linux's proc files show, readable by its owner only.
func NewReadAt(readAt func(p []byte, off int64) (int, error)) *Node {
	n := &Node{Mode: 0o400, ReadInPlace: readAt, Ino: nextIno.Add(1), Dev: DevProc,
		Store: func(any, []byte) error { return unix.EINVAL }} // no write method
	n.Touch()
	return n
}

// NewSetting returns a synthetic file that reads as gen says and whose
// writes go to store (a /proc/sys setting): writable by its owner, root.
func NewSetting(gen func() []byte, store func([]byte) error) *Node {
	n := NewGenerated(gen)
	n.Mode, n.Store, n.setting = 0o644, func(_ any, b []byte) error { return store(b) }, true
	return n
}

// NewDir returns an empty directory.
func NewDir(perm fs.FileMode) *Node {
	return &Node{Mode: fs.ModeDir | perm, Ino: nextIno.Add(1), Children: map[string]*Node{}}
}

// IsDir reports whether n is a directory.
func (n *Node) IsDir() bool { return n.Mode.IsDir() }

// putChild names n in the directory dir, replacing any entry of that name,
// and counts subdirectories: a directory's st_nlink is 2 plus their number,
// as on Linux. The caller holds the tree's lock.
func (dir *Node) putChild(name string, n *Node) {
	if old, ok := dir.Children[name]; ok && old.IsDir() {
		dir.subdirs--
	}
	dir.Children[name] = n
	if n.IsDir() {
		dir.subdirs++
	}
}

// dropChild removes the entry name from the directory dir.
func (dir *Node) dropChild(name string) {
	if old, ok := dir.Children[name]; ok && old.IsDir() {
		dir.subdirs--
	}
	delete(dir.Children, name)
}

// Tree is a file system tree with a root directory. It starts as the
// initramfs and takes writes in memory, as Linux's rootfs (a tmpfs) does.
// It is a kernel's VFS: besides the names it owns what Linux keeps per
// kernel around them, the file system types and devices that can be
// mounted and opened, the mounts, the file data's accounting, the root
// image's cache and the record locks, so that two trees share nothing.
type Tree struct {
	Root *Node
	mu   sync.Mutex

	// initMounts is the initial mount namespace, which the kernel's walks
	// use; mountNSs holds every namespace whose mounts count (mountns.go).
	initMounts *MountNS
	mountNSs   map[*MountNS]struct{}
	nextMount  int
	// readOnly holds the devices of the file systems mounted or remounted
	// read-only (mount.go), replaced on change: Access reads it without t.mu.
	readOnly atomic.Pointer[map[uint64]bool]

	// The file system types, the tmpfs mounts by device number and the
	// last anonymous device number given (mount.go). regMu is a leaf
	// lock: charging a file's pages takes it under the node's lock.
	regMu       sync.Mutex
	filesystems map[string]Filesystem
	tmpfsMounts map[uint64]*tmpfsUsage
	nextAnonDev uint64

	devices   deviceRegistry // dev.go
	data      dataUsage      // usage.go
	diskCache diskCache      // disk.go
	locks     lockTable      // lock.go
	notify    notifyTable    // inotify.go
}

// NewTree returns a tree with root as its root directory, tmpfs its one
// file system type.
func NewTree(root *Node) *Tree {
	t := &Tree{Root: root, tmpfsMounts: map[uint64]*tmpfsUsage{}, nextAnonDev: 0x20}
	t.filesystems = map[string]Filesystem{"tmpfs": t.newTmpfs}
	t.devices.open = map[uint64]func() (File, error){}
	t.locks.byNode = map[*Node]*nodeLocks{}
	t.locks.waitsFor = map[LockOwner]LockOwner{}
	setNotifyLimits(&t.notify.limits, [3]string{"max_queued_events", "max_user_instances", "max_user_watches"},
		inotifyDefaultQueuedEvents, inotifyDefaultUserInstances, inotifyDefaultUserWatches)
	setNotifyLimits(&t.notify.fanotifyLimits, [3]string{"max_queued_events", "max_user_groups", "max_user_marks"},
		fanotifyDefaultQueuedEvents, fanotifyDefaultUserGroups, fanotifyDefaultUserMarks)
	root.tree = t
	t.mountNSs = map[*MountNS]struct{}{}
	t.initMounts = t.newMountNS(1)
	return t
}

const maxSymlinks = 40

// Lookup resolves an absolute path for c, following symbolic links (the
// last component's too when follow is set). c needs search permission on
// every directory it passes through.
func (t *Tree) Lookup(c *Cred, p string, follow bool) (*Node, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, _, err := t.walk(c, p, follow, 0)
	return n, err
}

// LookupPath resolves an absolute path for c, following every symbolic
// link, and returns the node and its path without links (the physical
// path: chdir keeps it, /proc/PID/exe names it).
func (t *Tree) LookupPath(c *Cred, p string) (*Node, string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.walk(c, p, true, 0)
}

// CleanPath is path.Clean of p made absolute, without path.Clean's cost
// when p is clean already (as the system call layer's paths are: both
// clean every open's path).
func CleanPath(p string) string {
	if !strings.HasPrefix(p, "/") {
		return path.Clean("/" + p)
	}
	// Clean unless a slash ends p (past the lone "/") or starts an empty
	// name, "." or "..": one pass with no call, as paths are short.
	n := len(p)
	if n > 1 && p[n-1] == '/' {
		return path.Clean(p)
	}
	for i := 0; i < n-1; i++ {
		if p[i] != '/' {
			continue
		}
		switch c := p[i+1]; {
		case c == '/':
			return path.Clean(p)
		case c == '.' && (i+2 == n || p[i+2] == '/' || p[i+2] == '.' && (i+3 == n || p[i+3] == '/')):
			return path.Clean(p)
		}
	}
	return p
}

// walk resolves p for c, in c's mount namespace, and returns the node
// and its canonical path.
func (t *Tree) walk(c *Cred, p string, follow bool, depth int) (*Node, string, error) {
	return t.walkNS(t.nsOf(c), c, p, follow, depth)
}

// walkNS is walk in the mount namespace ns. Cleaning a rooted path leaves
// no "." or ".." in it, so until a link changes the way, the canonical
// path is a prefix of the clean one (every open of a file passes here: no
// allocation on that way).
func (t *Tree) walkNS(ns *MountNS, c *Cred, p string, follow bool, depth int) (*Node, string, error) {
	if depth > maxSymlinks {
		return nil, "", ErrLoop
	}
	r := c.resolve()
	if r != nil && r.NoXDev && !r.startFound {
		start, _, err := t.walkNS(ns, nil, r.Start, true, 0)
		if err != nil {
			return nil, "", err
		}
		r.startDev, r.startFound = start.Dev, true
	}
	clean := CleanPath(p)
	cur := t.Root
	for start := 1; start < len(clean); {
		end := strings.IndexByte(clean[start:], '/')
		if end < 0 {
			end = len(clean)
		} else {
			end += start
		}
		name := clean[start:end]
		if !cur.IsDir() {
			return nil, "", ErrNotDir
		}
		if err := Access(cur, c, MayExec); err != nil {
			return nil, "", err
		}
		if len(name) > nameMax {
			return nil, "", unix.ENAMETOOLONG
		}
		next, ok := cur.children()[name]
		if !ok {
			return nil, "", ErrNotExist
		}
		if next.mountedOn != 0 {
			next = ns.crossMounts(next, clean[:end])
		}
		if r.crosses(next, clean[:end]) {
			return nil, "", unix.EXDEV
		}
		last := end == len(clean)
		if next.Mode&fs.ModeSymlink != 0 && (!last || follow) {
			target, err := r.follow(next, clean[:max(start-1, 1)])
			if err != nil {
				return nil, "", err
			}
			if next.object != nil {
				if !last {
					return nil, "", ErrNotDir
				}
				return next.object, next.Link, nil
			}
			if !last {
				target = path.Join(target, clean[end+1:])
			}
			// A magic link's object is the end of the walk, even a link
			// (an O_PATH descriptor of one), as Linux's nd_jump_link.
			return t.walkNS(ns, c, target, follow && !(last && next.magic), depth+1)
		}
		cur, start = next, end+1
	}
	return cur, clean, nil
}

// Create adds a node at an absolute path whose parent directory exists and
// that c may write and search; the node becomes c's (ownNew).
func (t *Tree) Create(c *Cred, p string, n *Node) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.create(c, p, n)
}

func (t *Tree) create(c *Cred, p string, n *Node) error {
	dir, name := path.Split(path.Clean("/" + p))
	if name == "" || name == "." || name == ".." {
		return ErrExist
	}
	parent, _, err := t.walk(c, dir, true, 0)
	if err != nil {
		return err
	}
	if !parent.IsDir() {
		return ErrNotDir
	}
	if err := Access(parent, c, MayExec); err != nil {
		return err
	}
	if len(name) > nameMax {
		return unix.ENAMETOOLONG
	}
	if _, ok := parent.Children[name]; ok {
		return ErrExist
	}
	if c.landlocked() != nil {
		if err := t.landlockCheck(c, t.physical(c, dir), landlockMake(n.Mode)); err != nil {
			return err
		}
	}
	if err := Access(parent, c, MayWrite); err != nil {
		return err
	}
	if n.Ino == 0 {
		n.Ino = nextIno.Add(1)
	}
	if n.tree == nil {
		n.tree = t
	}
	if n.Links == 0 && !n.linkable {
		ownNew(n, parent, c)
		if n.Dev == 0 {
			n.Dev = parent.Dev // the mount it is created in
		}
	}
	parent.putChild(name, n)
	n.Links++
	n.linkable = false
	parent.MTime, parent.CTime = time.Now(), time.Now()
	if n.Links > 1 {
		n.notifyAttrib() // a hard link: the link count first, as Linux's fsnotify_link
	}
	t.fsnotify(n, parent, name, unix.IN_CREATE, 0)
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

// Link gives the node at oldp (its symbolic link's target when follow is
// set) another name, newp, for c (link(2)): EEXIST when newp exists, EPERM
// for a directory or for a file c could not hard-link (mayLink).
func (t *Tree) Link(c *Cred, oldp, newp string, follow bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, phys, err := t.walk(c, oldp, follow, 0)
	if err != nil {
		return err
	}
	if c.landlocked() != nil {
		if err := t.landlockRefer(c, n, path.Dir(phys), t.physical(c, path.Dir(path.Clean("/"+newp))), nil, false, false); err != nil {
			return err
		}
	}
	return t.link(c, n, newp)
}

// LinkNode gives n, found by a descriptor (linkat's AT_EMPTY_PATH, or
// /proc/PID/fd/N followed), the name newp. A file with no name any more
// may be named only if open(O_TMPFILE) made it without O_EXCL: ENOENT
// otherwise, as Linux refuses an inode with no link that is not
// I_LINKABLE.
func (t *Tree) LinkNode(c *Cred, n *Node, newp string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n.Links == 0 && !n.linkable && !n.IsDir() { // a directory is refused below
		return ErrNotExist
	}
	return t.link(c, n, newp)
}

// link is Link's and LinkNode's work under t.mu.
func (t *Tree) link(c *Cred, n *Node, newp string) error {
	parent, name, _, err := t.entry(c, newp)
	if err != nil {
		return err
	}
	if _, ok := parent.Children[name]; ok {
		return ErrExist
	}
	if n.Dev != parent.Dev {
		return unix.EXDEV
	}
	if err := mayLink(n, c); err != nil {
		return err
	}
	if err := mayModify(n); err != nil {
		return err // no new name for an immutable or append-only file
	}
	if n.IsDir() {
		return unix.EPERM
	}
	if err := t.create(c, newp, n); err != nil {
		return err
	}
	n.CTime = time.Now()
	return nil
}

// CreateTemp makes a regular file with no name in the directory dir, as
// open(O_TMPFILE): c needs write and search permission there, and owns
// the file, which has perm; linkable (no O_EXCL) lets linkat name it
// later. A synthetic directory (procfs, sysfs) has no such files
// (EOPNOTSUPP).
func (t *Tree) CreateTemp(c *Cred, dir string, perm fs.FileMode, linkable bool) (*Node, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	parent, _, err := t.walk(c, dir, true, 0)
	switch {
	case err != nil:
		return nil, err
	case !parent.IsDir():
		return nil, ErrNotDir
	case parent.ListDir != nil:
		return nil, unix.EOPNOTSUPP
	}
	if err := Access(parent, c, MayWrite|MayExec); err != nil {
		return nil, err
	}
	if err := ReadOnlyFS(parent); err != nil {
		return nil, err
	}
	n := &Node{Mode: perm &^ fs.ModeType, Ino: nextIno.Add(1), tree: t, Dev: parent.Dev, linkable: linkable}
	n.Touch()
	ownNew(n, parent, c)
	return n, nil
}

// Mkdir creates a directory with the permission and special bits perm.
func (t *Tree) Mkdir(c *Cred, p string, perm fs.FileMode) error {
	d := NewDir(perm)
	d.Touch()
	return t.Create(c, p, d)
}

// OpenFlags are what open does to the path: create, exclusively, truncate;
// Want is the access (MayRead, MayWrite) that an existing file must grant.
type OpenFlags struct {
	Create, Excl, Trunc, Follow bool
	Append                      bool // O_APPEND, which writing an append-only file needs
	NoAtime                     bool // O_NOATIME: the owner's (or root's) only
	Perm                        fs.FileMode
	Want                        int
}

// Open resolves p for opening by c, creating or truncating a regular file
// as the flags say. A file that exists must grant the access asked (a
// directory is never opened for writing: EISDIR); one that open creates
// is c's whatever its mode. created says that it made the file.
func (t *Tree) Open(c *Cred, p string, o OpenFlags) (n *Node, created bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, phys, err := t.walk(c, p, o.Follow, 0)
	switch {
	case err == ErrNotExist && o.Create:
		n = &Node{Mode: o.Perm &^ fs.ModeType}
		n.Touch()
		if err := t.create(c, p, n); err != nil {
			return nil, false, err
		}
		if c.landlocked() != nil {
			// Linux checks the open after making the file, which stays.
			if err := t.landlockCheck(c, t.physical(c, p), landlockOpen(n, o.Want, false)); err != nil {
				return nil, false, err
			}
		}
		return n, true, nil
	case err != nil:
		return nil, false, err
	case o.Create && o.Excl:
		return nil, false, ErrExist
	case n.IsDir() && (o.Want&MayWrite != 0 || o.Create):
		return nil, false, unix.EISDIR
	}
	if err := Access(n, c, o.Want); err != nil {
		return nil, false, err
	}
	if err := MayOpen(n, o); err != nil {
		return nil, false, err
	}
	if err := t.landlockCheck(c, phys, landlockOpen(n, o.Want, o.Trunc)); err != nil {
		return nil, false, err
	}
	if o.NoAtime && !c.Owns(n) {
		return nil, false, unix.EPERM
	}
	if o.Trunc && n.Mode.IsRegular() {
		if err := ReadOnlyFS(n); err != nil {
			return nil, false, err
		}
		n.mu.Lock()
		n.truncateLocked(0)
		n.mu.Unlock()
	}
	return n, false, nil
}

// entry finds the parent directory of p and the entry name names in it
// for c, which needs search permission there, and the entry's canonical
// path.
func (t *Tree) entry(c *Cred, p string) (parent *Node, name, canon string, err error) {
	dir, name := path.Split(path.Clean("/" + p))
	parent, dirCanon, err := t.walk(c, dir, true, 0)
	if err != nil {
		return nil, "", "", err
	}
	if !parent.IsDir() {
		return nil, "", "", ErrNotDir
	}
	if err := Access(parent, c, MayExec); err != nil {
		return nil, "", "", err
	}
	if len(name) > nameMax {
		return nil, "", "", unix.ENAMETOOLONG
	}
	return parent, name, path.Join(dirCanon, name), nil
}

// Remove unlinks p for c: a directory, which must be empty, when dir is
// set; anything else otherwise. c needs write and search permission on the
// parent, and in a sticky directory must own it or the entry (EPERM).
func (t *Tree) Remove(c *Cred, p string, dir bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	parent, name, canon, err := t.entry(c, p)
	if err != nil {
		return err
	}
	if err := ReadOnlyFS(parent); err != nil {
		return err // before the lookup, as Linux's mnt_want_write
	}
	n, ok := parent.Children[name]
	switch {
	case !ok:
		return ErrNotExist
	case dir && !n.IsDir():
		return ErrNotDir
	case !dir && n.IsDir():
		return unix.EISDIR
	}
	if c.landlocked() != nil {
		if err := t.landlockCheck(c, t.physical(c, path.Dir(path.Clean("/"+p))), landlockRemove(n)); err != nil {
			return err
		}
	}
	if err := mayDelete(parent, n, c); err != nil {
		return err
	}
	if t.nsOf(c).busyAt(n, canon) {
		return unix.EBUSY
	}
	if dir && len(n.Children) > 0 {
		return unix.ENOTEMPTY
	}
	parent.dropChild(name)
	if n.mountedOn != 0 {
		t.detachMountsOn(n) // another namespace's mount point
	}
	if n.Links--; n.Links == 0 {
		n.unlinked()
	}
	n.CTime = time.Now()
	parent.MTime, parent.CTime = n.CTime, n.CTime
	if !dir {
		n.notifyAttrib()
	}
	t.notifyIfGone(n)
	t.fsnotify(n, parent, name, unix.IN_DELETE, 0)
	return nil
}

// notifyIfGone reports IN_DELETE_SELF for a node whose last name went
// and that no description holds open (else its last close does).
func (t *Tree) notifyIfGone(n *Node) {
	if t.notify.count.Load() == 0 {
		return
	}
	n.mu.RLock()
	gone := n.Links <= 0 && n.opens == 0
	n.mu.RUnlock()
	if gone {
		t.fsnotify(n, nil, "", unix.IN_DELETE_SELF, 0)
	}
}

// Rename moves oldp to newp for c, replacing what is there as rename(2)
// does: a directory only by a directory, an empty one; never into itself.
// c needs to be allowed to delete the old entry and the one it replaces
// (or to create in the new directory), and to write a directory that
// changes parents (its "..").
func (t *Tree) Rename(c *Cred, oldp, newp string, noReplace bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	oldp, newp = path.Clean("/"+oldp), path.Clean("/"+newp)
	_, on := path.Split(oldp)
	_, nn := path.Split(newp)
	if on == "" || nn == "" || on == "." || on == ".." || nn == "." || nn == ".." {
		return unix.EBUSY
	}
	oldParent, _, oldCanon, err := t.entry(c, oldp)
	if err != nil {
		return err
	}
	if err := ReadOnlyFS(oldParent); err != nil {
		return err
	}
	n, ok := oldParent.Children[on]
	if !ok {
		return ErrNotExist
	}
	newParent, _, newCanon, err := t.entry(c, newp)
	if err != nil {
		return err
	}
	old, replacing := newParent.Children[nn]
	if replacing && noReplace {
		return ErrExist // RENAME_NOREPLACE
	}
	if c.landlocked() != nil && oldParent.Dev == newParent.Dev {
		// Linux's LSM hook comes before vfs_rename finds the same file.
		var replaced *Node
		if replacing {
			replaced = old
		}
		if err := t.landlockRefer(c, n, t.physical(c, path.Dir(oldp)), t.physical(c, path.Dir(newp)), replaced, false, true); err != nil {
			return err
		}
	}
	if old == n {
		return nil // the same file: nothing to do, nothing to check
	}
	if oldParent.Dev != newParent.Dev {
		return unix.EXDEV
	}
	ns := t.nsOf(c)
	if ns.busyAt(n, oldCanon) || (replacing && ns.busyAt(old, newCanon)) || ns.hasMountUnder(oldCanon) {
		return unix.EBUSY // the mount table names its targets by path
	}
	if err := mayDelete(oldParent, n, c); err != nil {
		return err
	}
	if replacing {
		err = mayDelete(newParent, old, c)
	} else {
		err = Access(newParent, c, MayWrite)
	}
	if err != nil {
		return err
	}
	if n.IsDir() && newParent != oldParent {
		if err := Access(n, c, MayWrite); err != nil {
			return err
		}
	}
	if n.IsDir() && strings.HasPrefix(newp, oldp+"/") {
		return unix.EINVAL
	}
	if replacing {
		switch {
		case n.IsDir() && !old.IsDir():
			return ErrNotDir
		case !n.IsDir() && old.IsDir():
			return unix.EISDIR
		case old.IsDir() && len(old.Children) > 0:
			return unix.ENOTEMPTY
		}
		if old.Links--; old.Links == 0 {
			old.unlinked()
		}
	}
	for _, moved := range []*Node{n, old} {
		if moved != nil && moved.mountedOn != 0 {
			t.detachMountsOn(moved) // another namespace's mount point
		}
	}
	oldParent.dropChild(on)
	newParent.putChild(nn, n)
	now := time.Now()
	n.CTime = now
	oldParent.MTime, oldParent.CTime, newParent.MTime, newParent.CTime = now, now, now, now
	if t.notify.count.Load() != 0 {
		cookie := t.nextCookie()
		t.fsnotify(n, oldParent, on, unix.IN_MOVED_FROM, cookie)
		t.fsnotify(n, newParent, nn, unix.IN_MOVED_TO, cookie)
		if oldParent == newParent {
			t.fsnotify(n, oldParent, on, renamedWithin, 0) // dnotify's DN_RENAME
		}
		if replacing {
			old.notifyAttrib()
			t.notifyIfGone(old)
		}
		t.fsnotify(n, nil, "", unix.IN_MOVE_SELF, 0)
	}
	return nil
}

// Exchange swaps the entries a and b for c (RENAME_EXCHANGE): both must
// exist, and c must be allowed to delete each from its directory.
func (t *Tree) Exchange(c *Cred, a, b string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, b = path.Clean("/"+a), path.Clean("/"+b)
	aDir, an, aCanon, err := t.entry(c, a)
	if err != nil {
		return err
	}
	bDir, bn, bCanon, err := t.entry(c, b)
	if err != nil {
		return err
	}
	na, okA := aDir.Children[an]
	nb, okB := bDir.Children[bn]
	if !okA || !okB {
		return ErrNotExist
	}
	if c.landlocked() != nil && aDir.Dev == bDir.Dev {
		// Linux's LSM hook comes before vfs_rename finds the same file.
		if err := t.landlockRefer(c, na, t.physical(c, path.Dir(a)), t.physical(c, path.Dir(b)), nb, true, true); err != nil {
			return err
		}
	}
	if na == nb {
		return nil
	}
	if aDir.Dev != bDir.Dev {
		return unix.EXDEV
	}
	ns := t.nsOf(c)
	if ns.busyAt(na, aCanon) || ns.busyAt(nb, bCanon) || ns.hasMountUnder(aCanon) || ns.hasMountUnder(bCanon) {
		return unix.EBUSY
	}
	if strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/") {
		return unix.EINVAL // one inside the other
	}
	if err := mayDelete(aDir, na, c); err != nil {
		return err
	}
	if err := mayDelete(bDir, nb, c); err != nil {
		return err
	}
	if aDir != bDir {
		for _, n := range []*Node{na, nb} {
			if n.IsDir() {
				if err := Access(n, c, MayWrite); err != nil {
					return err
				}
			}
		}
	}
	for _, moved := range []*Node{na, nb} {
		if moved.mountedOn != 0 {
			t.detachMountsOn(moved) // another namespace's mount point
		}
	}
	aDir.putChild(an, nb)
	bDir.putChild(bn, na)
	now := time.Now()
	na.CTime, nb.CTime = now, now
	aDir.MTime, aDir.CTime, bDir.MTime, bDir.CTime = now, now, now, now
	return nil
}

// touchChange sets the status change time (chmod, chown, xattrs).
func (n *Node) touchChange() {
	n.mu.Lock()
	n.CTime = time.Now()
	n.mu.Unlock()
	n.notifyChange()
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
