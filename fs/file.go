package fs

import (
	"io"
	"io/fs"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// File is an open file description.
type File interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	Stat() Stat
	Close() error
}

// Seeker is a File with a position that lseek moves.
type Seeker interface {
	Seek(offset int64, whence int) (int64, error)
}

// Stat is what stat(2) reports.
type Stat struct {
	Dev, Ino uint64
	Mode     uint32 // file type and permission bits, as in st_mode
	Nlink    uint32
	UID, GID uint32
	Rdev     uint64
	Size     int64
	MTime    int64
	Blksize  int32
	Blocks   int64
}

// Devices for st_dev: distinct so that (st_dev, st_ino) never collide
// between file systems.
const (
	devInitramfs = 1
	devAnon      = 13       // anonymous inodes: epoll, eventfd
	devConsole   = 5<<8 | 1 // character device 5:1, /dev/console
)

// StatNode describes a tree node.
func StatNode(n *Node) Stat {
	st := Stat{Dev: devInitramfs, Ino: n.Ino, Nlink: 1, UID: n.UID, GID: n.GID, MTime: n.MTime, Blksize: 4096}
	mode := uint32(n.Mode.Perm()) | uint32(n.Mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)>>9)
	switch {
	case n.IsDir():
		st.Mode = unix.S_IFDIR | mode
		st.Nlink = 2
		st.Size = 4096
	case n.Mode&fs.ModeSymlink != 0:
		st.Mode = unix.S_IFLNK | mode
		st.Size = int64(len(n.Link))
	default:
		st.Mode = unix.S_IFREG | mode
		n.mu.RLock()
		st.Size = int64(len(n.Data))
		n.mu.RUnlock()
	}
	st.Blocks = (st.Size + 511) / 512
	return st
}

// NodeFile is an open regular file or directory of the tree.
type NodeFile struct {
	mu       sync.Mutex
	node     *Node
	off      int64
	readable bool
	writable bool
	append   bool
}

// OpenNode opens a tree node for reading.
func OpenNode(n *Node) *NodeFile { return &NodeFile{node: n, readable: true} }

// OpenNodeMode opens a tree node with an access mode and O_APPEND.
func OpenNodeMode(n *Node, readable, writable, appendMode bool) *NodeFile {
	return &NodeFile{node: n, readable: readable, writable: writable, append: appendMode}
}

// Node is the opened node.
func (f *NodeFile) Node() *Node { return f.node }

// Offset is the file position, which getdents uses as its index.
func (f *NodeFile) Offset() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.off
}

// SetOffset moves the file position.
func (f *NodeFile) SetOffset(off int64) {
	f.mu.Lock()
	f.off = off
	f.mu.Unlock()
}

func (f *NodeFile) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	return n, err
}

// ReadAt reads at an offset without moving the position (pread).
func (f *NodeFile) ReadAt(p []byte, off int64) (int, error) {
	if f.node.IsDir() {
		return 0, unix.EISDIR
	}
	if !f.readable {
		return 0, unix.EBADF
	}
	f.node.mu.RLock()
	defer f.node.mu.RUnlock()
	if off >= int64(len(f.node.Data)) {
		return 0, nil
	}
	return copy(p, f.node.Data[off:]), nil
}

func (f *NodeFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	off := f.off
	if f.append {
		f.node.mu.RLock()
		off = int64(len(f.node.Data))
		f.node.mu.RUnlock()
	}
	n, err := f.WriteAt(p, off)
	f.off = off + int64(n)
	return n, err
}

// WriteAt writes at an offset without moving the position (pwrite).
func (f *NodeFile) WriteAt(p []byte, off int64) (int, error) {
	if !f.writable {
		return 0, unix.EBADF
	}
	if f.node.IsDir() {
		return 0, unix.EISDIR
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(f.node.Data)) {
		if end > int64(cap(f.node.Data)) {
			grown := make([]byte, end, max(end, 2*int64(cap(f.node.Data))))
			copy(grown, f.node.Data)
			f.node.Data = grown
		} else {
			f.node.Data = f.node.Data[:end]
		}
	}
	copy(f.node.Data[off:], p)
	f.node.MTime = time.Now().Unix()
	return len(p), nil
}

