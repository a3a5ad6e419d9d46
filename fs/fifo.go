package fs

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// Named pipes (FIFOs): a tree node that, opened, joins the pipe it holds
// while any end is open, as Linux's fifo_open does.

// NewFIFO returns a named pipe node.
func NewFIFO(perm fs.FileMode) *Node {
	return &Node{Mode: fs.ModeNamedPipe | perm&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), Ino: nextIno.Add(1)}
}

// IsFIFO reports whether n is a named pipe.
func (n *Node) IsFIFO() bool { return n.Mode&fs.ModeNamedPipe != 0 }

// FIFOOpen is an end of a named pipe just opened, and what the opener
// waits for before open returns.
type FIFOOpen struct {
	File           File
	p              *pipe
	reader, writer bool
	// start is the partner's open count when this end opened; present
	// says a partner was open then (the partner may close again before
	// this end looks, on another hart: fifo_open does not wait then).
	start   uint64
	present bool
}

// OpenFIFO opens the named pipe n for reading, writing or both. A writer
// that must not wait (nonblock) and finds no reader gets ENXIO.
//
// The pipe is chosen and joined under the node's lock in one step (a
// FIFO has no data of its own for it to guard): two openers that each
// found no end open and made a pipe of their own would wait for each
// other forever, one on each pipe.
func OpenFIFO(n *Node, read, write, nonblock bool) (*FIFOOpen, error) {
	n.mu.Lock()
	p, _ := n.Bound.(*pipe)
	if p == nil || (p.readers == 0 && p.writers == 0) {
		// The last close dropped the data; a new pipe starts empty.
		p = &pipe{slots: PipeDefaultSize / pipePage, ino: n.Ino}
		n.Bound = p
	}
	p.mu.Lock()
	o, fns, err := p.openLocked(read, write, nonblock)
	p.mu.Unlock()
	n.mu.Unlock()
	Notify(fns)
	return o, err
}

// Reopen opens the pipe of this end anew, as opening /proc/PID/fd/N (or
// /dev/fd/N) of a pipe does on Linux: a new description of either side,
// which, unlike a named pipe's, never waits for a partner.
func (e *PipeEnd) Reopen(read, write bool) File {
	o, _ := e.p.open(read, write, false) // only a non-blocking open fails
	return o.File
}

// Reopen opens the pipe anew (see PipeEnd.Reopen).
func (f *fifoRW) Reopen(read, write bool) File { return f.r.Reopen(read, write) }

func (p *pipe) open(read, write, nonblock bool) (*FIFOOpen, error) {
	p.mu.Lock()
	o, fns, err := p.openLocked(read, write, nonblock)
	p.mu.Unlock()
	Notify(fns)
	return o, err
}

// openLocked adds an end to the pipe and returns the watchers to notify
// once p.mu is released. p.mu is held.
func (p *pipe) openLocked(read, write, nonblock bool) (*FIFOOpen, []func(), error) {
	if write && !read && nonblock && p.readers == 0 {
		return nil, nil, unix.ENXIO
	}
	o := &FIFOOpen{p: p, reader: read && !write, writer: write && !read}
	if read {
		p.readers++
		p.rOpens++
	}
	if write {
		p.writers++
		p.wOpens++
	}
	switch {
	case read && write:
		o.File = &fifoRW{r: &PipeEnd{p: p}, w: &PipeEnd{p: p, write: true}}
	case write:
		o.File = &PipeEnd{p: p, write: true}
		o.start, o.present = p.rOpens, p.readers > 0
	default:
		o.File = &PipeEnd{p: p}
		o.start, o.present = p.wOpens, p.writers > 0
	}
	return o, p.wakeAll(), nil
}

// Partnered reports whether open may return, as Linux's fifo_open: a
// reader once a writer was there at its open, is there, or has come since;
// a writer likewise for readers.
func (o *FIFOOpen) Partnered() bool {
	p := o.p
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case o.present:
		return true
	case o.reader:
		return p.writers > 0 || p.wOpens != o.start
	case o.writer:
		return p.readers > 0 || p.rOpens != o.start
	}
	return true
}

// Watch calls notify on every change of the pipe, opens included.
func (o *FIFOOpen) Watch(notify func()) func() { return o.p.watchAll(notify) }

// fifoRW is a named pipe opened for reading and writing: both ends in one
// description.
type fifoRW struct{ r, w *PipeEnd }

// ReadTo reads the pipe; a buffer whose first byte is unwritable is
// EFAULT before the pipe is looked at, as when this read was staged.
func (f *fifoRW) ReadTo(dst UserIO) (int64, error) {
	if dst.Len() > 0 && dst.Writable(1) == 0 {
		return 0, unix.EFAULT
	}
	return f.r.ReadTo(dst)
}
func (f *fifoRW) WriteFrom(src UserIO) (int64, error) { return f.w.WriteFrom(src) }
func (f *fifoRW) Stat() Stat                          { return f.r.Stat() }
func (f *fifoRW) Readiness(mask uint32) uint32 {
	return f.r.Readiness(mask) | f.w.Readiness(mask)
}
func (f *fifoRW) Watch(notify func()) func() { return f.r.p.watchAll(notify) }
func (f *fifoRW) Close() error {
	f.r.Close()
	return f.w.Close()
}
