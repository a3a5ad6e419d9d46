package fs

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/mm"
)

// splice(2) and tee(2) move bytes between a pipe's pages and another file
// without passing through user memory. The pipe's lock is held while the
// other file reads or writes, as Linux holds the pipe's mutex: no other
// reader of the pipe can take bytes between their being copied out and
// their leaving the pipe. The other file never takes a pipe's lock
// (splice of a pipe into itself is refused), and two pipes are locked in
// the order of their inode numbers.

// SpliceTo moves up to n bytes from the pipe, whose read end e is, to
// write, a page at a time; the bytes write takes leave the pipe. It stops
// at the first short or failed write, and returns that error only when
// nothing moved. 0 when the pipe is empty and has no writer; EAGAIN when
// it is empty with one.
func (e *PipeEnd) SpliceTo(n int64, write func([]byte) (int, error)) (int64, error) {
	if e.write {
		return 0, unix.EBADF
	}
	moved, fns, err := e.p.spliceOut(n, write)
	Notify(fns)
	return moved, err
}

// spliceOut is SpliceTo's work under the pipe's lock; it returns the
// notifications to send once the lock is dropped.
func (p *pipe) spliceOut(n int64, write func([]byte) (int, error)) (int64, []func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.used == 0 {
		if p.writers == 0 {
			return 0, nil, nil
		}
		return 0, nil, unix.EAGAIN
	}
	wasFull := p.full()
	moved := int64(0)
	var err error
	for moved < n && p.used > 0 {
		page := p.at(0).unread()
		page = page[:min(int64(len(page)), n-moved)]
		var k int
		k, err = write(page)
		moved += int64(k)
		p.consume(k)
		if err != nil || k < len(page) {
			break
		}
	}
	if moved == 0 {
		return 0, nil, err
	}
	if !wasFull {
		return moved, nil, nil
	}
	return moved, p.wakeWriters(), nil
}

// SpliceFrom fills the pipe, whose write end e is, with up to n bytes
// from read, a new page each time, until the pipe is full, read gives
// less than a page asked or fails (its error returned only when nothing
// moved) or n bytes came. EPIPE without a reader; EAGAIN when the pipe is
// full; ENOMEM when the kernel's budget (mm.Charged) is spent.
func (e *PipeEnd) SpliceFrom(n int64, read func([]byte) (int, error)) (int64, error) {
	if !e.write {
		return 0, unix.EBADF
	}
	moved, fns, err := e.p.spliceIn(n, read)
	Notify(fns)
	return moved, err
}

// spliceIn is SpliceFrom's work under the pipe's lock.
func (p *pipe) spliceIn(n int64, read func([]byte) (int, error)) (int64, []func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.readers == 0:
		return 0, nil, unix.EPIPE
	case p.full():
		return 0, nil, unix.EAGAIN
	}
	moved := int64(0)
	var err error
	for moved < n && !p.full() {
		if mm.Charged.ChargeBuffer(pipePage) != nil {
			err = unix.ENOMEM
			break
		}
		page, want := pipePages.Get().(*[pipePage]byte), min(pipePage, n-moved)
		var k int
		k, err = read(page[:want])
		if k == 0 {
			pipePages.Put(page)
			mm.Charged.Uncharge(pipePage)
			break
		}
		p.push(page, k)
		moved += int64(k)
		if err != nil || int64(k) < want {
			break
		}
	}
	if moved == 0 {
		return 0, nil, err
	}
	return moved, p.wakeReaders(), nil
}

// SplicePipe moves up to n bytes from the pipe read at in to the pipe
// written at out, whole pages where they fit (tee: copies them, leaving
// them in in). EINVAL for a pipe into itself; EAGAIN when in is empty
// with a writer or out is full; 0 when in is empty without a writer;
// EPIPE when out has no reader; ENOMEM when the budget is spent.
func SplicePipe(in, out *PipeEnd, n int64, tee bool) (int64, error) {
	if in.write || !out.write {
		return 0, unix.EBADF
	}
	if in.p == out.p {
		return 0, unix.EINVAL
	}
	moved, fns, err := splicePipes(in.p, out.p, n, tee)
	Notify(fns)
	return moved, err
}

// splicePipes is SplicePipe's work under both pipes' locks, taken in the
// order of their inode numbers.
func splicePipes(src, dst *pipe, n int64, tee bool) (int64, []func(), error) {
	first, second := src, dst
	if second.ino < first.ino {
		first, second = second, first
	}
	first.mu.Lock()
	defer first.mu.Unlock()
	second.mu.Lock()
	defer second.mu.Unlock()
	switch {
	case dst.readers == 0:
		return 0, nil, unix.EPIPE
	case src.used == 0 && src.writers > 0, src.used > 0 && dst.full():
		return 0, nil, unix.EAGAIN
	}
	srcFull := src.full()
	moved := int64(0)
	var err error
	for i := 0; moved < n && i < src.used && !dst.full(); {
		if mm.Charged.ChargeBuffer(pipePage) != nil {
			err = unix.ENOMEM
			break
		}
		page := src.at(i).unread()
		page = page[:min(int64(len(page)), n-moved)]
		copied := pipePages.Get().(*[pipePage]byte)
		dst.push(copied, copy(copied[:], page))
		moved += int64(len(page))
		if tee {
			i++
		} else {
			src.consume(len(page))
		}
	}
	if moved == 0 {
		return 0, nil, err
	}
	fns := dst.wakeReaders()
	if srcFull && !tee {
		fns = append(fns, src.wakeWriters()...)
	}
	return moved, fns, nil
}

// consume drops k bytes from the front of the oldest page; p.mu is held.
func (p *pipe) consume(k int) {
	b := p.at(0)
	if b.start += k; b.start == b.end {
		p.pop()
		mm.Charged.Uncharge(pipePage)
	}
}
