package fs

import (
	"io"
	"io/fs"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// File is what a description opens: a regular file, a pipe, a socket.
// ReadTo and WriteFrom never block: they return unix.EAGAIN when they
// would, and the system call layer waits for readiness (Waitable) unless
// the description is non-blocking. Each call is given at most IOChunk
// bytes.
type File interface {
	// ReadTo copies what the file has, up to dst.Len() bytes, to dst and
	// returns how many: 0 at end of file. An error comes only with none
	// copied; a copy that faults after some bytes returns those (the
	// file takes no more than it delivered).
	ReadTo(dst UserIO) (int64, error)
	// WriteFrom writes what fits of src's bytes and returns how many
	// the file took; a partial write returns the bytes written and nil
	// or an error.
	WriteFrom(src UserIO) (int64, error)
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
	// Times of last access, modification and status change.
	ATime, MTime, CTime time.Time
	Blksize             int32
	Blocks              int64
}

// Devices for st_dev: distinct so that (st_dev, st_ino) never collide
// between file systems.
const (
	devInitramfs = 1
	devAnon      = 13       // anonymous inodes: epoll, eventfd
	devPipes     = 12       // pipefs
	devConsole   = 5<<8 | 1 // character device 5:1, /dev/console
)

// bogoDirentSize is what an entry adds to a tmpfs directory's size.
const bogoDirentSize = 20

// StatNode describes a tree node.
func StatNode(n *Node) Stat {
	dev := uint64(devInitramfs)
	if n.Dev != 0 {
		dev = n.Dev
	}
	nlink := uint32(max(n.Links, 1))
	if n.memfd || n.Links == 0 && n.tree != nil {
		nlink = 0 // never named (a memfd, O_TMPFILE's), or unlinked
	}
	st := Stat{Dev: dev, Ino: n.Ino, Nlink: nlink, UID: n.UID, GID: n.GID,
		ATime: n.ATime, MTime: n.MTime, CTime: n.CTime, Blksize: 4096}
	mode := UnixPerm(n.Mode)
	switch {
	case n.IsDir():
		st.Mode = unix.S_IFDIR | mode
		st.Nlink = uint32(2 + max(n.subdirs, 0))
		if n.Dev != DevProc && n.Dev != DevSysfs {
			// tmpfs's: 20 bytes an entry, "." and ".." counted, and no
			// blocks (Linux's BOGO_DIRENT_SIZE); /proc's and /sys's are 0.
			st.Size = bogoDirentSize * int64(2+len(n.Children))
		}
		return st
	case n.Mode&fs.ModeSymlink != 0:
		st.Mode = unix.S_IFLNK | mode
		st.Size = int64(len(n.Link))
	case n.IsDevice():
		st.Mode = unix.S_IFCHR | mode
		st.Rdev = n.Rdev
	case n.IsBlockDevice():
		st.Mode = unix.S_IFBLK | mode
		st.Rdev = n.Rdev
	case n.Mode&fs.ModeSocket != 0:
		st.Mode = unix.S_IFSOCK | mode
	case n.IsFIFO():
		st.Mode = unix.S_IFIFO | mode
	default:
		st.Mode = unix.S_IFREG | mode
		n.mu.RLock()
		st.Size = n.sizeLocked()
		st.Blocks = (st.Size + 511) / 512
		if n.written != nil { // holes take no blocks
			st.Blocks = int64(len(n.written.pages)) * pageSize / 512
		}
		n.mu.RUnlock()
		return st
	}
	st.Blocks = (st.Size + 511) / 512
	return st
}

// NodeFile is an open regular file or directory of the tree. Its
// description checks the access mode; it keeps the position and O_APPEND.
type NodeFile struct {
	mu     sync.Mutex
	tree   *Tree // whose lock table holds the description's locks
	node   *Node
	path   string
	off    int64
	append bool
	// counted: the node counts this open (a tree file's, not a snapshot's),
	// and as a writer when writable.
	counted, writable bool
	location          bool        // an O_PATH open: no close event
	keeps             OpenCounter // what the file keeps while open (a namespace)
	viewer            any         // who opened a synthetic file, whom its writes are for
	// opener is who opened it, whom events without another actor (a
	// close) name; quiet: a fanotify event's file, which reports nothing.
	opener Actor
	quiet  bool
	// spare is the description made with the file, which NewDescription
	// takes (nodeOpen); nil once taken.
	spare *Description
}

// nodeOpen is a tree file made with the description it will be open in,
// as one object, as Linux's struct file is one: an open allocates one
// object for both.
type nodeOpen struct {
	file NodeFile
	desc Description
}

// OpenCounter is an object a synthetic file is bound to that its open
// files keep (a namespace, whose /proc/PID/ns file keeps it).
type OpenCounter interface {
	FileOpened()
	FileClosed()
}

// OpenNode opens a node of t found at path (openat uses the path of a
// directory as the base of relative names). A synthetic file is opened on
// a snapshot of its contents.
func (t *Tree) OpenNode(n *Node, path string) *NodeFile { return t.OpenNodeFor(n, path, nil) }

// OpenNodeFor is OpenNode for a viewer, whom a synthetic file's contents
// and writes may depend on (NewGeneratedFor, NewSettingFor).
func (t *Tree) OpenNodeFor(n *Node, path string, viewer any) *NodeFile {
	o := new(nodeOpen)
	f := &o.file
	f.tree, f.path, f.spare = t, path, &o.desc
	if n.Generate != nil {
		store := n.Store
		if store == nil {
			// A file with nothing to write to takes no write, as a
			// Linux proc file without a write method (EINVAL).
			store = func(any, []byte) error { return unix.EINVAL }
		}
		n = &Node{Mode: n.Mode, UID: n.UID, GID: n.GID, ATime: n.ATime, MTime: n.MTime, CTime: n.CTime,
			Ino: n.Ino, Dev: n.Dev, Links: n.Links, Data: n.Generate(viewer), Store: store, Bound: n.Bound}
		if c, ok := n.Bound.(OpenCounter); ok {
			c.FileOpened()
			f.keeps = c
		} else {
			f.viewer = viewer
		}
	} else if n.Mode.IsRegular() {
		n.mu.Lock()
		n.opens++
		n.mu.Unlock()
		f.counted = true
	}
	f.node = n
	return f
}

// Path is where the node was opened.
func (f *NodeFile) Path() string { return f.path }

// OpenedAs counts a writable open of a tree file among its node's
// writers (which leases look at).
func (f *NodeFile) OpenedAs(flags uint32) {
	f.location = flags&unix.O_PATH != 0
	if !f.counted || flags&unix.O_ACCMODE == unix.O_RDONLY || f.location {
		return
	}
	f.writable = true
	f.node.mu.Lock()
	f.node.writers++
	f.node.mu.Unlock()
	if f.tree != nil {
		if u := f.tree.tmpfsOf(f.node.Dev); u != nil {
			u.writers.Add(1)
		}
	}
}

// SetStatusFlags takes O_APPEND from the description.
func (f *NodeFile) SetStatusFlags(flags uint32) {
	f.mu.Lock()
	f.append = flags&unix.O_APPEND != 0
	f.mu.Unlock()
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

// ReadTo reads at the file position and moves it past what was read.
func (f *NodeFile) ReadTo(dst UserIO) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.ReadAtTo(dst, f.off)
	f.off += n
	return n, err
}

// ReadAtTo reads at an offset into dst without moving the position
// (pread). A buffer whose first byte is unwritable is EFAULT before
// anything else, as it was when reads were staged. The node's lock is
// held only while its bytes are found: the copy to user memory may fault
// in a shared mapping of this very file, whose fault takes the lock. The
// pages found stay the file's or are dropped by a truncate, never reused,
// so a write meanwhile may show in part, as a read racing a write may on
// Linux.
func (f *NodeFile) ReadAtTo(dst UserIO, off int64) (int64, error) {
	who := actorOf(dst)
	if who == nil {
		who = f.opener
	}
	if err := f.permission(unix.FAN_ACCESS_PERM, who); err != nil {
		return 0, err
	}
	n, err := f.readAtTo(dst, off)
	if n > 0 {
		f.fsnotifyBy(unix.IN_ACCESS, who)
	}
	return n, err
}

func (f *NodeFile) readAtTo(dst UserIO, off int64) (int64, error) {
	want := int(min(dst.Len(), IOChunk))
	if want > 0 && dst.Writable(1) == 0 {
		return 0, unix.EFAULT
	}
	if read := f.node.ReadInPlace; read != nil {
		stage := stagingBufs.Get().(*[IOChunk]byte)
		defer stagingBufs.Put(stage)
		n, err := read(stage[:want], off)
		if err != nil {
			return 0, err
		}
		done, err := dst.CopyOut(stage[:n])
		if done > 0 {
			err = nil
		}
		return int64(done), err
	}
	var at [IOChunk/pageSize + 1][]byte
	stage := stagingBufs.Get().(*[IOChunk]byte)
	defer stagingBufs.Put(stage)
	spans, err := f.spans(at[:0], off, want, stage)
	if err != nil {
		return 0, err
	}
	done := int64(0)
	for _, b := range spans {
		n, err := dst.CopyOut(b)
		done += int64(n)
		if err != nil {
			if done == 0 {
				return 0, err
			}
			break
		}
	}
	return done, nil
}

// spans appends the file's bytes [off, off+want), clamped to its end, as
// they sit in memory: its pages, zeros for a hole, the image it was made
// with; a file on a root disk is read into stage.
func (f *NodeFile) spans(spans [][]byte, off int64, want int, stage *[IOChunk]byte) ([][]byte, error) {
	if f.node.IsDir() {
		return nil, unix.EISDIR
	}
	n := f.node
	n.mu.RLock()
	if n.mapped != nil { // stores through shared mappings come first
		n.mu.RUnlock()
		n.mu.Lock()
		defer n.mu.Unlock()
		n.pullMapped()
	} else {
		defer n.mu.RUnlock()
	}
	if off < 0 {
		return nil, unix.EINVAL
	}
	w := n.written
	switch {
	case w == nil && n.disk != nil:
		k, err := n.disk.readAt(stage[:want], off)
		if err != nil {
			return nil, err
		}
		return append(spans, stage[:k]), nil
	case w == nil:
		if off >= int64(len(n.Data)) {
			return spans, nil
		}
		return append(spans, n.Data[off:off+min(int64(want), int64(len(n.Data))-off)]), nil
	}
	end := min(off+int64(want), w.size)
	for at := off; at < end; {
		in := at % pageSize
		k := min(end-at, pageSize-in)
		if pg := w.pages[at/pageSize]; pg != nil {
			spans = append(spans, pg[in:in+k])
		} else {
			spans = append(spans, zeroPage[:k])
		}
		at += k
	}
	return spans, nil
}

// zeroPage is what a hole reads; nothing writes it.
var zeroPage page

// ReadAt reads at an offset into p without moving the position.
func (f *NodeFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.readAt(p, off)
	if n > 0 {
		f.fsnotify(unix.IN_ACCESS)
	}
	return n, err
}

func (f *NodeFile) readAt(p []byte, off int64) (int, error) {
	if f.node.IsDir() {
		return 0, unix.EISDIR
	}
	f.node.mu.RLock()
	if f.node.mapped != nil { // stores through shared mappings come first
		f.node.mu.RUnlock()
		f.node.mu.Lock()
		defer f.node.mu.Unlock()
		f.node.pullMapped()
	} else {
		defer f.node.mu.RUnlock()
	}
	if off < 0 {
		return 0, unix.EINVAL
	}
	return f.node.readAtLocked(p, off)
}

// WriteFrom writes at the file position (at the end with O_APPEND) and
// moves it past what was written, up to the writer's file size limit. The
// bytes are staged, as a copy from user memory must not run under the
// node's lock (see ReadAtTo); those copied before a fault are written, as
// on Linux.
func (f *NodeFile) WriteFrom(src UserIO) (int64, error) {
	return WriteCopied(src, func(p []byte) (int, error) { return f.write(src, p) })
}

func (f *NodeFile) write(src UserIO, p []byte) (int, error) {
	if f.node.Store != nil {
		return f.store(p)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	off := f.off
	if f.append {
		off = f.end()
	}
	p, err := limitWrite(src, p, off)
	if err != nil {
		return 0, err
	}
	n, err := f.WriteAt(p, off)
	f.off = off + int64(n)
	return n, err
}

// WriteAtFrom writes src at an offset without moving the position
// (pwrite), staged and limited as WriteFrom is. With O_APPEND it writes
// at the end whatever the offset, as Linux does (pwrite(2), BUGS).
func (f *NodeFile) WriteAtFrom(src UserIO, off int64) (int64, error) {
	return WriteCopied(src, func(p []byte) (int, error) {
		if f.node.Store != nil {
			return f.store(p)
		}
		if f.appending() {
			off = f.end()
		}
		p, err := limitWrite(src, p, off)
		if err != nil {
			return 0, err
		}
		return f.WriteAt(p, off)
	})
}

// store hands a write to a setting, which takes all of it or fails.
func (f *NodeFile) store(p []byte) (int, error) {
	if err := f.node.Store(f.viewer, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// appending reports O_APPEND.
func (f *NodeFile) appending() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.append
}

// end is the file's size: where an O_APPEND write goes.
func (f *NodeFile) end() int64 {
	f.node.mu.RLock()
	defer f.node.mu.RUnlock()
	return f.node.sizeLocked()
}

// WriteAt writes p at an offset without moving the position.
func (f *NodeFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.writeAt(p, off)
	if n > 0 {
		f.fsnotify(unix.IN_MODIFY)
	}
	return n, err
}

func (f *NodeFile) writeAt(p []byte, off int64) (int, error) {
	if f.node.IsDir() {
		return 0, unix.EISDIR
	}
	if off < 0 {
		return 0, unix.EINVAL
	}
	if off+int64(len(p)) < off {
		return 0, unix.EFBIG
	}
	f.node.mu.Lock()
	defer f.node.mu.Unlock()
	if err := f.node.checkWriteLocked(off, off+int64(len(p))); err != nil {
		return 0, err
	}
	f.node.pullMapped()
	if err := f.node.writeAtLocked(p, off); err != nil {
		return 0, err
	}
	if f.node.mapped != nil {
		f.node.mapped.Push(off, off+int64(len(p)))
	}
	f.node.MTime = time.Now()
	f.node.CTime = f.node.MTime
	return len(p), nil
}

// Truncate sets the file's size; growing it makes a hole.
func (f *NodeFile) Truncate(size int64) error {
	if f.node.IsDir() {
		return unix.EISDIR
	}
	f.node.mu.Lock()
	err := f.node.checkResizeLocked(size)
	if err == nil {
		f.node.MTime = time.Now()
		f.node.CTime = f.node.MTime
		err = f.node.truncateLocked(size)
	}
	f.node.mu.Unlock()
	if err == nil {
		f.fsnotify(unix.IN_MODIFY)
	}
	return err
}

// fsnotify reports an event of the open file to its inotify watchers
// and its directory's (found by the path it was opened at), and to
// fanotify's marks as caused by its opener.
func (f *NodeFile) fsnotify(mask uint32) { f.fsnotifyBy(mask, f.opener) }

// fsnotifyBy is fsnotify for an event caused by who.
func (f *NodeFile) fsnotifyBy(mask uint32, who Actor) {
	if f.tree == nil || f.quiet || f.tree.notify.count.Load() == 0 {
		return
	}
	dir, name, unlinked := f.tree.parentOf(f.node, f.path)
	f.tree.fsnotifyFile(f.node, dir, name, mask, 0, unlinked)
	f.tree.fanotify(f.node, dir, f.path, mask, who)
}

// permission asks fanotify's permission marks whether who may use the
// open file (FAN_ACCESS_PERM): EPERM when a listener denies it.
func (f *NodeFile) permission(mask uint32, who Actor) error {
	if f.tree == nil || f.quiet || f.tree.notify.fanotifyMarks.Load() == 0 {
		return nil
	}
	dir, _, _ := f.tree.parentOf(f.node, f.path)
	return f.tree.fanotify(f.node, dir, f.path, mask, who)
}

func (f *NodeFile) Stat() Stat { return StatNode(f.node) }

// Size is Stat's Size without the rest of Stat (sendfile's every call
// asks it).
func (f *NodeFile) Size() int64 {
	n := f.node
	if !n.Mode.IsRegular() {
		return StatNode(n).Size
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.sizeLocked()
}

// Close drops the locks the description held (flock, OFD locks), and the
// file's pages' charge when it was the last thing holding an unlinked file.
func (f *NodeFile) Close() error {
	if f.keeps != nil {
		f.keeps.FileClosed()
	}
	f.tree.ReleaseOwnerOn(f.node, f)
	f.dropDnotify()
	gone := false
	if n := f.node; f.counted {
		f.tree.SetLease(n, f, false, true)
		n.mu.Lock()
		n.opens--
		if f.writable {
			n.writers--
		}
		gone = n.Links == 0 && n.opens == 0
		n.releaseIfGoneLocked()
		n.mu.Unlock()
		if f.writable && f.tree != nil {
			if u := f.tree.tmpfsOf(n.Dev); u != nil {
				u.writers.Add(-1)
			}
		}
	}
	if !f.location {
		if f.writable {
			f.fsnotify(unix.IN_CLOSE_WRITE)
		} else {
			f.fsnotify(unix.IN_CLOSE_NOWRITE)
		}
	}
	if gone && f.tree != nil {
		f.tree.fsnotify(f.node, nil, "", unix.IN_DELETE_SELF, 0) // the last user of an unlinked file
	}
	return nil
}

func (f *NodeFile) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		f.node.mu.RLock()
		offset += f.node.sizeLocked()
		f.node.mu.RUnlock()
	case unix.SEEK_DATA, unix.SEEK_HOLE:
		if !f.node.Mode.IsRegular() {
			return 0, unix.EINVAL // a directory's lseek takes no such whence
		}
		f.node.mu.RLock()
		off, err := f.node.seekDataLocked(offset, whence == unix.SEEK_HOLE)
		f.node.mu.RUnlock()
		if err != nil {
			return 0, err
		}
		offset = off
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

func (c Console) ReadTo(dst UserIO) (int64, error) {
	return ReadStaged(dst, func([]byte) (int, error) { return 0, nil })
}
func (c Console) WriteFrom(src UserIO) (int64, error) {
	return WriteStaged(src, func(p []byte) (int, error) {
		c.Out(p)
		return len(p), nil
	})
}
func (c Console) Close() error { return nil }
func (c Console) Stat() Stat {
	return Stat{Dev: devConsole, Ino: 1, Mode: unix.S_IFCHR | 0o620, Nlink: 1, Rdev: devConsole, Blksize: 1024}
}

// FD is one slot of a descriptor table: free while Desc is nil. Slots
// are held by value, so that an open allocates no slot.
type FD struct {
	Desc    *Description
	CloExec bool
}

// FDTable maps descriptor numbers to open file descriptions. Threads
// created with CLONE_FILES share one table; fork copies it.
type FDTable struct {
	mu    sync.Mutex
	files []FD
	limit int  // RLIMIT_NOFILE
	set   bool // limit was set; DefaultFDLimit applies until then
}

// DefaultFDLimit is the descriptor limit of a new table (RLIMIT_NOFILE's
// default soft limit); MaxFDs is the most any table may hold (Linux's
// nr_open is larger; 4096 is init's hard limit).
const (
	DefaultFDLimit = 1024
	MaxFDs         = 4096
)

// Limit returns the descriptor limit.
func (t *FDTable) Limit() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limitLocked()
}

func (t *FDTable) limitLocked() int {
	if !t.set {
		return DefaultFDLimit
	}
	return t.limit
}

// SetLimit sets the descriptor limit (at most MaxFDs).
func (t *FDTable) SetLimit(n int) error {
	if n < 0 || n > MaxFDs {
		return unix.EPERM
	}
	t.mu.Lock()
	t.limit, t.set = n, true
	t.mu.Unlock()
	return nil
}

// Open installs a new description of f opened with flags in the lowest
// free slot; when no slot is free the file is closed.
func (t *FDTable) Open(f File, flags uint32, cloexec bool) (int, error) {
	return t.OpenDescription(NewDescription(f, flags), cloexec)
}

// OpenDescription installs the new description d as Open does, closing
// its file when no slot is free.
func (t *FDTable) OpenDescription(d *Description, cloexec bool) (int, error) {
	fd, err := t.Install(d, cloexec, 0)
	if err != nil {
		d.File.Close()
	}
	return fd, err
}

// Install puts d in the lowest free slot at or above min, taking a
// reference to it.
func (t *FDTable) Install(d *Description, cloexec bool, min int) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if min < 0 {
		return 0, unix.EINVAL
	}
	limit := t.limitLocked()
	if min >= limit {
		return 0, unix.EMFILE
	}
	for fd := min; fd < limit; fd++ {
		if fd >= len(t.files) {
			t.files = append(t.files, make([]FD, fd+1-len(t.files))...)
		}
		if t.files[fd].Desc == nil {
			t.files[fd] = FD{Desc: d, CloExec: cloexec}
			d.IncRef()
			return fd, nil
		}
	}
	return 0, unix.EMFILE
}

// InstallAt puts d at fd (dup2, dup3), closing what was there.
func (t *FDTable) InstallAt(d *Description, fd int, cloexec bool) error {
	t.mu.Lock()
	if fd < 0 || fd >= t.limitLocked() {
		t.mu.Unlock()
		return unix.EBADF
	}
	if fd >= len(t.files) {
		t.files = append(t.files, make([]FD, fd+1-len(t.files))...)
	}
	old := t.files[fd].Desc
	d.IncRef()
	t.files[fd] = FD{Desc: d, CloExec: cloexec}
	t.mu.Unlock()
	if old != nil {
		old.DecRef()
	}
	return nil
}

// Get returns the description open on fd with a reference taken for the
// caller, which drops it (DecRef) when its system call is done: a close
// of fd meanwhile, in another thread, then leaves the file open until
// the call is over, as Linux's fdget and fdput do.
func (t *FDTable) Get(fd int) (*Description, error) {
	t.mu.Lock() // no defer: every system call on a descriptor comes here
	if fd < 0 || fd >= len(t.files) || t.files[fd].Desc == nil {
		t.mu.Unlock()
		return nil, unix.EBADF
	}
	d := t.files[fd].Desc
	d.IncRef()
	t.mu.Unlock()
	return d, nil
}

// SetCloExec sets or clears FD_CLOEXEC on fd.
func (t *FDTable) SetCloExec(fd int, on bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if fd < 0 || fd >= len(t.files) || t.files[fd].Desc == nil {
		return unix.EBADF
	}
	t.files[fd].CloExec = on
	return nil
}

// CloExec reports FD_CLOEXEC of fd.
func (t *FDTable) CloExec(fd int) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if fd < 0 || fd >= len(t.files) || t.files[fd].Desc == nil {
		return false, unix.EBADF
	}
	return t.files[fd].CloExec, nil
}

// Fork returns a copy of the table for a child process: the same
// descriptions, each now referred to once more.
func (t *FDTable) Fork() *FDTable {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.forkLocked()
}

// ForkWithin is Fork for a kernel whose nr_open is nrOpen: EMFILE when
// the table's open descriptors need more slots than that allows, both
// counted in words of 64 as Linux's dup_fd counts them.
func (t *FDTable) ForkWithin(nrOpen int) (*FDTable, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	used := len(t.files)
	for used > 0 && t.files[used-1].Desc == nil {
		used--
	}
	if roundUp64(used) > roundUp64(nrOpen) {
		return nil, unix.EMFILE
	}
	return t.forkLocked(), nil
}

func roundUp64(n int) int { return (n + 63) &^ 63 }

func (t *FDTable) forkLocked() *FDTable {
	c := &FDTable{files: slices.Clone(t.files), limit: t.limit, set: t.set}
	for _, fd := range c.files {
		if fd.Desc != nil {
			fd.Desc.IncRef()
		}
	}
	return c
}

// Close closes fd. Epoll watches stay until the description's last
// reference goes, as on Linux.
func (t *FDTable) Close(fd int) error {
	d, err := t.Remove(fd)
	if err != nil {
		return err
	}
	d.DecRef()
	return nil
}

// Remove takes fd out of the table and hands the table's reference to
// its description to the caller, which drops it (close(2) releases the
// process's locks on the file in between).
func (t *FDTable) Remove(fd int) (*Description, error) {
	t.mu.Lock()
	if fd < 0 || fd >= len(t.files) || t.files[fd].Desc == nil {
		t.mu.Unlock()
		return nil, unix.EBADF
	}
	d := t.files[fd].Desc
	t.files[fd] = FD{}
	t.mu.Unlock()
	return d, nil
}

// CloseOnExec closes every descriptor marked close-on-exec.
func (t *FDTable) CloseOnExec() {
	t.mu.Lock()
	var closing []*Description
	for i, fd := range t.files {
		if fd.Desc != nil && fd.CloExec {
			closing = append(closing, fd.Desc)
			t.files[i] = FD{}
		}
	}
	t.mu.Unlock()
	for _, d := range closing {
		d.DecRef()
	}
}

// CloseAll closes every descriptor.
func (t *FDTable) CloseAll() {
	t.mu.Lock()
	files := t.files
	t.files = nil
	t.mu.Unlock()
	for _, fd := range files {
		if fd.Desc != nil {
			fd.Desc.DecRef()
		}
	}
}

// Numbers returns the open descriptors in order, for /proc/self/fd.
func (t *FDTable) Numbers() []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []int
	for i, fd := range t.files {
		if fd.Desc != nil {
			out = append(out, i)
		}
	}
	return out
}

// NoopSeek is the Seek of a file that has no position but that lseek
// accepts, Linux's noop_llseek (eventfd, timerfd, epoll, signalfd): the
// position stays 0, whatever is asked.
type NoopSeek struct{}

func (NoopSeek) Seek(int64, int) (int64, error) { return 0, nil }
