package fs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"sync/atomic"
	"testing"

	"github.com/u-root/u-root/pkg/cpio"
	"golang.org/x/sys/unix"
)

// countingDisk is a device over an image that counts the bytes read.
type countingDisk struct {
	image []byte
	read  atomic.Int64
	fail  atomic.Bool
}

func (d *countingDisk) ReadAt(p []byte, off int64) (int, error) {
	if d.fail.Load() {
		return 0, errors.New("device failed")
	}
	if off >= int64(len(d.image)) {
		return 0, io.EOF
	}
	n := copy(p, d.image[off:])
	d.read.Add(int64(n))
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func readAll(t *testing.T, tr *Tree, name string) []byte {
	t.Helper()
	n, err := tr.Lookup(nil, name, true)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	f := &NodeFile{tree: tr, node: n}
	out := make([]byte, 0, 1<<20)
	buf := make([]byte, 3000) // reads that straddle windows and pages
	for off := int64(0); ; {
		k, err := f.ReadAt(buf, off)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if k == 0 {
			return out
		}
		out = append(out, buf[:k]...)
		off += int64(k)
	}
}

func TestUnpackDiskReadsDataOnDemand(t *testing.T) {
	big := make([]byte, 3<<20) // larger than the cache allows to keep
	rand.New(rand.NewSource(1)).Read(big)
	image := archive(t,
		cpio.Directory("etc", 0o755),
		cpio.StaticFile("etc/motd", "hi", 0o644),
		cpio.StaticFile("big", string(big), 0o644),
		cpio.Symlink("motd", "etc/motd"),
		cpio.StaticFile("small", "small file", 0o755),
	)
	image = append(image, make([]byte, 1000)...) // a disk's padding
	d := &countingDisk{image: image}
	tr, err := UnpackDisk(d, int64(len(image)))
	if err != nil {
		t.Fatal(err)
	}
	tr.SetDiskCacheLimit(1 << 20)
	if got := d.read.Load(); got > 2*diskWindow {
		t.Errorf("unpacking read %d bytes of a %d-byte image", got, len(image))
	}
	if got := readAll(t, tr, "/motd"); string(got) != "hi" {
		t.Errorf("/motd: %q", got)
	}
	if got := readAll(t, tr, "/small"); string(got) != "small file" {
		t.Errorf("/small: %q", got)
	}
	for range 2 {
		before := d.read.Load()
		if got := readAll(t, tr, "/big"); !bytes.Equal(got, big) {
			t.Fatalf("/big: %d bytes differ from the %d written", len(got), len(big))
		}
		if n := d.read.Load() - before; n < int64(len(big))/2 {
			t.Errorf("/big read %d bytes from the device: cached, though over the limit", n)
		}
	}
	before := d.read.Load()
	readAll(t, tr, "/small")
	if n := d.read.Load() - before; n != 0 {
		t.Errorf("a second read of /small read %d bytes from the device", n)
	}
	// A write makes the file's own pages, from the disk's data.
	n, _ := tr.Lookup(nil, "/big", true)
	f := &NodeFile{tree: tr, node: n}
	if _, err := f.WriteAt([]byte("XY"), 5); err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]byte{}, big[:5]...), "XY"...), big[7:]...)
	if got := readAll(t, tr, "/big"); !bytes.Equal(got, want) {
		t.Error("/big after a write differs")
	}
	if err := f.Truncate(0); err != nil { // its pages leave the tree's limit
		t.Fatal(err)
	}
}

// A mapped library's pages come through the windows in the order the
// program faults them in: each stretch of the device is read once while
// the windows can hold the file.
func TestDiskPagesInAnyOrderReadOnce(t *testing.T) {
	lib := make([]byte, diskWindows*diskWindow/2+1234)
	rand.New(rand.NewSource(2)).Read(lib)
	image := archive(t, cpio.StaticFile("odd", "x", 0o644), cpio.StaticFile("lib", string(lib), 0o644))
	d := &countingDisk{image: image}
	tr, err := UnpackDisk(d, int64(len(image)))
	if err != nil {
		t.Fatal(err)
	}
	tr.SetDiskCacheLimit(1 << 20) // too small to keep lib whole
	n, err := tr.Lookup(nil, "/lib", true)
	if err != nil {
		t.Fatal(err)
	}
	pages := (len(lib) + pageSize - 1) / pageSize
	before := d.read.Load()
	page := make([]byte, pageSize)
	for _, i := range rand.New(rand.NewSource(3)).Perm(pages) {
		clear(page)
		MappedNode{n}.ReadPage(uintptr(i), page)
		want := lib[i*pageSize : min(len(lib), (i+1)*pageSize)]
		if !bytes.Equal(page[:len(want)], want) {
			t.Fatalf("page %d differs", i)
		}
	}
	if got, most := d.read.Load()-before, int64(len(lib)+2*diskWindow); got > most {
		t.Errorf("%d pages in random order read %d bytes from the device, more than %d", pages, got, most)
	}
}

