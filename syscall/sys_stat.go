package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Fstat, sysFstat)
	register(sysno.Newfstatat, sysNewfstatat)
	register(sysno.Statx, sysStatx)
	register(sysno.Faccessat, sysFaccessat)
	register(sysno.Faccessat2, sysFaccessat2)
	register(sysno.Statfs, sysStatfs)
	register(sysno.Fstatfs, sysFstatfs)
}

// sysFstat implements fstat(2).
func sysFstat(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return 0, copyOutStruct(t, a[1], statOf(d.File.Stat()))
}

// sysNewfstatat implements newfstatat(2).
func sysNewfstatat(t *kernel.Task, a Args) (uint64, error) {
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	flags := a[3]
	if flags&^statFlags != 0 {
		return 0, unix.EINVAL // Linux's vfs_statx, before the lookup
	}
	if name == "" && flags&unix.AT_EMPTY_PATH != 0 {
		return sysFstat(t, Args{a[0], a[2]})
	}
	p, err := resolve(t, int32(a[0]), name)
	if err != nil {
		return 0, err
	}
	dirOnly := namesDirectory(name)
	follow := flags&unix.AT_SYMLINK_NOFOLLOW == 0 || dirOnly
	if follow {
		if pe, d, ok := pipeOfFD(t.Kernel(), visible(t, p)); ok {
			defer d.DecRef()
			if dirOnly {
				return 0, unix.ENOTDIR
			}
			return 0, copyOutStruct(t, a[2], statOf(pe.Stat()))
		}
	}
	n, err := lookupNamed(t, t.Proc.Cred(), p, follow, dirOnly)
	if err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[2], statOf(fs.StatNode(n)))
}

// statTarget finds what a *at call with AT_EMPTY_PATH and
// AT_SYMLINK_NOFOLLOW names: the file open on dirfd for an empty path,
// otherwise the path resolved against dirfd.
func statTarget(t *kernel.Task, dirfd, pathAddr, flags uint64) (fs.Stat, *fs.Node, error) {
	name, err := copyInString(t, pathAddr)
	if err != nil {
		return fs.Stat{}, nil, err
	}
	if name == "" && flags&unix.AT_EMPTY_PATH != 0 {
		d, err := t.Proc.Files.Get(int(int32(dirfd)))
		if err != nil {
			return fs.Stat{}, nil, err
		}
		defer d.DecRef() // the stat is taken, and the node is the tree's (see nodeOf)
		return d.File.Stat(), d.Node(), nil
	}
	p, err := resolve(t, int32(dirfd), name)
	if err != nil {
		return fs.Stat{}, nil, err
	}
	dirOnly := namesDirectory(name)
	n, err := lookupNamed(t, t.Proc.Cred(), p, flags&unix.AT_SYMLINK_NOFOLLOW == 0 || dirOnly, dirOnly)
	if err != nil {
		return fs.Stat{}, nil, err
	}
	return fs.StatNode(n), n, nil
}

// The flags that fstatat(2) and statx(2) know; statxSyncType is
// AT_STATX_SYNC_TYPE, which x/sys/unix lacks.
const (
	statxSyncType = 0x6000
	statFlags     = unix.AT_EMPTY_PATH | unix.AT_SYMLINK_NOFOLLOW | unix.AT_NO_AUTOMOUNT | statxSyncType
)

// sysStatx implements statx(2): every basic field, whatever the mask asks.
func sysStatx(t *kernel.Task, a Args) (uint64, error) {
	if a[2]&^statFlags != 0 || a[2]&statxSyncType == statxSyncType || uint32(a[3])&unix.STATX__RESERVED != 0 {
		return 0, unix.EINVAL
	}
	st, n, err := statTarget(t, a[0], a[1], a[2])
	if err != nil {
		return 0, err
	}
	sx := statxOf(st)
	sx.Attributes, sx.AttributesMask = statxAttributes(t, n, a[0], a[1], a[2])
	return 0, copyOutStruct(t, a[4], sx)
}

// statxAttributes returns what statx reports in stx_attributes and
// stx_attributes_mask for n (nil: a file outside the tree): every file
// system's automount, DAX, verity and mount-root attributes, of which
// only the last can be set here, and tmpfs's append-only, immutable and no-dump
// flags (shmem_getattr).
func statxAttributes(t *kernel.Task, n *fs.Node, dirfd, pathAddr, flags uint64) (attrs, mask uint64) {
	mask = unix.STATX_ATTR_AUTOMOUNT | unix.STATX_ATTR_DAX | unix.STATX_ATTR_VERITY | unix.STATX_ATTR_MOUNT_ROOT
	if n == nil {
		return 0, mask
	}
	if n.OnTmpfs() {
		mask |= unix.STATX_ATTR_APPEND | unix.STATX_ATTR_IMMUTABLE | unix.STATX_ATTR_NODUMP
		for _, f := range [...]struct {
			flag uint32
			attr uint64
		}{
			{fs.FlagAppend, unix.STATX_ATTR_APPEND}, {fs.FlagImmutable, unix.STATX_ATTR_IMMUTABLE}, {fs.FlagNoDump, unix.STATX_ATTR_NODUMP},
		} {
			if n.Flags()&f.flag != 0 {
				attrs |= f.attr
			}
		}
	}
	if n.IsDir() {
		if p, ok := statPath(t, dirfd, pathAddr, flags); ok && t.Proc.Root.MountOf(t.Proc.MountNS(), n, p).Root == n {
			attrs |= unix.STATX_ATTR_MOUNT_ROOT
		}
	}
	return attrs, mask
}

