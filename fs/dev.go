package fs

import (
	"io/fs"
	"sync"

	"golang.org/x/sys/unix"
)

// Character devices: nodes of the tree that open a driver's file instead
// of their data, found by major and minor number as on Linux.

// Mkdev encodes a device number as Linux's st_rdev does (new_encode_dev).
func Mkdev(major, minor uint32) uint64 {
	return uint64(minor&0xff) | uint64(major)<<8 | uint64(minor&^0xff)<<12
}

// deviceRegistry is a tree's drivers by device number.
type deviceRegistry struct {
	mu   sync.RWMutex
	open map[uint64]func() (File, error)
}

// RegisterDevice makes t's character device major:minor open with open.
func (t *Tree) RegisterDevice(major, minor uint32, open func() (File, error)) {
	t.devices.mu.Lock()
	t.devices.open[Mkdev(major, minor)] = open
	t.devices.mu.Unlock()
}

// Console is the terminal behind /dev/console (5:1), nil when the kernel
// registered none: the only terminal that can be a controlling one.
func (t *Tree) Console() *TTY {
	t.devices.mu.RLock()
	open := t.devices.open[Mkdev(5, 1)]
	t.devices.mu.RUnlock()
	if open == nil {
		return nil
	}
	f, err := open()
	if err != nil {
		return nil
	}
	tty, _ := f.(*TTY)
	return tty
}

// OpenDevice opens the character device node n of t, found at path p:
// ENXIO when no driver has its number, as on Linux.
func (t *Tree) OpenDevice(n *Node, p string) (File, error) {
	t.devices.mu.RLock()
	open := t.devices.open[n.Rdev]
	t.devices.mu.RUnlock()
	if open == nil {
		return nil, unix.ENXIO
	}
	f, err := open()
	if err != nil {
		return nil, err
	}
	return &deviceFile{File: f, node: n, path: p}, nil
}

// deviceFile is an open device: the driver's file, stat'ed as its node.
type deviceFile struct {
	File
	node *Node
	path string
}

func (d *deviceFile) Stat() Stat { return StatNode(d.node) }

// Path is the path the device was opened by (/proc/PID/fd shows it).
func (d *deviceFile) Path() string { return d.path }

// IsDevice reports whether n is a character device node.
func (n *Node) IsDevice() bool { return n.Mode&fs.ModeCharDevice != 0 }

// IsBlockDevice reports whether n is a block device node (no driver
// serves one: opening it is ENXIO).
func (n *Node) IsBlockDevice() bool {
	return n.Mode&fs.ModeDevice != 0 && n.Mode&fs.ModeCharDevice == 0
}

// NewBlockDevice returns a block device node.
func NewBlockDevice(perm fs.FileMode, rdev uint64) *Node {
	return &Node{Mode: fs.ModeDevice | perm.Perm(), Rdev: rdev, Ino: nextIno.Add(1)}
}

// NewDevice returns a character device node.
func NewDevice(perm fs.FileMode, rdev uint64) *Node {
	return &Node{Mode: fs.ModeDevice | fs.ModeCharDevice | perm.Perm(), Rdev: rdev, Ino: nextIno.Add(1)}
}

// The memory devices of Linux's major 1.
type nullDev struct{}

func (nullDev) ReadTo(dst UserIO) (int64, error) {
	return ReadStaged(dst, func([]byte) (int, error) { return 0, nil })
}
func (nullDev) WriteFrom(src UserIO) (int64, error) {
	return WriteStaged(src, func(p []byte) (int, error) { return len(p), nil })
}
func (nullDev) Close() error { return nil }
func (nullDev) Stat() Stat   { return Stat{} }

type zeroDev struct{ nullDev }

// AnonymousMapping is a device whose mapping is anonymous memory, as
// /dev/zero's is on Linux (private; shmem_zero_setup for MAP_SHARED).
type AnonymousMapping interface{ MapsAnonymous() }

func (zeroDev) MapsAnonymous() {}

// MapsAnonymous reports whether the file open on d maps as anonymous
// memory (AnonymousMapping).
func (d *Description) MapsAnonymous() bool {
	f := d.File
	if dev, ok := f.(*deviceFile); ok {
		f = dev.File
	}
	_, ok := f.(AnonymousMapping)
	return ok
}

