package fs

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Mounts. A mount attaches a file system's root directory at a directory
// (or a file, for a bind mount) of the tree. The directory it covers stays
// in its parent: a mount namespace (MountNS, mountns.go) keeps its mounts
// by the node they cover, and a walk that reaches a node some namespace
// has mounted on asks the walker's whether it has, and crosses into the
// top mount's root (".." from there is the target's parent, since walks
// go up by path). Mounts stack: the last one over a directory is the one
// seen and the first one unmounted. Nodes created in a mount take its
// device number (st_dev), which is how links and renames see that they
// would cross mounts (EXDEV).

// Mount is one mounted file system.
type Mount struct {
	ID, ParentID int
	Source       string
	Target       string // canonical path
	Type         string
	Flags        uint64 // the per-mount MS_* flags: MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_NOATIME, ...
	Options      string // the file system's own options, as Linux shows them
	Root         *Node
	RootPath     string // where Root is in its file system: "/", or a bind mount's source
	Dev          uint64

	// covered is the node the target's name holds in its parent, under
	// every mount stacked there.
	covered *Node
}

// Filesystem makes a new instance of a file system type for a mount:
// its root directory, and its options as /proc/mounts shows them, from
// mount's data string; EINVAL for options it does not take.
type Filesystem func(c *Cred, data string) (root *Node, options string, err error)

// RegisterFilesystem makes a file system type mountable by name in t
// (procfs and sysfs, which the kernel package owns).
func (t *Tree) RegisterFilesystem(name string, fsys Filesystem) {
	t.regMu.Lock()
	defer t.regMu.Unlock()
	t.filesystems[name] = fsys
}

// anonDev returns a new device number for a mount (Linux's 0:N).
func (t *Tree) anonDev() uint64 {
	t.regMu.Lock()
	defer t.regMu.Unlock()
	t.nextAnonDev++
	return t.nextAnonDev
}

// tmpfsUsage is a tmpfs mount's size= (0: none, the tree's one limit
// applies alone) and the bytes its files hold.
type tmpfsUsage struct {
	size atomic.Int64
	used atomic.Int64
	// writers counts the descriptions open for writing on its files,
	// which keep a remount from making it read-only (EBUSY).
	writers atomic.Int64
	params  *tmpfsParams // guarded by the tree's lock
	root    *Node        // its root directory, whose names go at its last umount
}

// tmpfsOf returns the usage of t's tmpfs mount with device dev, or nil.
func (t *Tree) tmpfsOf(dev uint64) *tmpfsUsage {
	if dev == 0 {
		return nil
	}
	t.regMu.Lock()
	defer t.regMu.Unlock()
	return t.tmpfsMounts[dev]
}

// TmpfsUsage returns the size= of t's tmpfs mount with device dev and
// the bytes its files hold, and whether dev is such a mount.
func (t *Tree) TmpfsUsage(dev uint64) (size, used int64, ok bool) {
	u := t.tmpfsOf(dev)
	if u == nil {
		return 0, 0, false
	}
	return u.size.Load(), u.used.Load(), true
}

// tmpfsParams are a tmpfs's options.
type tmpfsParams struct {
	size, inodes int64 // 0: not given
	mode         uint32
	uid, gid     uint32
}

// parseTmpfs reads size=, nr_inodes=, mode=, uid= and gid= into p;
// EINVAL for anything else.
func parseTmpfs(p *tmpfsParams, data string) error {
	for _, opt := range strings.Split(data, ",") {
		key, val, _ := strings.Cut(opt, "=")
		var err error
		var n uint64
		switch key {
		case "":
		case "size":
			if p.size, err = parseSize(val); err == nil {
				p.size = (p.size + 4095) &^ 4095
			}
		case "nr_inodes":
			p.inodes, err = parseSize(val)
		case "mode":
			n, err = strconv.ParseUint(val, 8, 32)
			p.mode = uint32(n & 0o7777)
		case "uid", "gid":
			n, err = strconv.ParseUint(val, 10, 32)
			if key == "uid" {
				p.uid = uint32(n)
			} else {
				p.gid = uint32(n)
			}
		default:
			return unix.EINVAL
		}
		if err != nil {
			return unix.EINVAL
		}
	}
	return nil
}