// statPath is the canonical path statx looked at, when it names one.
func statPath(t *kernel.Task, dirfd, pathAddr, flags uint64) (string, bool) {
	name, err := copyInString(t, pathAddr)
	if err != nil {
		return "", false
	}
	if name == "" && flags&unix.AT_EMPTY_PATH != 0 {
		d, err := t.Proc.Files.Get(int(int32(dirfd)))
		if err != nil {
			return "", false
		}
		defer d.DecRef()
		nf, ok := d.NodeFile()
		if !ok {
			return "", false
		}
		return nf.Path(), true
	}
	p, err := resolve(t, int32(dirfd), name)
	if err != nil {
		return "", false
	}
	_, canon, err := t.Proc.Root.LookupPath(t.Proc.Cred(), p)
	return canon, err == nil
}

// sysFaccessat implements faccessat(2) (and access(2) through it).
func sysFaccessat(t *kernel.Task, a Args) (uint64, error) {
	return sysFaccessat2(t, Args{a[0], a[1], a[2], 0})
}

// sysFaccessat2 implements faccessat2(2): the check uses the real ids
// unless AT_EACCESS asks for the effective ones, as a set-user-ID program
// needs.
func sysFaccessat2(t *kernel.Task, a Args) (uint64, error) {
	flags := a[3]
	if a[2]&^uint64(unix.R_OK|unix.W_OK|unix.X_OK) != 0 ||
		flags&^uint64(unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL
	}
	cred := t.Proc.RealCred()
	if flags&unix.AT_EACCESS != 0 {
		cred = t.Proc.Cred()
	}
	name, err := copyInString(t, a[1])
	if err != nil {
		return 0, err
	}
	var n *fs.Node
	if name == "" && flags&unix.AT_EMPTY_PATH != 0 {
		n, err = nodeOf(t, a[0])
	} else {
		var p string
		if p, err = resolve(t, int32(a[0]), name); err == nil {
			dirOnly := namesDirectory(name)
			n, err = lookupNamed(t, cred, p, flags&unix.AT_SYMLINK_NOFOLLOW == 0 || dirOnly, dirOnly)
		}
	}
	if err != nil {
		return 0, err
	}
	return 0, fs.Access(n, cred, int(a[2]))
}

// statfsOf describes the file system a file of st is on: tree as a
// tmpfs (its size limit and what its files hold), procfs and sysfs as
// Linux reports them.
func statfsOf(tree *fs.Tree, st fs.Stat) linux.Statfs {
	const (
		tmpfsMagic = 0x01021994
		procMagic  = 0x9fa0
		sysfsMagic = 0x62656572
	)
	switch st.Dev {
	case fs.DevProc:
		return linux.Statfs{Type: procMagic, Bsize: 4096, Frsize: 4096, Namelen: 255}
	case fs.DevSysfs:
		return linux.Statfs{Type: sysfsMagic, Bsize: 4096, Frsize: 4096, Namelen: 255}
	}
	used, limit := tree.Usage()
	if size, mntUsed, ok := tree.TmpfsUsage(st.Dev); ok && size > 0 {
		limit, used = size, mntUsed // a mount with its own size=
	}
	blocks := uint64(limit) / 4096
	free := blocks - min(blocks, uint64(used)/4096)
	return linux.Statfs{Type: tmpfsMagic, Bsize: 4096, Frsize: 4096, Namelen: 255,
		Blocks: blocks, Bfree: free, Bavail: free}
}

// sysStatfs implements statfs(2).
func sysStatfs(t *kernel.Task, a Args) (uint64, error) {
	p, err := pathArg(t, cwdFD, a[0])
	if err != nil {
		return 0, err
	}
	n, err := t.Proc.Root.Lookup(t.Proc.Cred(), p, true)
	if err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[1], statfsOf(t.Proc.Root, fs.StatNode(n)))
}

// sysFstatfs implements fstatfs(2).
func sysFstatfs(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return 0, copyOutStruct(t, a[1], statfsOf(t.Proc.Root, d.File.Stat()))
}
