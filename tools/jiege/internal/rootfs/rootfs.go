// Package rootfs owns jiege's root filesystems: it fetches Debian stable's
// riscv64 nginx and its apt-resolved dependency closure (pinned by
// rootfs.lock), lays out a tree with our nginx.conf and test content, packs it
// as a newc initramfs (with an optional per-run nonce archive appended), adds
// busybox, kernel modules and an /init for Debian's Linux (the "linux"
// flavour), and runs the same nginx under qemu-riscv64 on the host as the
// oracle for expected responses. The "packages" flavour is a root
// filesystem of any Debian packages and their closure, configured as their
// maintainer scripts would (users, groups, alternatives).
package rootfs

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Flavor selects what the root filesystem is for.
type Flavor string

const (
	// Ours is the filesystem our kernel boots: nginx and its closure.
	Ours Flavor = "ours"
	// Linux adds busybox, virtio kernel modules and an /init for Debian's Linux.
	Linux Flavor = "linux"
	// Packages is Options.Packages and their dependencies, nothing else.
	Packages Flavor = "packages"
)

// Options configure Build.
type Options struct {
	Flavor Flavor
	// Packages are the Debian packages of the Packages flavour (setting
	// them implies it). Their closure is pinned in the lock file the first
	// time a list is built.
	Packages []string
	BuildDir string // cache root; default DefaultBuildDir()
	Mirror   string // Debian mirror URL; default: read from the host's apt sources
	Nonce    bool   // append a fresh random file to a per-run copy of the archive
	// SmallMemory leaves the 64 MiB transfer file out, for a guest whose
	// RAM could not hold it beside everything else: the initramfs stays in
	// RAM, and QEMU refuses an -initrd that runs into the device tree it
	// puts near the top of RAM.
	SmallMemory bool
	// Init replaces /init (negative controls); Extra adds files (path inside
	// the rootfs -> content; mode 0755 for scripts ("#!") and ELF files).
	Init  []byte
	Extra map[string][]byte
	// Out is where the final archive is written. Empty: the cached archive is
	// used as is, or, with Nonce, a per-run file under <BuildDir>/rootfs/nonce
	// that the caller removes when done (Build removes any older than an hour;
	// QEMU has read its -initrd long before that).
	Out        string
	UpdateLock bool   // re-resolve every package from the mirror and rewrite the lock file
	LockFile   string // default: rootfs.lock in this package's source directory
	Log        io.Writer
}

// File is one piece of test content that a server must return.
type File struct {
	URLPath string
	Size    int64
	SHA256  string
	Content []byte // only for small files
}

// Image is a built root filesystem.
type Image struct {
	CPIO   string // newc archive for -initrd
	Kernel string // linux flavour: Debian's kernel Image (EFI-stub, for -bios default -kernel)
	Dir    string // unpacked tree (without Init/Extra overrides and without the nonce)
	Files  []File // content to check
	Nonce  *File
	// NginxVersion is the upstream version of the packaged nginx, as its
	// Server header shows it (e.g. "1.26.3").
	NginxVersion string
	// Modules lists the linux flavour's kernel modules in load order.
	Modules []string
	// Packages are the locked packages unpacked into the tree.
	Packages []LockEntry
}

//go:embed rootfs.lock
var embeddedLock []byte

// DefaultBuildDir returns <module root>/build when the working directory is
// inside this module, else "build".
func DefaultBuildDir() string {
	if root := moduleRoot(); root != "" {
		return filepath.Join(root, "build")
	}
	return "build"
}

// ModuleRoot returns the jiege source tree above the working directory,
// or "" when there is none.
func ModuleRoot() string { return moduleRoot() }

func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/jiege-go/jiege\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// sourceLockFile is where the committed lock lives in the source tree.
func sourceLockFile() string {
	if root := moduleRoot(); root != "" {
		return filepath.Join(root, "tools", "jiege", "internal", "rootfs", "rootfs.lock")
	}
	return ""
}