// String is the options as /proc/mounts shows them, in Linux's order,
// the mode only when it is not 1777.
func (p *tmpfsParams) String() string {
	var shown []string
	if p.size > 0 {
		shown = append(shown, fmt.Sprintf("size=%dk", p.size>>10))
	}
	if p.inodes > 0 {
		shown = append(shown, fmt.Sprintf("nr_inodes=%d", p.inodes))
	}
	if p.mode != 0o1777 {
		shown = append(shown, fmt.Sprintf("mode=%03o", p.mode))
	}
	if p.uid != 0 {
		shown = append(shown, fmt.Sprintf("uid=%d", p.uid))
	}
	if p.gid != 0 {
		shown = append(shown, fmt.Sprintf("gid=%d", p.gid))
	}
	return strings.Join(append(shown, "inode64"), ",")
}

// newTmpfs makes a tmpfs root from its options (the size is enforced as
// the mount's own limit, and the file data also counts against the
// tree's one limit).
func (t *Tree) newTmpfs(c *Cred, data string) (*Node, string, error) {
	p := &tmpfsParams{mode: 0o1777}
	if c != nil {
		p.uid, p.gid = c.UID, c.GID
	}
	if err := parseTmpfs(p, data); err != nil {
		return nil, "", err
	}
	root := NewDir(unixModeToGo(p.mode))
	root.UID, root.GID = p.uid, p.gid
	root.Dev = t.anonDev()
	root.tree = t
	root.Touch()
	t.regMu.Lock()
	u := &tmpfsUsage{params: p, root: root}
	u.size.Store(p.size)
	t.tmpfsMounts[root.Dev] = u
	t.regMu.Unlock()
	return root, p.String(), nil
}

// parseSize reads a tmpfs size: a number with an optional k, m or g.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult = 1 << 10
	case strings.HasSuffix(s, "m"), strings.HasSuffix(s, "M"):
		mult = 1 << 20
	case strings.HasSuffix(s, "g"), strings.HasSuffix(s, "G"):
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, unix.EINVAL
	}
	return n * mult, nil
}

