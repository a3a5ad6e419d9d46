package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Signalfd4, sysSignalfd4)
}

// sysSignalfd4 implements signalfd4(2): with fd -1 a new signalfd for the
// signals of the mask, otherwise a new mask for the signalfd open on fd
// (EINVAL for any other file), with Linux's order of checks.
func sysSignalfd4(t *kernel.Task, a Args) (uint64, error) {
	if a[2] != sigsetSize {
		return 0, unix.EINVAL
	}
	mask, err := copyInSigset(t, a[1])
	if err != nil {
		return 0, err
	}
	flags := a[3]
	if flags&^(unix.SFD_CLOEXEC|unix.SFD_NONBLOCK) != 0 {
		return 0, unix.EINVAL
	}
	fd := int32(a[0])
	if fd == -1 {
		f := kernel.NewSignalFD(t.Proc, mask)
		n, err := t.Proc.Files.Open(f, unix.O_RDWR|uint32(flags&unix.SFD_NONBLOCK), flags&unix.SFD_CLOEXEC != 0)
		return uint64(n), err
	}
	d, err := t.Proc.Files.Get(int(fd))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	f, ok := d.File.(*kernel.SignalFD)
	if !ok {
		return 0, unix.EINVAL
	}
	f.SetMask(mask)
	return uint64(fd), nil
}

// readerOf is the read function of d's file for t: a signalfd reads the
// reading thread's signals; every other file reads alike for every thread.
func readerOf(t *kernel.Task, d *fs.Description) func(fs.UserIO) (int64, error) {
	if f, ok := d.File.(*kernel.SignalFD); ok {
		return func(dst fs.UserIO) (int64, error) { return f.Read(t, dst, d.Nonblock()) }
	}
	return d.File.ReadTo
}
