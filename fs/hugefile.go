package fs

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// DevHugetlbfs is the device of huge page files, Linux's internal
// hugetlbfs mount (one for every size here).
const DevHugetlbfs = 17

// HugeFile is a memfd made with MFD_HUGETLB: a regular file of Linux's
// internal hugetlbfs, whose data lives in huge pages of one pool
// (mm.NewHugeFileMemory) and reaches programs through mappings. Its
// size is a multiple of the page size (ftruncate refuses others), write
// is EINVAL (hugetlbfs has none), read gives the pages' bytes or zeros.
// Not kept: seals (F_ADD_SEALS is EINVAL), fallocate, a name in a
// directory.
type HugeFile struct {
	Mem  *mm.SharedMemory
	path string // /proc/PID/fd's "/memfd:NAME (deleted)"
	ino  uint64
	uid  uint32
	gid  uint32
	perm uint32

	size atomic.Int64

	mu                  sync.Mutex // guards the position and times
	off                 int64
	mtime, ctime, atime time.Time
}

// NewHugeFile returns a huge page file of pool's pages owned by c, with
// permissions perm, that /proc/PID/fd shows as path.
func NewHugeFile(pool *mm.HugePool, c *Cred, perm uint32, path string) *HugeFile {
	f := &HugeFile{path: path, ino: nextIno.Add(1), perm: perm}
	if c != nil {
		f.uid, f.gid = c.UID, c.GID
	}
	f.Mem = mm.NewHugeFileMemory(pool, f.size.Load)
	f.mtime = time.Now()
	f.ctime, f.atime = f.mtime, f.mtime
	return f
}

// Path is what readlink of /proc/PID/fd/N gives.
func (f *HugeFile) Path() string { return f.path }

// Size is the file's size.
func (f *HugeFile) Size() int64 { return f.size.Load() }

// ReadTo reads at the position and moves it.
func (f *HugeFile) ReadTo(dst UserIO) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.readAt(dst, f.off)
	f.off += n
	return n, err
}

// ReadAtTo reads at off (pread).
func (f *HugeFile) ReadAtTo(dst UserIO, off int64) (int64, error) {
	return f.readAt(dst, off)
}

// readAt copies the file's bytes at off to dst through a page-sized
// buffer, so that no lock of the memory is held while dst faults (dst
// may be a mapping of this very file).
func (f *HugeFile) readAt(dst UserIO, off int64) (int64, error) {
	var buf [mm.PageSize]byte
	var done int64
	for dst.Len() > 0 {
		left := f.size.Load() - off
		if left <= 0 {
			break
		}
		chunk := buf[:min(int64(len(buf)), dst.Len(), left)]
		f.Mem.ReadHuge(chunk, uintptr(off))
		n, err := dst.CopyOut(chunk)
		done, off = done+int64(n), off+int64(n)
		if err != nil {
			if done == 0 {
				return 0, err
			}
			break
		}
	}
	return done, nil
}

// WriteFrom is EINVAL: hugetlbfs files have no write.
func (f *HugeFile) WriteFrom(UserIO) (int64, error) { return 0, unix.EINVAL }

// WriteAtFrom is EINVAL too (pwrite).
func (f *HugeFile) WriteAtFrom(UserIO, int64) (int64, error) { return 0, unix.EINVAL }

// Seek moves the position (SEEK_SET, SEEK_CUR, SEEK_END).
func (f *HugeFile) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += f.size.Load()
	default:
		return 0, unix.EINVAL
	}
	if offset < 0 {
		return 0, unix.EINVAL
	}
	f.off = offset
	return offset, nil
}

// Truncate sets the size, as hugetlbfs's setattr: EINVAL unless a
// multiple of the page size; pages wholly past a smaller size go back to
// the pool when nothing maps them.
func (f *HugeFile) Truncate(size int64) error {
	if size%int64(f.Mem.HugePool().Size) != 0 {
		return unix.EINVAL
	}
	f.size.Store(size)
	f.Mem.TruncateHuge(size)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mtime = time.Now()
	f.ctime = f.mtime
	return nil
}

// Grow makes the file at least size bytes long: a writable mapping
// reaching past its end extends it, as hugetlbfs's mmap does.
func (f *HugeFile) Grow(size int64) {
	for {
		old := f.size.Load()
		if old >= size || f.size.CompareAndSwap(old, size) {
			return
		}
	}
}

// Stat describes the file: a regular file whose blocks are its pages
// taken, in a page-sized st_blksize.
func (f *HugeFile) Stat() Stat {
	f.mu.Lock()
	defer f.mu.Unlock()
	pageSize := int64(f.Mem.HugePool().Size)
	return Stat{Dev: DevHugetlbfs, Ino: f.ino, Mode: unix.S_IFREG | f.perm, UID: f.uid, GID: f.gid,
		Size: f.size.Load(), ATime: f.atime, MTime: f.mtime, CTime: f.ctime,
		Blksize: int32(pageSize), Blocks: int64(f.Mem.HugeTaken()) * pageSize / 512}
}

// Close drops the file's hold of its memory; mappings keep theirs.
func (f *HugeFile) Close() error {
	f.Mem.Release()
	return nil
}
