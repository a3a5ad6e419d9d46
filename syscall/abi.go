package syscall

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

// Linux's riscv64 ABI structures, laid out as the kernel's uapi headers
// lay them out (asm-generic, little-endian, LP64). Blank fields are padding
// and write as zeros. Handlers copy them with copyOutStruct/copyInStruct.

// linuxTimespec is struct timespec.
type linuxTimespec struct{ Sec, Nsec int64 }

// linuxTimeval is struct timeval.
type linuxTimeval struct{ Sec, Usec int64 }

// linuxStat is struct stat (asm-generic/stat.h).
type linuxStat struct {
	Dev     uint64
	Ino     uint64
	Mode    uint32
	Nlink   uint32
	UID     uint32
	GID     uint32
	Rdev    uint64
	_       uint64
	Size    int64
	Blksize int32
	_       int32
	Blocks  int64
	Atime   linuxTimespec
	Mtime   linuxTimespec
	Ctime   linuxTimespec
	_       [2]uint32
}

// statxTimestamp is struct statx_timestamp.
type statxTimestamp struct {
	Sec  int64
	Nsec uint32
	_    int32
}

// linuxStatx is struct statx (linux/stat.h), 256 bytes.
type linuxStatx struct {
	Mask           uint32
	Blksize        uint32
	Attributes     uint64
	Nlink          uint32
	UID            uint32
	GID            uint32
	Mode           uint16
	_              uint16
	Ino            uint64
	Size           uint64
	Blocks         uint64
	AttributesMask uint64
	Atime          statxTimestamp
	Btime          statxTimestamp
	Ctime          statxTimestamp
	Mtime          statxTimestamp
	RdevMajor      uint32
	RdevMinor      uint32
	DevMajor       uint32
	DevMinor       uint32
	MntID          uint64
	DioMemAlign    uint32
	DioOffsetAlign uint32
	_              [12]uint64
}

// linuxStatfs is struct statfs (asm-generic/statfs.h, 64-bit).
type linuxStatfs struct {
	Type    int64
	Bsize   int64
	Blocks  uint64
	Bfree   uint64
	Bavail  uint64
	Files   uint64
	Ffree   uint64
	Fsid    [2]int32
	Namelen int64
	Frsize  int64
	Flags   int64
	_       [4]int64
}

// linuxRusage is struct rusage.
type linuxRusage struct {
	Utime, Stime linuxTimeval
	Maxrss       int64
	_            [3]int64 // ixrss, idrss, isrss: not counted
	Minflt       int64
	_            [9]int64 // majflt ... nivcsw: not counted
}

// linuxTms is struct tms, in clock ticks.
type linuxTms struct{ Utime, Stime, Cutime, Cstime int64 }

// linuxEpollEvent is struct epoll_event on riscv64: not packed, so data
// sits at offset 8 (x86-64 packs it to 12 bytes).
type linuxEpollEvent struct {
	Events uint32
	_      uint32
	Data   uint64
}

// The kernel runs on riscv64, where Go lays out a structure of fixed-size
// integer fields without implicit padding exactly as C does, so an ABI
// structure is copied as its own memory (encoding/binary's reflection cost
// a fstat more than the rest of it). TestABIStructsAreCLayout checks every
// type these functions are called with.

// copyOutStruct writes an ABI structure to user memory.
func copyOutStruct[T any](t *kernel.Task, addr uint64, v T) error {
	return copyOut(t, addr, unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v)))
}

// copyOutStructs writes an array of ABI structures to user memory.
func copyOutStructs[T any](t *kernel.Task, addr uint64, v []T) error {
	var one T
	return copyOut(t, addr, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), uintptr(len(v))*unsafe.Sizeof(one)))
}

// copyInStruct reads an ABI structure from user memory into v.
func copyInStruct[T any](t *kernel.Task, addr uint64, v *T) error {
	return copyIn(t, addr, unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v)))
}

// copyInTimespec reads a struct timespec as a duration; EINVAL when it is
// negative or its nanoseconds are out of range.
func copyInTimespec(t *kernel.Task, addr uint64) (time.Duration, error) {
	var ts linuxTimespec
	if err := copyInStruct(t, addr, &ts); err != nil {
		return 0, err
	}
	if ts.Sec < 0 || ts.Nsec < 0 || ts.Nsec >= 1e9 {
		return 0, unix.EINVAL
	}
	// Beyond a century is as good as forever, and cannot overflow.
	return time.Duration(min(ts.Sec, 100*365*24*3600))*time.Second + time.Duration(ts.Nsec), nil
}

func toTimespec(t time.Time) linuxTimespec {
	if t.IsZero() {
		return linuxTimespec{}
	}
	return linuxTimespec{t.Unix(), int64(t.Nanosecond())}
}

func durationTimespec(d time.Duration) linuxTimespec {
	return linuxTimespec{int64(d / time.Second), int64(d % time.Second)}
}

func durationTimeval(d time.Duration) linuxTimeval {
	return linuxTimeval{int64(d / time.Second), int64(d % time.Second / time.Microsecond)}
}

func toStatxTimestamp(t time.Time) statxTimestamp {
	ts := toTimespec(t)
	return statxTimestamp{Sec: ts.Sec, Nsec: uint32(ts.Nsec)}
}

// statOf encodes what stat(2) reports.
func statOf(st fs.Stat) linuxStat {
	return linuxStat{Dev: st.Dev, Ino: st.Ino, Mode: st.Mode, Nlink: st.Nlink, UID: st.UID, GID: st.GID,
		Rdev: st.Rdev, Size: st.Size, Blksize: st.Blksize, Blocks: st.Blocks,
		Atime: toTimespec(st.ATime), Mtime: toTimespec(st.MTime), Ctime: toTimespec(st.CTime)}
}

// statxOf encodes what statx(2) reports: the basic fields, always all.
func statxOf(st fs.Stat) linuxStatx {
	return linuxStatx{Mask: unix.STATX_BASIC_STATS, Blksize: uint32(st.Blksize), Nlink: st.Nlink,
		UID: st.UID, GID: st.GID, Mode: uint16(st.Mode), Ino: st.Ino, Size: uint64(st.Size), Blocks: uint64(st.Blocks),
		Atime: toStatxTimestamp(st.ATime), Ctime: toStatxTimestamp(st.CTime), Mtime: toStatxTimestamp(st.MTime),
		RdevMajor: uint32(st.Rdev>>8) & 0xfff, RdevMinor: uint32(st.Rdev&0xff) | uint32(st.Rdev>>12)&^0xff,
		DevMajor: uint32(st.Dev>>8) & 0xfff, DevMinor: uint32(st.Dev&0xff) | uint32(st.Dev>>12)&^0xff}
}
