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
	p := e.p
	p.mu.Lock()
	if len(p.bufs) == 0 {
		w := p.writers
		p.mu.Unlock()
		if w == 0 {
			return 0, nil
		}
		return 0, unix.EAGAIN
	}
	moved := int64(0)
	var err error
	for moved < n && len(p.bufs) > 0 {
		page := p.bufs[0][:min(int64(len(p.bufs[0])), n-moved)]
		var k int
		k, err = write(page)
		moved += int64(k)
		p.consume(k)
		if err != nil || k < len(page) {
			break
		}
	}
	fns := p.notifier.Changed()
	p.mu.Unlock()
	Notify(fns)
	if moved > 0 {
		return moved, nil
	}
	return 0, err
}

// SpliceFrom fills the pipe, whose write end e is, with up to n bytes
// from read, a new page each time, until the pipe is full, read gives
// less than a page asked or fails (its error returned only when nothing
// moved) or n bytes came. EPIPE without a reader; EAGAIN when the pipe is
// full.
func (e *PipeEnd) SpliceFrom(n int64, read func([]byte) (int, error)) (int64, error) {
	if !e.write {
		return 0, unix.EBADF
	}
	p := e.p
	p.mu.Lock()
	switch {
	case p.readers == 0:
		p.mu.Unlock()
		return 0, unix.EPIPE
	case len(p.bufs) >= p.slots:
		p.mu.Unlock()
		return 0, unix.EAGAIN
	}
	moved := int64(0)
	var err error
	for moved < n && len(p.bufs) < p.slots {
		if err = mm.Charged.Charge(pipePage); err != nil {
			err = unix.ENOMEM
			break
		}
		page := make([]byte, min(pipePage, n-moved), pipePage)
		var k int
		k, err = read(page)
		if k > 0 {
			p.bufs, p.offs = append(p.bufs, page[:k]), append(p.offs, 0)
			moved += int64(k)
		} else {
			mm.Charged.Uncharge(pipePage)
		}
		if err != nil || k < len(page) {
			break
		}
	}
	var fns []func()
	if moved > 0 {
		fns = p.notifier.Changed()
	}
	p.mu.Unlock()
	Notify(fns)
	if moved > 0 {
		return moved, nil
	}
	return 0, err
}

// SplicePipe moves up to n bytes from the pipe read at in to the pipe
// written at out, whole pages where they fit (tee: copies them, leaving
// them in in). EINVAL for a pipe into itself; EAGAIN when in is empty
// with a writer or out is full; 0 when in is empty without a writer;
// EPIPE when out has no reader.
func SplicePipe(in, out *PipeEnd, n int64, tee bool) (int64, error) {
	if in.write || !out.write {
		return 0, unix.EBADF
	}
	src, dst := in.p, out.p
	if src == dst {
		return 0, unix.EINVAL
	}
	first, second := src, dst
	if second.ino < first.ino {
		first, second = second, first
	}
	first.mu.Lock()
	second.mu.Lock()
	moved := int64(0)
	var err error
	switch {
	case dst.readers == 0:
		err = unix.EPIPE
	case len(src.bufs) == 0 && src.writers > 0:
		err = unix.EAGAIN
	case len(src.bufs) > 0 && len(dst.bufs) >= dst.slots:
		err = unix.EAGAIN
	}
	for i := 0; err == nil && moved < n && i < len(src.bufs) && len(dst.bufs) < dst.slots; {
		if mm.Charged.Charge(pipePage) != nil {
			if moved == 0 {
				err = unix.ENOMEM
			}
			break
		}
		page := src.bufs[i][:min(int64(len(src.bufs[i])), n-moved)]
		dst.bufs = append(dst.bufs, append(make([]byte, 0, pipePage), page...))
		dst.offs = append(dst.offs, 0)
		moved += int64(len(page))
		if tee {
			i++
		} else {
			src.consume(len(page))
		}
	}
	var fns []func()
	if moved > 0 {
		fns = append(src.notifier.Changed(), dst.notifier.Changed()...)
	}
	second.mu.Unlock()
	first.mu.Unlock()
	Notify(fns)
	if moved > 0 {
		return moved, nil
	}
	return 0, err
}

// consume drops k bytes from the front of the oldest page; p.mu is held.
func (p *pipe) consume(k int) {
	p.bufs[0] = p.bufs[0][k:]
	p.offs[0] += k
	if len(p.bufs[0]) == 0 {
		p.bufs, p.offs = p.bufs[1:], p.offs[1:]
		mm.Charged.Uncharge(pipePage)
	}
}
