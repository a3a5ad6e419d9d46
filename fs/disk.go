package fs

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// A root image on a block device: the same newc archives as an initramfs
// (UnpackDisk), but nothing is read before it is needed. Unpacking reads
// the headers; a file's data stays on the device until it is first read,
// then a file small enough is kept whole in memory (a cache with a byte
// budget, the oldest dropped first) and a larger one is read through a few
// windows of the device on every access, so a file larger than RAM can be
// served. QEMU then loads nothing before the guest runs, where an
// initramfs is copied into RAM first.

// diskWindows windows of the device, each diskWindow bytes at a multiple
// of diskWindow, serve reads of headers and read-through files (mapped
// libraries' pages). Aligned, a stretch of the device is in one window or
// none, so a library's pages faulted in any order read each stretch once
// while it stays; the least recently used window is refilled.
const (
	diskWindow  = 128 << 10
	diskWindows = 16
)

// PageDevice is a device that reads whole sectors straight into pages of
// memory it hands out (a block device's DMA buffers): the windows are
// such pages, so a read through them copies the data once, out of the
// window, not twice. Another device is read into pages of the heap.
type PageDevice interface {
	// NewPages returns n pages that ReadPages reads into.
	NewPages(n int) ([][]byte, error)
	// ReadPages reads n bytes at off, a multiple of 512, into pages from
	// NewPages; n may end in a partial sector at the device's end.
	ReadPages(pages [][]byte, off int64, n int) error
}

// heapPages reads a device without PageDevice into pages of the heap.
type heapPages struct{ io.ReaderAt }

func (h heapPages) NewPages(n int) ([][]byte, error) {
	pages := make([][]byte, n)
	for i := range pages {
		pages[i] = make([]byte, pageSize)
	}
	return pages, nil
}

