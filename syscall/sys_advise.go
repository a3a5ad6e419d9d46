package syscall

import (
	"math"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Fallocate, sysFallocate)
	register(sysno.Fadvise64, sysFadvise64)
}

// Linux's fallocate modes (FALLOC_FL_*).
const (
	fallocCollapseRange = 0x08
	fallocZeroRange     = 0x10
	fallocInsertRange   = 0x20
	fallocUnshareRange  = 0x40
	fallocModeMask      = fs.FallocPunchHole | fallocCollapseRange | fallocZeroRange | fallocInsertRange | fallocUnshareRange
)

// sysFallocate implements fallocate(2) with vfs_fallocate's checks in
// Linux 6.12's order, then the file system's (tmpfs: allocation,
// KEEP_SIZE and PUNCH_HOLE, else EOPNOTSUPP).
func sysFallocate(t *kernel.Task, a Args) (uint64, error) {
	mode, off, length := uint32(a[1]), int64(a[2]), int64(a[3])
	if off < 0 || length <= 0 {
		return 0, unix.EINVAL
	}
	if mode&^(fallocModeMask|fs.FallocKeepSize) != 0 {
		return 0, unix.EOPNOTSUPP
	}
	// One mode at most (none: allocate); punching keeps the size,
	// collapsing and inserting change it.
	switch mode & fallocModeMask {
	case 0, fallocUnshareRange, fallocZeroRange:
	case fs.FallocPunchHole:
		if mode&fs.FallocKeepSize == 0 {
			return 0, unix.EOPNOTSUPP
		}
	case fallocCollapseRange, fallocInsertRange:
		if mode&fs.FallocKeepSize != 0 {
			return 0, unix.EOPNOTSUPP
		}
	default:
		return 0, unix.EOPNOTSUPP
	}
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if !d.Writable() {
		return 0, unix.EBADF
	}
	if _, err := d.PipeSize(); err == nil {
		return 0, unix.ESPIPE
	}
	f, ok := d.NodeFile()
	if !ok {
		return 0, unix.ENODEV
	}
	if err := fs.MayAllocate(f.Node(), mode&^fs.FallocKeepSize == 0); err != nil {
		return 0, err
	}
	if off > math.MaxInt64-length {
		return 0, unix.EFBIG
	}
	// tmpfs checks RLIMIT_FSIZE for an allocation, with KEEP_SIZE too.
	if mode&fs.FallocPunchHole == 0 {
		if err := checkFileSizeLimit(t, f, off+length); err != nil {
			return 0, err
		}
	}
	return 0, f.Allocate(mode, off, length)
}

// sysFadvise64 implements fadvise64(2) as Linux's generic_fadvise on a
// file system without a backing device (tmpfs): any known advice is
// taken and changes nothing; EBADF, ESPIPE for a pipe, EINVAL for a
// negative length or unknown advice.
func sysFadvise64(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if _, err := d.PipeSize(); err == nil {
		return 0, unix.ESPIPE
	}
	if int64(a[2]) < 0 || a[3] > unix.FADV_NOREUSE {
		return 0, unix.EINVAL
	}
	return 0, nil
}