// unixModeToGo turns permission and special bits as in st_mode into an
// io/fs mode.
func unixModeToGo(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// The flags mount(2) takes; the others are refused with EINVAL. MS_RDONLY
// makes the file system read-only (its device: Access gives EROFS), so a
// bind mount cannot be made read-only on its own.
const mountFlags = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME |
	unix.MS_NODIRATIME | unix.MS_RELATIME | unix.MS_STRICTATIME | unix.MS_SILENT

// Propagation changes (mount --make-private and the like) are accepted and
// change nothing: every mount here is private.
const propagationFlags = unix.MS_SHARED | unix.MS_PRIVATE | unix.MS_SLAVE | unix.MS_UNBINDABLE | unix.MS_REC

// Mount mounts a new file system of type fstype at target for c, in c's
// mount namespace, as mount(2): the target must resolve (ENOENT,
// EACCES...), c must be privileged (EPERM), the type known (ENODEV), the
// target a directory (ENOTDIR).
func (t *Tree) Mount(c *Cred, source, target, fstype string, flags uint64, data string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, canon, err := t.walk(c, target, true, 0)
	if err != nil {
		return err
	}
	if !c.Privileged() {
		return unix.EPERM
	}
	if n.magic {
		return ErrNotExist // Linux's procfs fd links cannot be mounted on (cant_mount)
	}
	ns := t.nsOf(c)
	flags &^= unix.MS_MGC_MSK
	if flags&unix.MS_REMOUNT != 0 {
		return t.remount(ns, n, canon, flags&^unix.MS_REMOUNT, data)
	}
	if flags&unix.MS_BIND != 0 {
		return t.bind(c, n, canon, source) // MS_RDONLY ignored, as Linux's new bind mount does
	}
	if flags&propagationFlags != 0 && flags&^(propagationFlags|unix.MS_SILENT) == 0 {
		return nil
	}
	if flags&^mountFlags != 0 {
		return unix.EINVAL
	}
	t.regMu.Lock()
	newFS, ok := t.filesystems[fstype]
	t.regMu.Unlock()
	if !ok {
		return unix.ENODEV
	}
	if flags&unix.MS_RDONLY != 0 && fstype == "devtmpfs" {
		return unix.EINVAL // every devtmpfs mount is the tree's /dev
	}
	if !n.IsDir() {
		return ErrNotDir
	}
	covered, err := t.mountPoint(ns, canon)
	if err != nil {
		return err
	}
	root, opts, err := newFS(c, data)
	if err != nil {
		return err
	}
	if root.Dev == 0 {
		root.Dev = t.anonDev()
	}
	root.tree = t
	t.attach(ns, covered, canon, &Mount{Source: source, Type: fstype, Flags: flags, Options: opts, Root: root, RootPath: "/", Dev: root.Dev})
	return nil
}

// mountPoint is the node that the mount point canon names in its parent
// directory, under any mounts there. t.mu is held.
func (t *Tree) mountPoint(ns *MountNS, canon string) (*Node, error) {
	if canon == "/" {
		return nil, unix.EBUSY // the root stays the initramfs
	}
	parent, _, err := t.walkNS(ns, nil, path.Dir(canon), true, 0)
	if err != nil {
		return nil, err
	}
	if parent.ListDir != nil {
		return nil, unix.EINVAL // a synthetic directory's entries are computed
	}
	covered, ok := parent.Children[path.Base(canon)]
	if !ok {
		return nil, ErrNotExist
	}
	return covered, nil
}

// attach puts m on top of the mounts at canon in ns, covering the node
// covered. t.mu is held.
func (t *Tree) attach(ns *MountNS, covered *Node, canon string, m *Mount) {
	t.nextMount++
	m.ID, m.ParentID, m.Target = t.nextMount+1 /* 1 is the root's */, ns.mountOf(canon).ID, canon
	ns.add(m, covered)
	t.indexReadOnly()
}

// bind makes what source names (a directory or a file) visible at canon
// too, as MS_BIND: the mount shows the source's file system with its
// mount's flags (MS_REC changes nothing: the mounts below the source are
// not repeated). t.mu is held.
func (t *Tree) bind(c *Cred, n *Node, canon, source string) error {
	src, srcCanon, err := t.walk(c, source, true, 0)
	if err != nil {
		return err
	}
	if src.IsDir() != n.IsDir() {
		return ErrNotDir
	}
	ns := t.nsOf(c)
	covered, err := t.mountPoint(ns, canon)
	if err != nil {
		return err
	}
	sm := ns.mountOf(srcCanon)
	rel := srcCanon
	if sm.Target != "/" {
		rel = strings.TrimPrefix(srcCanon, sm.Target)
	}
	t.attach(ns, covered, canon, &Mount{Source: sm.Source, Type: sm.Type, Flags: sm.Flags, Options: sm.Options,
		Root: src, Dev: sm.Dev, RootPath: path.Join(sm.RootPath, "/", rel)})
	return nil
}

// indexReadOnly rebuilds the set of read-only devices from every
// namespace's mounts. t.mu is held.
func (t *Tree) indexReadOnly() {
	ro := map[uint64]bool{}
	for ns := range t.mountNSs {
		for _, m := range ns.mounts {
			if m.Flags&unix.MS_RDONLY != 0 {
				ro[m.Dev] = true
			}
		}
	}
	t.readOnly.Store(&ro)
}

// onReadOnlyFS reports whether n belongs to a file system mounted
// read-only.
func (n *Node) onReadOnlyFS() bool {
	if n.tree == nil {
		return false
	}
	ro := n.tree.readOnly.Load()
	return ro != nil && (*ro)[n.Dev]
}

// ReadOnlyFS is EROFS for a node of a read-only file system, which no
// change of its data, its metadata or its entries may touch (Linux's
// mnt_want_write); nil otherwise.
func ReadOnlyFS(n *Node) error {
	if n.onReadOnlyFS() {
		return unix.EROFS
	}
	return nil
}

// ProcTargets returns where procfs is mounted in ns (nil: the initial
// namespace), where "self" names the caller's own directory.
func (t *Tree) ProcTargets(ns *MountNS) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.orInitial(ns).procTargets
}