func (zeroDev) ReadTo(dst UserIO) (int64, error) {
	return ReadStaged(dst, func(p []byte) (int, error) {
		clear(p)
		return len(p), nil
	})
}

type fullDev struct{ zeroDev }

func (fullDev) WriteFrom(src UserIO) (int64, error) {
	return WriteStaged(src, func([]byte) (int, error) { return 0, unix.ENOSPC })
}

type randomDev struct {
	nullDev
	fill func([]byte)
}

func (r randomDev) ReadTo(dst UserIO) (int64, error) {
	return ReadStaged(dst, func(p []byte) (int, error) {
		r.fill(p)
		return len(p), nil
	})
}

// userfaultfdDev is /dev/userfaultfd, whose USERFAULTFD_IOC_NEW ioctl
// opens a userfaultfd (the system call layer's).
type userfaultfdDev struct{ nullDev }

// UserfaultfdDevice reports whether d is /dev/userfaultfd.
func (d *Description) UserfaultfdDevice() bool {
	_, ok := Base(d.File).(userfaultfdDev)
	return ok
}

// RegisterMemoryDevices registers t's /dev/null, zero, full, random and
// urandom (random bytes come from fill), and /dev/userfaultfd.
func (t *Tree) RegisterMemoryDevices(fill func([]byte)) {
	t.RegisterDevice(10, 126, func() (File, error) { return userfaultfdDev{}, nil })
	t.RegisterDevice(1, 3, func() (File, error) { return nullDev{}, nil })
	t.RegisterDevice(1, 5, func() (File, error) { return zeroDev{}, nil })
	t.RegisterDevice(1, 7, func() (File, error) { return fullDev{}, nil })
	t.RegisterDevice(1, 8, func() (File, error) { return randomDev{fill: fill}, nil })
	t.RegisterDevice(1, 9, func() (File, error) { return randomDev{fill: fill}, nil })
}

// devNodes are the nodes Linux's devtmpfs offers that programs expect (a
// table read only).
var devNodes = []struct {
	name         string
	perm         fs.FileMode
	major, minor uint32
}{
	{"null", 0o666, 1, 3}, {"zero", 0o666, 1, 5}, {"full", 0o666, 1, 7},
	{"random", 0o666, 1, 8}, {"urandom", 0o666, 1, 9},
	{"tty", 0o666, 5, 0}, {"console", 0o600, 5, 1},
	{"userfaultfd", 0o600, 10, 126},
}

// PopulateDev gives the tree a /dev with the standard device nodes and
// the /proc/self/fd links' usual names (/dev/stdin, stdout, stderr, fd),
// keeping whatever the initramfs put there.
//
// That /dev is the one devtmpfs: mounting devtmpfs anywhere (and at /dev
// at boot) mounts it, as Linux's devtmpfs mounts all show one tree.
func (t *Tree) PopulateDev() error {
	if _, err := t.Lookup(nil, "/dev", true); err != nil {
		if err := t.Mkdir(nil, "/dev", 0o755); err != nil {
			return err
		}
	}
	dev, err := t.Lookup(nil, "/dev", true)
	if err != nil {
		return err
	}
	t.mu.Lock()
	setDev(dev, DevDevtmpfs)
	t.mu.Unlock()
	t.RegisterFilesystem("devtmpfs", func(*Cred, string) (*Node, string, error) { return dev, "mode=755", nil })
	for _, d := range devNodes {
		p := "/dev/" + d.name
		if n, err := t.Lookup(nil, p, false); err == nil && n.IsDevice() {
			continue
		}
		t.Remove(nil, p, false)
		if err := t.Create(nil, p, NewDevice(d.perm, Mkdev(d.major, d.minor))); err != nil {
			return err
		}
	}
	return nil
}

// setDev gives n and what it holds the device number dev, where they have
// none of their own. The tree's lock is held.
func setDev(n *Node, dev uint64) {
	if n.Dev != 0 {
		return
	}
	n.Dev = dev
	for _, c := range n.Children {
		setDev(c, dev)
	}
}
