package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

// The ABI structures are abi/linux's; here they cross the user boundary,
// and the kernel's own types become them. linux.TestCallersUseCLayout
// checks every type these functions are called with.

// copyOutStruct writes an ABI structure to user memory.
func copyOutStruct[T any](t *kernel.Task, addr uint64, v T) error {
	return copyOut(t, addr, linux.AsBytes(&v))
}

// copyOutStructs writes an array of ABI structures to user memory.
func copyOutStructs[T any](t *kernel.Task, addr uint64, v []T) error {
	return copyOut(t, addr, linux.SliceAsBytes(v))
}

// copyInStruct reads an ABI structure from user memory into v.
func copyInStruct[T any](t *kernel.Task, addr uint64, v *T) error {
	return copyIn(t, addr, linux.AsBytes(v))
}

// copyInTimespec reads a struct timespec as a duration; EINVAL when it is
// negative or its nanoseconds are out of range.
func copyInTimespec(t *kernel.Task, addr uint64) (time.Duration, error) {
	var ts linux.Timespec
	if err := copyInStruct(t, addr, &ts); err != nil {
		return 0, err
	}
	if ts.Sec < 0 || ts.Nsec < 0 || ts.Nsec >= 1e9 {
		return 0, unix.EINVAL
	}
	// Beyond a century is as good as forever, and cannot overflow.
	return time.Duration(min(ts.Sec, 100*365*24*3600))*time.Second + time.Duration(ts.Nsec), nil
}

func toStatxTimestamp(t time.Time) linux.StatxTimestamp {
	ts := linux.TimespecOf(t)
	return linux.StatxTimestamp{Sec: ts.Sec, Nsec: uint32(ts.Nsec)}
}

// statOf encodes what stat(2) reports.
func statOf(st fs.Stat) linux.Stat {
	return linux.Stat{Dev: st.Dev, Ino: st.Ino, Mode: st.Mode, Nlink: st.Nlink, UID: st.UID, GID: st.GID,
		Rdev: st.Rdev, Size: st.Size, Blksize: st.Blksize, Blocks: st.Blocks,
		Atime: linux.TimespecOf(st.ATime), Mtime: linux.TimespecOf(st.MTime), Ctime: linux.TimespecOf(st.CTime)}
}

// statxOf encodes what statx(2) reports: the basic fields, always all.
func statxOf(st fs.Stat) linux.Statx {
	return linux.Statx{Mask: unix.STATX_BASIC_STATS, Blksize: uint32(st.Blksize), Nlink: st.Nlink,
		UID: st.UID, GID: st.GID, Mode: uint16(st.Mode), Ino: st.Ino, Size: uint64(st.Size), Blocks: uint64(st.Blocks),
		Atime: toStatxTimestamp(st.ATime), Ctime: toStatxTimestamp(st.CTime), Mtime: toStatxTimestamp(st.MTime),
		RdevMajor: uint32(st.Rdev>>8) & 0xfff, RdevMinor: uint32(st.Rdev&0xff) | uint32(st.Rdev>>12)&^0xff,
		DevMajor: uint32(st.Dev>>8) & 0xfff, DevMinor: uint32(st.Dev&0xff) | uint32(st.Dev>>12)&^0xff}
}