// atimeFlags are the per-mount flags a remount keeps when it names none
// of them.
const atimeFlags = unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME | unix.MS_STRICTATIME

// remount changes the per-mount flags of the mount of ns whose root n is
// (they are replaced, the atime ones kept unless given) and, without
// MS_BIND, a tmpfs's size= and nr_inodes= (its mode and owner stay, as on
// Linux) and whether it is read-only, which every mount of the file
// system, in every namespace, shows. EINVAL for a directory that is no
// mount's root, for MS_RDONLY with MS_BIND (a read-only view of a
// writable file system) and for the root made read-only. t.mu is held.
func (t *Tree) remount(ns *MountNS, n *Node, canon string, flags uint64, data string) error {
	if flags&^(mountFlags|unix.MS_BIND) != 0 || flags&unix.MS_BIND != 0 && flags&unix.MS_RDONLY != 0 {
		return unix.EINVAL
	}
	if canon == "/" && n == t.Root {
		if flags&unix.MS_RDONLY != 0 {
			return unix.EINVAL
		}
		return nil // the root keeps its (default) flags
	}
	m := ns.mountAt(n, canon)
	if m == nil {
		return unix.EINVAL
	}
	if flags&unix.MS_BIND == 0 && m.Type == "tmpfs" {
		u := t.tmpfsOf(m.Dev)
		if flags&unix.MS_RDONLY != 0 && m.Flags&unix.MS_RDONLY == 0 && u.writers.Load() > 0 {
			return unix.EBUSY // a file open for writing, as Linux's sb_prepare_remount_readonly
		}
		p := *u.params
		if err := parseTmpfs(&p, data); err != nil {
			return err
		}
		p.mode, p.uid, p.gid = u.params.mode, u.params.uid, u.params.gid
		if p.size > 0 && p.size < u.used.Load() {
			return unix.EINVAL // smaller than what it holds
		}
		u.params = &p
		u.size.Store(p.size)
		m.Options = p.String()
	}
	if flags&atimeFlags == 0 {
		flags |= m.Flags & atimeFlags
	}
	if flags&unix.MS_BIND != 0 {
		flags |= m.Flags & unix.MS_RDONLY // the file system's, which a bind remount keeps
	}
	m.Flags = flags &^ unix.MS_BIND
	for other := range t.allMounts() {
		if other.Dev == m.Dev { // its bind mounts and copies show the same file system
			other.Flags = other.Flags&^unix.MS_RDONLY | m.Flags&unix.MS_RDONLY
			if m.Type == "tmpfs" {
				other.Options = m.Options
			}
		}
	}
	t.indexReadOnly()
	return nil
}

