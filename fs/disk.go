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

// diskWindows small windows of the device serve reads of headers and
// read-through files.
const (
	diskWindow  = 128 << 10
	diskWindows = 4
)

// diskImage reads the device through its windows.
type diskImage struct {
	dev  io.ReaderAt
	size int64

	mu      sync.Mutex
	windows [diskWindows]struct {
		off int64
		buf []byte
	}
	victim int // the window refilled next
}

func newDiskImage(dev io.ReaderAt, size int64) *diskImage {
	d := &diskImage{dev: dev, size: size}
	for i := range d.windows {
		d.windows[i].buf = make([]byte, 0, diskWindow)
	}
	return d
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
	w := d.window(off, int64(len(p)))
	if w == nil {
		start := off &^ (pageSize - 1)
		v := &d.windows[d.victim]
		d.victim = (d.victim + 1) % diskWindows
		v.off, v.buf = start, v.buf[:min(diskWindow, d.size-start)]
		if n, err := d.dev.ReadAt(v.buf, start); n < len(v.buf) {
			v.buf = v.buf[:0]
			return 0, fmt.Errorf("root image: read at %d: %w", start, err)
		}
		w = v
	}
	copy(p, w.buf[off-w.off:])
	if short {
		return len(p), io.EOF
	}
	return len(p), nil
}

// window finds a window holding [off, off+n); d.mu is held.
func (d *diskImage) window(off, n int64) *struct {
	off int64
	buf []byte
} {
	for i := range d.windows {
		w := &d.windows[i]
		if off >= w.off && off+n <= w.off+int64(len(w.buf)) {
			return w
		}
	}
	return nil
}

// diskFile is a regular file's data on the device.
type diskFile struct {
	img       *diskImage
	off, size int64
	whole     atomic.Pointer[[]byte] // the data, while the cache holds it
}

// The cache of whole files: FIFO order, at most diskCacheLimit bytes;
// files over a quarter of it are never kept. read keeps files up to
// diskCacheFile (configuration, web pages, scripts); larger ones (shared
// libraries, which their mappings copy page by page anyway, large
// downloads) are read through the windows, unless exec loads them. A
// file's copy is Go heap, whose pages the kernel faults in one by one.
const diskCacheFile = 256 << 10

var diskCache struct {
	mu    sync.Mutex
	limit int64
	used  int64
	files []*diskFile
}

// SetDiskCacheLimit sets how many bytes of files read from a root image
// stay in memory.
func SetDiskCacheLimit(bytes int64) {
	diskCache.mu.Lock()
	diskCache.limit = bytes
	diskCache.mu.Unlock()
}

// diskCacheLimit is the most the disk cache holds.
func diskCacheLimit() int64 {
	diskCache.mu.Lock()
	defer diskCache.mu.Unlock()
	return diskCache.limit
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
			return copy(p, w[off:]), nil
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
		return copy(p, (*w)[off:]), nil
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
	diskCache.mu.Lock()
	fits := f.size <= diskCache.limit/4
	diskCache.mu.Unlock()
	if !fits {
		return nil
	}
	data := make([]byte, f.size)
	if n, err := f.img.ReadAt(data, f.off); n < len(data) {
		fmt.Printf("kernel: %v\n", err)
		return nil
	}
	diskCache.mu.Lock()
	defer diskCache.mu.Unlock()
	if w := f.whole.Load(); w != nil {
		return *w // loaded meanwhile
	}
	for diskCache.used+f.size > diskCache.limit && len(diskCache.files) > 0 {
		old := diskCache.files[0]
		diskCache.files = diskCache.files[1:]
		diskCache.used -= old.size
		old.whole.Store(nil)
	}
	diskCache.files = append(diskCache.files, f)
	diskCache.used += f.size
	f.whole.Store(&data)
	return data
}