func (o *Options) defaults() error {
	if o.Flavor == "" {
		o.Flavor = Ours
		if len(o.Packages) > 0 {
			o.Flavor = Packages
		}
	}
	switch {
	case o.Flavor != Ours && o.Flavor != Linux && o.Flavor != Packages:
		return fmt.Errorf("unknown rootfs flavor %q (want ours, linux or packages)", o.Flavor)
	case o.Flavor == Packages && len(o.Packages) == 0:
		return errors.New("the packages flavor needs a list of packages")
	case o.Flavor != Packages && len(o.Packages) > 0:
		return fmt.Errorf("the %s flavor takes no package list", o.Flavor)
	}
	if o.BuildDir == "" {
		o.BuildDir = DefaultBuildDir()
	}
	if o.LockFile == "" {
		o.LockFile = sourceLockFile()
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// loadLock reads the lock file, falling back to the copy compiled in when
// the binary runs outside the source tree.
func loadLock(path string) (*Lock, error) {
	if path != "" {
		b, err := os.ReadFile(path)
		if err == nil {
			return ParseLock(bytes.NewReader(b))
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return ParseLock(bytes.NewReader(embeddedLock))
}

// Build produces the root filesystem, reusing the cache under
// <BuildDir>/rootfs whenever its inputs are unchanged.
func Build(ctx context.Context, o Options) (*Image, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	root, err := filepath.Abs(filepath.Join(o.BuildDir, "rootfs"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockDir(ctx, filepath.Join(root, ".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()

	var set string
	if o.Flavor == Packages {
		if set, err = PackageSet(o.Packages); err != nil {
			return nil, err
		}
	}
	f := &fetcher{root: root, mirror: o.Mirror, log: o.Log}
	lk, err := loadLock(o.LockFile)
	if err != nil {
		return nil, err
	}
	if o.UpdateLock {
		if o.LockFile == "" {
			return nil, errors.New("--update-lock needs the source tree (rootfs.lock) in or above the working directory")
		}
		sets := lk.packageSets()
		if set != "" && len(lk.Set(set)) == 0 {
			sets = append(sets, set)
		}
		if lk, err = f.updateLock(ctx, sets); err != nil {
			return nil, err
		}
		if err := writeIfChanged(o.LockFile, lk.Format(), 0o644); err != nil {
			return nil, err
		}
		fmt.Fprintf(o.Log, "rootfs: wrote %s (%d packages)\n", o.LockFile, len(lk.Entries))
	}
	var entries []LockEntry
	if o.Flavor == Packages {
		if entries, err = pinned(ctx, f, lk, set, o); err != nil {
			return nil, err
		}
	} else {
		entries = lk.For(o.Flavor)
	}
	if len(entries) == 0 {
		return nil, errors.New("rootfs.lock has no packages; run `jiege rootfs --update-lock`")
	}
	debs, err := f.ensure(ctx, entries)
	if err != nil {
		return nil, err
	}
	b := &builder{o: o, root: root, set: set, entries: entries, debs: debs}
	return b.build(ctx)
}

// pinned returns a package set's locked entries; a set not in the lock yet
// is resolved by apt and written into the lock file, so that every later
// build gets the same package files.
func pinned(ctx context.Context, f *fetcher, lk *Lock, set string, o Options) ([]LockEntry, error) {
	if es := lk.Set(set); len(es) > 0 {
		return es, nil
	}
	if o.LockFile == "" {
		return nil, fmt.Errorf("rootfs.lock has no set %q, and pinning it needs the source tree (rootfs.lock) in or above the working directory", set)
	}
	es, err := f.pinSet(ctx, set)
	if err != nil {
		return nil, err
	}
	lk.Replace(set, es)
	if err := writeIfChanged(o.LockFile, lk.Format(), 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "rootfs: pinned %s (%d packages) in %s\n", set, len(es), o.LockFile)
	return lk.Set(set), nil
}

// lockDir serialises builds sharing a cache (parallel test packages, several
// jiege processes) with an advisory file lock, polling so ctx can cancel.
func lockDir(ctx context.Context, path string) (func(), error) {
	fd, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := unix.Flock(int(fd.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { fd.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			fd.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			fd.Close()
			return nil, fmt.Errorf("waiting for the rootfs cache lock %s: %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// writeIfChanged writes a file atomically unless it already has this content.
func writeIfChanged(path string, data []byte, mode os.FileMode) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return writeAtomic(path, data, mode)
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// upstreamVersion turns a Debian version ("1.26.3-3+deb13u7", maybe with an
// epoch) into the upstream one ("1.26.3").
func upstreamVersion(v string) string {
	if _, after, ok := strings.Cut(v, ":"); ok {
		v = after
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		v = v[:i]
	}
	return v
}