// Umount unmounts the file system last mounted at target in c's mount
// namespace, as umount2(2): EINVAL for unknown flags or a target that is
// no mount's root, EPERM unless privileged, EBUSY while a mount sits
// inside it or busy (a process's directory or open file in it) says it
// is used, unless MNT_DETACH is set.
func (t *Tree) Umount(c *Cred, target string, flags uint64, busy func(m *Mount) bool) error {
	if flags&^(unix.MNT_FORCE|unix.MNT_DETACH|unix.MNT_EXPIRE|unix.UMOUNT_NOFOLLOW) != 0 {
		return unix.EINVAL
	}
	t.mu.Lock()
	n, canon, err := t.walk(c, target, flags&unix.UMOUNT_NOFOLLOW == 0, 0)
	if err != nil {
		t.mu.Unlock()
		return err
	}
	if !c.Privileged() {
		t.mu.Unlock()
		return unix.EPERM
	}
	ns := t.nsOf(c)
	m := ns.mountAt(n, canon)
	if m == nil {
		t.mu.Unlock()
		return unix.EINVAL
	}
	if flags&unix.MNT_DETACH == 0 && ns.hasMountUnder(canon) {
		t.mu.Unlock()
		return unix.EBUSY
	}
	t.mu.Unlock()
	if flags&unix.MNT_DETACH == 0 && busy != nil && busy(m) {
		return unix.EBUSY
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// Lazily, submounts go with it, the latest first.
	for j := len(ns.mounts) - 1; j >= 0; j-- {
		sub := ns.mounts[j]
		if sub == m || strings.HasPrefix(sub.Target, canon+"/") {
			t.detach(ns, j)
		}
		if sub == m {
			break
		}
	}
	return nil
}

// detach drops mount j of ns; the file system goes with the last mount
// that shows it in any namespace: a tmpfs's files lose their names, and
// their charges go with them or at their last close. t.mu is held.
func (t *Tree) detach(ns *MountNS, j int) {
	m := ns.remove(j)
	t.indexReadOnly()
	for other := range t.allMounts() {
		if other.Dev == m.Dev {
			return // a bind mount or a copy still shows the file system
		}
	}
	t.regMu.Lock()
	u := t.tmpfsMounts[m.Dev]
	delete(t.tmpfsMounts, m.Dev)
	t.regMu.Unlock()
	if u != nil {
		forget(u.root)
	}
}

// forget drops every name in the directory tree of dir, as the last
// umount of a tmpfs does: a file's pages are given back now, or at the
// close of the last description that holds it. t.mu is held.
func forget(dir *Node) {
	for name, n := range dir.Children {
		if n.Dev != dir.Dev {
			continue
		}
		if n.IsDir() {
			forget(n)
		}
		dir.dropChild(name)
		n.mu.Lock()
		if n.Links--; n.Links <= 0 {
			n.releaseIfGoneLocked()
		}
		n.mu.Unlock()
	}
}

// Mounts returns the mount table of ns (nil: the initial namespace): the
// root first, then the mounts in the order they were made.
func (t *Tree) Mounts(ns *MountNS) []Mount {
	t.mu.Lock()
	defer t.mu.Unlock()
	ns = t.orInitial(ns)
	out := []Mount{*ns.root}
	for _, m := range ns.mounts {
		out = append(out, *m)
	}
	return out
}

// access is "ro" for a read-only mount, else "rw".
func (m *Mount) access() string {
	if m.Flags&unix.MS_RDONLY != 0 {
		return "ro"
	}
	return "rw"
}

// SuperOptions is what /proc/PID/mountinfo says of the file system itself
// (its access, then its own options), as show_sb_opts writes it.
func (m *Mount) SuperOptions() string {
	if m.Options == "" {
		return m.access()
	}
	return m.access() + "," + m.Options
}

// MountOptions is what /proc/mounts says of a mount's per-mount flags,
// "rw" first, as show_mnt_opts writes them.
func (m *Mount) MountOptions() string {
	opts := []string{m.access()}
	for _, f := range []struct {
		flag uint64
		name string
	}{{unix.MS_NOSUID, "nosuid"}, {unix.MS_NODEV, "nodev"}, {unix.MS_NOEXEC, "noexec"}, {unix.MS_NOATIME, "noatime"}, {unix.MS_NODIRATIME, "nodiratime"}} {
		if m.Flags&f.flag != 0 {
			opts = append(opts, f.name)
		}
	}
	if m.Flags&(unix.MS_NOATIME|unix.MS_STRICTATIME) == 0 && m.Type != "rootfs" {
		opts = append(opts, "relatime")
	}
	return strings.Join(opts, ",")
}
