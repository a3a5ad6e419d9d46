package fs

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// What a system call asks of a description beyond reading and writing:
// each answers for every kind of file, with Linux's errno where the file
// has no such operation, so that the system call layer looks at no file's
// kind.

// positionedFile is a file that reads and writes at an offset (pread,
// pwrite): a regular file.
type positionedFile interface {
	ReadAtTo(dst UserIO, off int64) (int64, error)
	WriteAtFrom(src UserIO, off int64) (int64, error)
}

// Positioned reports whether the file reads and writes at offsets; pread
// and pwrite of a pipe or a socket are ESPIPE.
func (d *Description) Positioned() bool {
	_, ok := d.File.(positionedFile)
	return ok
}

// ReadAt reads the file at off into dst (pread); ESPIPE when it has no
// offsets.
func (d *Description) ReadAt(dst UserIO, off int64) (int64, error) {
	f, ok := d.File.(positionedFile)
	if !ok {
		return 0, unix.ESPIPE
	}
	return f.ReadAtTo(dst, off)
}

// WriteAt writes src to the file at off (pwrite); ESPIPE when it has no
// offsets.
func (d *Description) WriteAt(src UserIO, off int64) (int64, error) {
	f, ok := d.File.(positionedFile)
	if !ok {
		return 0, unix.ESPIPE
	}
	return f.WriteAtFrom(src, off)
}

// Seek moves the file position (lseek); ESPIPE when the file has none.
func (d *Description) Seek(offset int64, whence int) (int64, error) {
	s, ok := d.File.(Seeker)
	if !ok {
		return 0, unix.ESPIPE
	}
	return s.Seek(offset, whence)
}

// Waitable returns the file as something to wait on, when it is one.
func (d *Description) Waitable() (Waitable, bool) {
	w, ok := d.File.(Waitable)
	return w, ok
}

// NodeFile returns the tree file (a regular file or a directory) open on
// d, if that is what is open.
func (d *Description) NodeFile() (*NodeFile, bool) {
	f, ok := d.File.(*NodeFile)
	return f, ok
}

// Node returns the tree node of the file open on d; nil for a pipe, a
// socket or a device.
func (d *Description) Node() *Node {
	if f, ok := d.File.(*NodeFile); ok {
		return f.Node()
	}
	return nil
}

// pipeSizer is a pipe end, whose capacity F_GETPIPE_SZ and F_SETPIPE_SZ
// get and set.
type pipeSizer interface {
	Size() int
	SetSize(n int, privileged bool) (int, error)
}

// PipeSize returns the pipe's capacity; EBADF when d is no pipe end.
func (d *Description) PipeSize() (int, error) {
	p, ok := d.File.(pipeSizer)
	if !ok {
		return 0, unix.EBADF
	}
	return p.Size(), nil
}

// SetPipeSize sets the pipe's capacity (PipeEnd.SetSize); EBADF when d is
// no pipe end.
func (d *Description) SetPipeSize(n int, privileged bool) (int, error) {
	p, ok := d.File.(pipeSizer)
	if !ok {
		return 0, unix.EBADF
	}
	return p.SetSize(n, privileged)
}

// Terminal returns the terminal open on d (the console, opened as itself
// or as its device node), whose terminal ioctls apply.
func (d *Description) Terminal() (*TTY, bool) {
	t, ok := Base(d.File).(*TTY)
	return t, ok
}

// RandomDevice reports whether d is /dev/random or /dev/urandom, whose
// random(4) ioctls apply.
func (d *Description) RandomDevice() bool {
	_, ok := Base(d.File).(randomDev)
	return ok
}

// Epoll returns the epoll instance open on d; epoll_ctl and epoll_wait
// on any other file are EINVAL.
func (d *Description) Epoll() (*Epoll, bool) {
	e, ok := d.File.(*Epoll)
	return e, ok
}

// memoryFile is a file whose mappings map memory it holds itself (an
// io_uring's rings), chosen by the mapping's offset.
type memoryFile interface {
	MappedMemory(offset, length uint64) (*mm.SharedMemory, error)
}

// MapsOwnMemory reports whether the file's mappings map memory it holds
// (OwnMemory), not the file's pages.
func (d *Description) MapsOwnMemory() bool {
	_, ok := d.File.(memoryFile)
	return ok
}

// OwnMemory returns the memory that a mapping of length bytes at offset
// maps, for a file that MapsOwnMemory: EINVAL where it has none.
func (d *Description) OwnMemory(offset, length uint64) (*mm.SharedMemory, error) {
	f, ok := d.File.(memoryFile)
	if !ok {
		return nil, unix.ENODEV
	}
	return f.MappedMemory(offset, length)
}
