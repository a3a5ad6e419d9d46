package linux

// Stat is struct stat (asm-generic/stat.h).
type Stat struct {
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
	Atime   Timespec
	Mtime   Timespec
	Ctime   Timespec
	_       [2]uint32
}

// StatxTimestamp is struct statx_timestamp.
type StatxTimestamp struct {
	Sec  int64
	Nsec uint32
	_    int32
}

// Statx is struct statx (linux/stat.h), 256 bytes.
type Statx struct {
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
	Atime          StatxTimestamp
	Btime          StatxTimestamp
	Ctime          StatxTimestamp
	Mtime          StatxTimestamp
	RdevMajor      uint32
	RdevMinor      uint32
	DevMajor       uint32
	DevMinor       uint32
	MntID          uint64
	DioMemAlign    uint32
	DioOffsetAlign uint32
	_              [12]uint64
}

// Statfs is struct statfs (asm-generic/statfs.h, 64-bit).
type Statfs struct {
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

// Flock is struct flock.
type Flock struct {
	Type   int16
	Whence int16
	_      int32
	Start  int64
	Len    int64
	Pid    int32
	_      int32
}

// InotifyEvent is struct inotify_event without its name, which follows
// it padded with NULs to Len bytes.
type InotifyEvent struct {
	Wd     int32
	Mask   uint32
	Cookie uint32
	Len    uint32
}

// SizeofInotifyEvent is sizeof(struct inotify_event).
const SizeofInotifyEvent = 16

// FOwnerEx is struct f_owner_ex (F_GETOWN_EX, F_SETOWN_EX).
type FOwnerEx struct {
	Type int32
	Pid  int32
}

// f_owner_ex's types.
const (
	FOwnerTID  = 0
	FOwnerPID  = 1
	FOwnerPGRP = 2
)

// Dirent64Len is the length of a struct linux_dirent64 record for a name:
// the fixed part (d_ino, d_off, d_reclen, d_type), the name and its NUL,
// padded to 8 bytes.
func Dirent64Len(name string) int { return (19 + len(name) + 1 + 7) &^ 7 }

// AppendDirent64 appends a struct linux_dirent64 record.
func AppendDirent64(b []byte, ino uint64, off int64, typ uint8, name string) []byte {
	reclen := Dirent64Len(name)
	b = Append(b, ino)
	b = Append(b, off)
	b = Append(b, uint16(reclen))
	b = append(b, typ)
	b = append(b, name...)
	return append(b, make([]byte, reclen-19-len(name))...)
}

// Iovec is struct iovec.
type Iovec struct{ Base, Len uint64 }

// OpenHow is struct open_how, openat2(2)'s argument (its size at
// version 0, the one this kernel knows).
type OpenHow struct {
	Flags   uint64
	Mode    uint64
	Resolve uint64
}

// KcmpEpollSlot is struct kcmp_epoll_slot: kcmp(2)'s KCMP_EPOLL_TFD names
// the epoll descriptor in the second process, the watched descriptor
// number and which of the watches with that number.
type KcmpEpollSlot struct {
	EFD, TFD uint32
	TOff     uint64
}

// PollFd is struct pollfd.
type PollFd struct {
	FD      int32
	Events  int16
	Revents int16
}

// EpollEvent is struct epoll_event on riscv64: not packed, so data sits at
// offset 8 (x86-64 packs it to 12 bytes).
type EpollEvent struct {
	Events uint32
	_      uint32
	Data   uint64
}

// Winsize is struct winsize.
type Winsize struct{ Row, Col, Xpixel, Ypixel uint16 }

// Termios is struct termios (asm-generic, NCCS 19).
type Termios struct {
	Iflag, Oflag, Cflag, Lflag uint32
	Line                       uint8
	CC                         [19]uint8
}
