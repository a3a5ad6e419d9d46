package fs

import (
	"math"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// A regular file's contents. A file given bytes when it is made (the
// initramfs image's, a synthetic file's) reads them in place, and a file
// of a root image on a disk reads the disk (disk.go), until its first
// write or truncate; from then on its contents are pages of its own,
// allocated as they are written, so that a hole (never written, or beyond
// a truncate) reads as zeros and takes no memory, as on Linux's tmpfs.
// The pages are kernel memory: each is charged against the tree's limit
// (half of RAM by default, as tmpfs's size=) and its tmpfs mount's size=,
// so that no user program can exhaust the kernel by writing files. A
// node outside every tree (a synthetic file's snapshot) counts its pages
// against nothing.

// dataUsage is a tree's file data and its limit.
type dataUsage struct {
	limit atomic.Int64 // bytes; 0: unlimited
	used  atomic.Int64
}

// SetSizeLimit sets the most file data t may hold.
func (t *Tree) SetSizeLimit(bytes int64) { t.data.limit.Store(bytes) }

// Usage returns the bytes of file data t holds and the limit.
func (t *Tree) Usage() (used, limit int64) { return t.data.used.Load(), t.data.limit.Load() }

type page = [pageSize]byte

// filePages is a written file's contents: its size and the pages that
// hold data, by index.
type filePages struct {
	size  int64
	pages map[int64]*page
}

// seekDataLocked is lseek's SEEK_DATA (or SEEK_HOLE, hole) from off, as
// tmpfs answers it: data is the pages written, a hole a page never
// written, and the end of the file a hole; a file never written is data
// to its end. ENXIO past the end, or when no data follows (n.mu held).
func (n *Node) seekDataLocked(off int64, hole bool) (int64, error) {
	size := n.sizeLocked()
	if off < 0 || off >= size {
		return 0, unix.ENXIO
	}
	if n.written == nil {
		if hole {
			return size, nil
		}
		return off, nil
	}
	pages := n.written.pages
	first := off / pageSize
	if hole {
		p := first
		for pages[p] != nil {
			p++
		}
		return min(max(off, p*pageSize), size), nil
	}
	if pages[first] != nil {
		return off, nil
	}
	next := int64(-1)
	for p := range pages {
		if p > first && (next < 0 || p < next) {
			next = p
		}
	}
	if next < 0 || next*pageSize >= size {
		return 0, unix.ENXIO
	}
	return next * pageSize, nil
}

// sizeLocked is the file's size; n.mu is held.
func (n *Node) sizeLocked() int64 {
	if n.written != nil {
		return n.written.size
	}
	if n.disk != nil {
		return n.disk.size
	}
	return int64(len(n.Data))
}

// readAtLocked copies the contents at off into p and returns how much;
// EIO when a root disk fails. n.mu is held (for reading).
func (n *Node) readAtLocked(p []byte, off int64) (int, error) {
	w := n.written
	if w == nil && n.disk != nil {
		return n.disk.readAt(p, off)
	}
	if w == nil {
		if off >= int64(len(n.Data)) {
			return 0, nil
		}
		return copy(p, n.Data[off:]), nil
	}
	if off >= w.size {
		return 0, nil
	}
	p = p[:min(int64(len(p)), w.size-off)]
	for done := 0; done < len(p); {
		at := off + int64(done)
		in := at % pageSize
		k := min(len(p)-done, int(pageSize-in))
		if pg := w.pages[at/pageSize]; pg != nil {
			copy(p[done:done+k], pg[in:])
		} else {
			clear(p[done : done+k])
		}
		done += k
	}
	return len(p), nil
}

// ownPagesLocked gives n pages of its own, copying the bytes it was made
// with up to keep (what a truncate leaves). n.mu is held.
func (n *Node) ownPagesLocked(keep int64) error {
	if n.written != nil {
		return nil
	}
	image, disk := n.Data, n.disk
	keep = min(keep, n.sizeLocked())
	n.written = &filePages{pages: map[int64]*page{}}
	n.Data, n.disk = nil, nil
	var err error
	if disk == nil {
		err = n.writeAtLocked(image[:keep], 0)
	} else {
		buf := make([]byte, min(keep, diskWindow))
		for off := int64(0); off < keep && err == nil; off += int64(len(buf)) {
			chunk := buf[:min(int64(len(buf)), keep-off)]
			if _, err = disk.readAt(chunk, off); err == nil {
				err = n.writeAtLocked(chunk, off)
			}
		}
	}
	if err != nil {
		n.releaseLocked()
		n.written, n.Data, n.disk = nil, image, disk
	}
	return err
}

// writeAtLocked stores p at off, allocating the pages it touches; ENOSPC
// when the tree or the file's tmpfs mount is full (nothing is written
// then). n.mu is held.
func (n *Node) writeAtLocked(p []byte, off int64) error {
	if off < 0 || off > math.MaxInt64-int64(len(p)) {
		return unix.EFBIG
	}
	if err := n.ownPagesLocked(math.MaxInt64); err != nil {
		return err
	}
	w := n.written
	end := off + int64(len(p))
	fresh := int64(0)
	for i := off / pageSize; i*pageSize < end; i++ {
		if w.pages[i] == nil {
			fresh++
		}
	}
	if err := n.chargeLocked(fresh * pageSize); err != nil {
		return err
	}
	for done := 0; done < len(p); {
		at := off + int64(done)
		pg := w.pages[at/pageSize]
		if pg == nil {
			pg = new(page)
			w.pages[at/pageSize] = pg
		}
		done += copy(pg[at%pageSize:], p[done:])
	}
	w.size = max(w.size, end)
	return nil
}

// resizeLocked sets the file's size: pages past it are freed and the rest
// of its last page reads as zeros. n.mu is held.
func (n *Node) resizeLocked(size int64) error {
	if size < 0 {
		return unix.EINVAL
	}
	if err := n.ownPagesLocked(size); err != nil {
		return err
	}
	w := n.written
	last := (size + pageSize - 1) / pageSize
	freed := int64(0)
	for i := range w.pages {
		if i >= last {
			delete(w.pages, i)
			freed++
		}
	}
	n.chargeLocked(-freed * pageSize)
	if pg := w.pages[size/pageSize]; pg != nil && size%pageSize != 0 {
		clear(pg[size%pageSize:])
	}
	w.size = size
	return nil
}

// chargeLocked adds delta bytes to the file's charge, the tree's and its
// mount's: ENOSPC past either limit. n.mu is held.
func (n *Node) chargeLocked(delta int64) error {
	if delta == 0 {
		return nil
	}
	if t := n.tree; t != nil {
		mnt := t.tmpfsOf(n.Dev)
		if delta > 0 {
			// delta may be near 2^63 (a sparse range): compared, not added.
			if limit := t.data.limit.Load(); limit > 0 && delta > limit-t.data.used.Load() {
				return unix.ENOSPC
			}
			if mnt != nil {
				if size := mnt.size.Load(); size > 0 && delta > size-mnt.used.Load() {
					return unix.ENOSPC
				}
			}
		}
		if mnt != nil {
			mnt.used.Add(delta)
		}
		t.data.used.Add(delta)
	}
	n.charged += delta
	return nil
}

// releaseLocked returns the file's charge. n.mu is held.
func (n *Node) releaseLocked() {
	if t := n.tree; t != nil {
		if mnt := t.tmpfsOf(n.Dev); mnt != nil {
			mnt.used.Add(-n.charged)
		}
		t.data.used.Add(-n.charged)
	}
	n.charged = 0
}

// releaseIfGoneLocked returns the file's charge once nothing can reach its
// pages to write them: no name, no open description, no shared mapping
// (as Linux frees an unlinked file's pages at its last close). n.mu is
// held.
func (n *Node) releaseIfGoneLocked() {
	if n.Links == 0 && n.opens == 0 && n.mapped == nil {
		n.releaseLocked()
		n.dropXattrsLocked()
	}
}

// unlinked is called when n's last name is gone.
func (n *Node) unlinked() {
	n.mu.Lock()
	n.releaseIfGoneLocked()
	n.mu.Unlock()
}