func TestDiskCacheDropsOldestFiles(t *testing.T) {
	var recs []cpio.Record
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		recs = append(recs, cpio.StaticFile(name, string(bytes.Repeat([]byte(name), 256<<10)), 0o644))
	}
	image := archive(t, recs...)
	d := &countingDisk{image: image}
	tr, err := UnpackDisk(d, int64(len(image)))
	if err != nil {
		t.Fatal(err)
	}
	tr.SetDiskCacheLimit(1 << 20) // four of the five files fit
	for _, name := range []string{"/a", "/b", "/c", "/d", "/e", "/a"} {
		readAll(t, tr, name)
	}
	readFrom := func(name string) int64 {
		before := d.read.Load()
		readAll(t, tr, name)
		return d.read.Load() - before
	}
	// e pushed a out, a coming back pushed b out; c stays.
	if n := readFrom("/c"); n != 0 {
		t.Errorf("/c read %d bytes from the device again", n)
	}
	if n := readFrom("/b"); n == 0 {
		t.Error("/b still cached: the cache holds more than its limit")
	}
}

func TestExecOfALargeDiskFileIsRefused(t *testing.T) {
	image := archive(t, cpio.StaticFile("big", string(make([]byte, 2<<20)), 0o755),
		cpio.StaticFile("mid", string(make([]byte, 600<<10)), 0o755))
	d := &countingDisk{image: image}
	tr, err := UnpackDisk(d, int64(len(image)))
	if err != nil {
		t.Fatal(err)
	}
	tr.SetDiskCacheLimit(1 << 20)
	big, _ := tr.Lookup(nil, "/big", true)
	if _, err := big.Contents(); err != unix.ENOMEM {
		t.Errorf("exec's read of a 2 MiB disk file with a 1 MiB cache: %v; want ENOMEM", err)
	}
	// Over a quarter of the cache (not kept), within the cache: copied.
	mid, _ := tr.Lookup(nil, "/mid", true)
	if data, err := mid.Contents(); err != nil || len(data) != 600<<10 {
		t.Errorf("exec's read of a 600 KiB disk file: %d bytes, %v", len(data), err)
	}
}

func TestDiskFailureIsEIO(t *testing.T) {
	image := archive(t, cpio.StaticFile("big", string(make([]byte, 1<<20)), 0o644))
	d := &countingDisk{image: image}
	tr, err := UnpackDisk(d, int64(len(image)))
	if err != nil {
		t.Fatal(err)
	}
	tr.SetDiskCacheLimit(1 << 20)
	d.fail.Store(true)
	// Past what the unpacking windows hold.
	n, _ := tr.Lookup(nil, "/big", true)
	f := &NodeFile{tree: tr, node: n}
	if k, err := f.ReadAt(make([]byte, 100), 900<<10); err != unix.EIO {
		t.Errorf("a read on a failed disk: %d bytes, %v; want EIO", k, err)
	}
	if _, err := n.Contents(); err != unix.EIO {
		t.Errorf("exec's read on a failed disk: %v; want EIO", err)
	}
}

// pageDisk is a countingDisk that reads into pages it hands out, as a
// block device's DMA does (PageDevice).
type pageDisk struct {
	countingDisk
	mine      map[*byte]bool
	pageReads atomic.Int64
}

func (d *pageDisk) NewPages(n int) ([][]byte, error) {
	pages := make([][]byte, n)
	for i := range pages {
		pages[i] = make([]byte, pageSize)
		d.mine[&pages[i][0]] = true
	}
	return pages, nil
}

func (d *pageDisk) ReadPages(pages [][]byte, off int64, n int) error {
	if off%512 != 0 || n > len(pages)*pageSize {
		return fmt.Errorf("a read of %d bytes at %d", n, off)
	}
	d.pageReads.Add(1)
	for i := 0; i*pageSize < n; i++ {
		if !d.mine[&pages[i][0]] {
			return errors.New("a page the device did not hand out")
		}
		copy(pages[i][:min(pageSize, n-i*pageSize)], d.image[off+int64(i*pageSize):])
	}
	return nil
}

func TestDiskWindowsAreTheDevicesPages(t *testing.T) {
	big := make([]byte, 1<<20+123)
	rand.New(rand.NewSource(2)).Read(big)
	image := append(archive(t, cpio.StaticFile("big", string(big), 0o644)), make([]byte, 700)...)
	d := &pageDisk{countingDisk: countingDisk{image: image}, mine: map[*byte]bool{}}
	tr, err := UnpackDisk(d, int64(len(image)))
	if err != nil {
		t.Fatal(err)
	}
	tr.SetDiskCacheLimit(1 << 20)
	if got := readAll(t, tr, "/big"); !bytes.Equal(got, big) {
		t.Fatalf("/big: %d bytes differ from the %d written", len(got), len(big))
	}
	if n := d.read.Load(); n != 0 {
		t.Errorf("%d bytes read with ReadAt: the windows did not use the device's pages", n)
	}
	if n := d.pageReads.Load(); n < int64(len(big)/diskWindow) {
		t.Errorf("%d window reads for a %d-byte file", n, len(big))
	}
}