func (h heapPages) ReadPages(pages [][]byte, off int64, n int) error {
	for i := 0; i*pageSize < n; i++ {
		want := min(pageSize, n-i*pageSize)
		if got, err := h.ReadAt(pages[i][:want], off+int64(i*pageSize)); got < want {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// diskWindowPages is a window's size in pages.
const diskWindowPages = diskWindow / pageSize

// diskWindowBuf holds diskWindow bytes of the device from off, n of them
// valid.
type diskWindowBuf struct {
	off     int64
	n       int
	pages   [][]byte
	lastUse uint64 // diskImage.uses when last read
}

// diskImage reads the device through its windows.
type diskImage struct {
	dev   io.ReaderAt
	size  int64
	cache *diskCache // the tree's, which keeps its files whole

	mu      sync.Mutex
	pages   PageDevice
	windows [diskWindows]diskWindowBuf
	uses    uint64 // reads through the windows so far
}

func newDiskImage(dev io.ReaderAt, size int64) (*diskImage, error) {
	d := &diskImage{dev: dev, size: size}
	var ok bool
	if d.pages, ok = dev.(PageDevice); !ok {
		d.pages = heapPages{dev}
	}
	for i := range d.windows {
		pages, err := d.pages.NewPages(diskWindowPages)
		if err != nil {
			return nil, fmt.Errorf("root image: %w", err)
		}
		d.windows[i].pages = pages
	}
	return d, nil
}

// ReadAt reads p at off; io.EOF past the end. A read larger than half a
// window goes to the device directly.
func (d *diskImage) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("root image: negative offset %d", off)
	}
	if off >= d.size {
		return 0, io.EOF
	}
	short := int64(len(p)) > d.size-off
	if short {
		p = p[:d.size-off]
	}
	if len(p) > diskWindow/2 {
		n, err := d.dev.ReadAt(p, off)
		if err == nil && short {
			err = io.EOF
		}
		return n, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for done := 0; done < len(p); {
		at := off + int64(done)
		w, err := d.window(at &^ (diskWindow - 1))
		if err != nil {
			return done, err
		}
		done += copyBytes(p[done:], w.bytesFrom(at))
	}
	if short {
		return len(p), io.EOF
	}
	return len(p), nil
}

// bytesFrom returns the window's bytes from off (inside it) to the end
// of its page.
func (w *diskWindowBuf) bytesFrom(off int64) []byte {
	pos := int(off - w.off)
	return w.pages[pos/pageSize][pos%pageSize : min(pageSize, w.n-pos/pageSize*pageSize)]
}

// window returns the window at start (a multiple of diskWindow), filling
// the least recently used one from the device when none holds it; d.mu
// is held.
func (d *diskImage) window(start int64) (*diskWindowBuf, error) {
	d.uses++
	victim := &d.windows[0]
	for i := range d.windows {
		w := &d.windows[i]
		if w.n > 0 && w.off == start {
			w.lastUse = d.uses
			return w, nil
		}
		if w.lastUse < victim.lastUse {
			victim = w
		}
	}
	victim.off, victim.n, victim.lastUse = start, int(min(diskWindow, d.size-start)), d.uses
	if err := d.pages.ReadPages(victim.pages, start, victim.n); err != nil {
		victim.n = 0
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("root image: read at %d: %w", start, err)
	}
	return victim, nil
}

// diskFile is a regular file's data on the device.
type diskFile struct {
	img       *diskImage
	off, size int64
	whole     atomic.Pointer[[]byte] // the data, while the cache holds it
}

// The cache of whole files: FIFO order, at most its limit in bytes;
// files over a quarter of it are never kept. read keeps files up to
// diskCacheFile (configuration, web pages, scripts); larger ones (shared
// libraries, which their mappings copy page by page anyway, large
// downloads) are read through the windows, unless exec loads them. A
// file's copy is Go heap, whose pages the kernel faults in one by one.
const diskCacheFile = 256 << 10

// diskCache is a tree's cache of files from its root image (the image's
// diskFiles reach it through diskImage.cache).
type diskCache struct {
	mu    sync.Mutex
	limit int64
	used  int64
	files []*diskFile
}

// SetDiskCacheLimit sets how many bytes of files read from t's root
// image stay in memory.
func (t *Tree) SetDiskCacheLimit(bytes int64) {
	t.diskCache.mu.Lock()
	t.diskCache.limit = bytes
	t.diskCache.mu.Unlock()
}

// sizeLimit is the most the cache holds.
func (c *diskCache) sizeLimit() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}

// readAt copies the data at off into p and returns how much, keeping the
// file in the cache when it fits. A failed read of the device is EIO (and
// reported on the console).
func (f *diskFile) readAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, nil
	}
	if f.size <= diskCacheFile {
		if w := f.load(); w != nil {
			return copyBytes(p, w[off:]), nil
		}
	}
	return f.readThrough(p, off)
}

// readThrough is readAt without adding the file to the cache.
func (f *diskFile) readThrough(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, nil
	}
	p = p[:min(int64(len(p)), f.size-off)]
	if w := f.whole.Load(); w != nil {
		return copyBytes(p, (*w)[off:]), nil
	}
	n, err := f.img.ReadAt(p, f.off+off)
	if n < len(p) {
		fmt.Printf("kernel: %v\n", err)
		return n, unix.EIO
	}
	return n, nil
}

// load returns the whole data, reading it into the cache when it fits
// there; nil when it does not.
func (f *diskFile) load() []byte {
	if w := f.whole.Load(); w != nil {
		return *w
	}
	cache := f.img.cache
	cache.mu.Lock()
	fits := f.size <= cache.limit/4
	cache.mu.Unlock()
	if !fits {
		return nil
	}
	data := make([]byte, f.size)
	if n, err := f.img.ReadAt(data, f.off); n < len(data) {
		fmt.Printf("kernel: %v\n", err)
		return nil
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if w := f.whole.Load(); w != nil {
		return *w // loaded meanwhile
	}
	for cache.used+f.size > cache.limit && len(cache.files) > 0 {
		old := cache.files[0]
		cache.files = cache.files[1:]
		cache.used -= old.size
		old.whole.Store(nil)
	}
	cache.files = append(cache.files, f)
	cache.used += f.size
	f.whole.Store(&data)
	return data
}