// Truncate sets the file's size.
func (f *NodeFile) Truncate(size int64) error {
	if !f.writable || f.node.IsDir() {
		return unix.EINVAL
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	if size <= int64(len(f.node.Data)) {
		f.node.Data = f.node.Data[:size]
	} else {
		f.node.Data = append(f.node.Data, make([]byte, size-int64(len(f.node.Data)))...)
	}
	return nil
}

func (f *NodeFile) Stat() Stat   { return StatNode(f.node) }
func (f *NodeFile) Close() error { return nil }

func (f *NodeFile) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		f.node.mu.RLock()
		offset += int64(len(f.node.Data))
		f.node.mu.RUnlock()
	default:
		return 0, unix.EINVAL
	}
	if offset < 0 {
		return 0, unix.EINVAL
	}
	f.off = offset
	return offset, nil
}

// Console is the kernel console as a character device: writes go to out,
// reads see end of file (console input is not wired yet).
type Console struct{ Out func([]byte) }

func (c Console) Read([]byte) (int, error) { return 0, nil }
func (c Console) Write(p []byte) (int, error) {
	c.Out(p)
	return len(p), nil
}
func (c Console) Close() error { return nil }
func (c Console) Stat() Stat {
	return Stat{Dev: devConsole, Ino: 1, Mode: unix.S_IFCHR | 0o620, Nlink: 1, Rdev: devConsole, Blksize: 1024}
}

// FD is one slot of a descriptor table.
type FD struct {
	File    File
	CloExec bool
}

// FDTable maps descriptors to open files. An open file (a description) may
// sit in several tables after fork; it is closed when the last descriptor
// referring to it is.
type FDTable struct {
	mu    sync.Mutex
	files []*FD
}

// MaxFDs is the descriptor limit (RLIMIT_NOFILE).
const MaxFDs = 1024

var (
	refsMu sync.Mutex
	refs   = map[File]int{}
)

func hold(f File) {
	refsMu.Lock()
	refs[f]++
	refsMu.Unlock()
}

// release drops one reference and reports whether it was the last.
func release(f File) bool {
	refsMu.Lock()
	defer refsMu.Unlock()
	refs[f]--
	if refs[f] > 0 {
		return false
	}
	delete(refs, f)
	return true
}

// Install puts f in the lowest free slot at or above min.
func (t *FDTable) Install(f File, cloexec bool, min int) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for fd := min; fd < MaxFDs; fd++ {
		if fd >= len(t.files) {
			t.files = append(t.files, make([]*FD, fd+1-len(t.files))...)
		}
		if t.files[fd] == nil {
			t.files[fd] = &FD{File: f, CloExec: cloexec}
			hold(f)
			return fd, nil
		}
	}
	return 0, unix.EMFILE
}

// Get returns the file open on fd.
func (t *FDTable) Get(fd int) (File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if fd < 0 || fd >= len(t.files) || t.files[fd] == nil {
		return nil, unix.EBADF
	}
	return t.files[fd].File, nil
}

// SetCloExec sets or clears FD_CLOEXEC on fd.
func (t *FDTable) SetCloExec(fd int, on bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if fd < 0 || fd >= len(t.files) || t.files[fd] == nil {
		return unix.EBADF
	}
	t.files[fd].CloExec = on
	return nil
}

// CloExec reports FD_CLOEXEC of fd.
func (t *FDTable) CloExec(fd int) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if fd < 0 || fd >= len(t.files) || t.files[fd] == nil {
		return false, unix.EBADF
	}
	return t.files[fd].CloExec, nil
}

// Fork returns a copy of the table for a child process: the same open
// files, each now referred to once more.
func (t *FDTable) Fork() *FDTable {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &FDTable{files: make([]*FD, len(t.files))}
	for i, fd := range t.files {
		if fd != nil {
			c.files[i] = &FD{File: fd.File, CloExec: fd.CloExec}
			hold(fd.File)
		}
	}
	return c
}

// Close closes fd. It also leaves every epoll instance of the table that
// watches fd, as the descriptor's last close does on Linux.
func (t *FDTable) Close(fd int) error {
	t.mu.Lock()
	if fd < 0 || fd >= len(t.files) || t.files[fd] == nil {
		t.mu.Unlock()
		return unix.EBADF
	}
	f := t.files[fd].File
	t.files[fd] = nil
	var epolls []*Epoll
	for _, o := range t.files {
		if o != nil {
			if e, ok := o.File.(*Epoll); ok {
				epolls = append(epolls, e)
			}
		}
	}
	t.mu.Unlock()
	for _, e := range epolls {
		e.Forget(fd, f)
	}
	if release(f) {
		return f.Close()
	}
	return nil
}

// CloseAll closes every descriptor.
func (t *FDTable) CloseAll() {
	t.mu.Lock()
	files := t.files
	t.files = nil
	t.mu.Unlock()
	for _, fd := range files {
		if fd != nil && release(fd.File) {
			fd.File.Close()
		}
	}
}
