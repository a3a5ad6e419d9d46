package fs

import (
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Description is an open file description, Linux's struct file: the open
// file, its access mode and status flags, and the epoll instances watching
// it. Descriptors refer to it: dup and fork share one, and it is closed
// when the last reference goes.
type Description struct {
	File  File
	flags atomic.Uint32 // O_ACCMODE and the status flags
	refs  atomic.Int64

	mu     sync.Mutex
	epolls []epollWatch // epoll watches on this description

	// exclusive are the EPOLLEXCLUSIVE watches of the file (epoll.go).
	// exclusiveMu is a leaf lock: taken in notifications.
	exclusiveMu sync.Mutex
	exclusive   *exclusiveGroup

	// Created: this open made the file (F_CREATED_QUERY).
	Created bool
	// LandlockDenied are the rights (TRUNCATE, IOCTL_DEV) the opener's
	// Landlock domain did not grant on the path at open: ftruncate and a
	// device's ioctls check them, as Linux keeps them with the file.
	LandlockDenied uint64
	owner          atomic.Pointer[Owner]
	signal         atomic.Int32 // F_SETSIG's signal, 0 for SIGIO
	// asyncCancel stops the watch that sends the I/O signals while
	// O_ASYNC is set (Linux's fasync), at the latest at the last close.
	asyncMu     sync.Mutex
	asyncCancel func()
	asyncRun    asyncRunner
}

// WatchAsync runs notify after changes of the file's readiness until it
// is called again (with nil: no more) or the description closes. A file
// that is not Waitable sends nothing. notify runs on a goroutine of its
// own (a file may announce a change under its locks, and notify asks for
// readiness), one run at a time and in order: changes that come before a
// run starts make that one run. So a change that made the file not ready
// is never looked at after a later one made it ready again, which would
// send a signal for the later change twice.
func (d *Description) WatchAsync(notify func()) {
	d.asyncMu.Lock()
	defer d.asyncMu.Unlock()
	if d.asyncCancel != nil {
		d.asyncCancel()
		d.asyncCancel = nil
	}
	if w, ok := d.File.(Waitable); ok && notify != nil {
		d.asyncCancel = w.Watch(func() { d.asyncRun.kick(notify) })
	}
}

// asyncRunner runs a function on a goroutine of its own after kicks,
// coalescing the kicks that come before a run starts.
type asyncRunner struct {
	state atomic.Int32 // one of the asyncRunner states below
}

const (
	asyncIdle          = iota // no goroutine
	asyncQueued               // a goroutine started, fn not yet begun
	asyncRunning              // fn running
	asyncRunningQueued        // fn running, kicked since it began: run again
)

func (r *asyncRunner) kick(fn func()) {
	for {
		switch s := r.state.Load(); s {
		case asyncIdle:
			if r.state.CompareAndSwap(asyncIdle, asyncQueued) {
				go r.run(fn)
				return
			}
		case asyncRunning:
			if r.state.CompareAndSwap(asyncRunning, asyncRunningQueued) {
				return
			}
		default: // a run is queued and will see this change
			return
		}
	}
}

func (r *asyncRunner) run(fn func()) {
	for {
		r.state.Store(asyncRunning) // from asyncQueued: only kick moves it on
		fn()
		if r.state.CompareAndSwap(asyncRunning, asyncIdle) {
			return
		}
	}
}

// Owner is who receives a description's I/O signals (F_SETOWN_EX): a
// thread, a process or a process group (F_OWNER_TID, _PID, _PGRP).
type Owner struct {
	Kind int32
	ID   int32
}

// Owner returns the description's owner; a zero ID means none.
func (d *Description) Owner() Owner {
	if o := d.owner.Load(); o != nil {
		return *o
	}
	return Owner{}
}

// SetOwner sets who receives the description's I/O signals.
func (d *Description) SetOwner(o Owner) { d.owner.Store(&o) }

// Signal returns the signal F_SETSIG chose (0: SIGIO).
func (d *Description) Signal() int { return int(d.signal.Load()) }

// SetSignal sets the signal sent for I/O readiness (F_SETSIG).
func (d *Description) SetSignal(sig int) { d.signal.Store(int32(sig)) }

// accessOpener is a file that wants its open's access mode and flags.
type accessOpener interface {
	OpenedAs(flags uint32)
}

// settableFlags are the status flags F_SETFL may change (Linux's SETFL_MASK
// without O_DIRECT and O_NOATIME, which nothing here honours).
const settableFlags = unix.O_APPEND | unix.O_NONBLOCK | unix.O_ASYNC

// StatusFlagsSetter is a file that acts on its status flags itself (a
// regular file's O_APPEND).
type StatusFlagsSetter interface {
	SetStatusFlags(flags uint32)
}

// NewDescription opens a description of f with open(2) flags (access mode
// and status flags; of the creation flags, O_CREAT says that this open
// made the file). It holds no reference yet.
func NewDescription(f File, flags uint32) *Description {
	var d *Description
	if nf, ok := f.(*NodeFile); ok && nf.spare != nil {
		d, nf.spare = nf.spare, nil
	} else {
		d = new(Description)
	}
	d.File, d.Created = f, flags&unix.O_CREAT != 0
	if o, ok := f.(accessOpener); ok {
		o.OpenedAs(flags)
	}
	d.flags.Store(flags & (unix.O_ACCMODE | unix.O_APPEND | unix.O_NONBLOCK | unix.O_ASYNC | unix.O_DIRECT | unix.O_NOATIME | unix.O_LARGEFILE | unix.O_PATH))
	if s, ok := f.(StatusFlagsSetter); ok {
		s.SetStatusFlags(d.flags.Load())
	}
	return d
}

// Flags returns the access mode and status flags, as F_GETFL reports them.
func (d *Description) Flags() uint32 { return d.flags.Load() | unix.O_LARGEFILE }

// SetFlags sets the status flags F_SETFL may change; the rest of flags is
// ignored, as on Linux.
func (d *Description) SetFlags(flags uint32) {
	for {
		old := d.flags.Load()
		nf := old&^settableFlags | flags&settableFlags
		if d.flags.CompareAndSwap(old, nf) {
			if s, ok := d.File.(StatusFlagsSetter); ok {
				s.SetStatusFlags(nf)
			}
			return
		}
	}
}

// Nonblock reports O_NONBLOCK.
func (d *Description) Nonblock() bool { return d.flags.Load()&unix.O_NONBLOCK != 0 }

// SetNonblock sets or clears O_NONBLOCK (FIONBIO).
func (d *Description) SetNonblock(on bool) {
	fl := d.flags.Load() & settableFlags
	if on {
		fl |= unix.O_NONBLOCK
	} else {
		fl &^= unix.O_NONBLOCK
	}
	d.SetFlags(fl)
}

// Readable and Writable report the access mode; an O_PATH description
// (a location, not an open file) has neither.
func (d *Description) Readable() bool {
	fl := d.flags.Load()
	acc := fl & unix.O_ACCMODE
	return fl&unix.O_PATH == 0 && (acc == unix.O_RDONLY || acc == unix.O_RDWR)
}

// Writable reports whether the description was opened for writing.
func (d *Description) Writable() bool {
	fl := d.flags.Load()
	acc := fl & unix.O_ACCMODE
	return fl&unix.O_PATH == 0 && (acc == unix.O_WRONLY || acc == unix.O_RDWR)
}

// openDescriptions counts descriptions with references, for the kernel's
// statistics. It stays package-level because a description is made and
// dropped without a tree at hand (pipes, sockets, epoll instances); it
// is a count for the status line, which no behaviour depends on.
var openDescriptions atomic.Int64

// OpenDescriptions returns how many descriptions are open.
func OpenDescriptions() int64 { return openDescriptions.Load() }

// IncRef takes a reference.
func (d *Description) IncRef() {
	if d.refs.Add(1) == 1 {
		openDescriptions.Add(1)
	}
}

// Refs returns how many references the description has (descriptors,
// calls in progress, messages in flight, mappings): the Unix socket
// collector's count.
func (d *Description) Refs() int64 { return d.refs.Load() }

// DecRef drops a reference; the last one removes every epoll watch on the
// description and closes the file.
func (d *Description) DecRef() {
	if d.refs.Add(-1) > 0 {
		return
	}
	openDescriptions.Add(-1)
	d.mu.Lock()
	epolls := d.epolls
	d.epolls = nil
	d.mu.Unlock()
	for _, w := range epolls {
		w.e.forget(w.fd, d)
	}
	d.WatchAsync(nil)
	d.File.Close()
}

// epollWatch is a watch of e on a description, added with descriptor fd.
type epollWatch struct {
	e  *Epoll
	fd int
}

// watchedBy records the watch of e added with fd on d; unwatchedBy drops it.
func (d *Description) watchedBy(e *Epoll, fd int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.epolls = append(d.epolls, epollWatch{e, fd})
}

func (d *Description) unwatchedBy(e *Epoll, fd int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if i := slices.Index(d.epolls, epollWatch{e, fd}); i >= 0 {
		d.epolls = slices.Delete(d.epolls, i, i+1)
	}
}
