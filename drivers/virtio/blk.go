//go:build riscv64

package virtio

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"unsafe"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/mm"
)

// virtio-blk (virtio 1.2, section 5.2): one request queue; a request is a
// chain of a 16-byte header the device reads, the data pages and a status
// byte it writes. The kernel only reads: the root image is attached
// read-only.
const (
	blkConfigCapacity = 0x100 // u64, in 512-byte sectors
	blkSectorSize     = 512
	blkRequestIn      = 0 // VIRTIO_BLK_T_IN: read
	blkStatusOK       = 0
	// blkPages bounds one request's data: 128 KiB, a chain of 32 pages plus
	// the header and status descriptors.
	blkPages = 32
)

// Block is a virtio block device, read with ReadAt. Requests are served
// one at a time.
type Block struct {
	dev  *Device
	q    *Queue
	size int64

	mu   sync.Mutex
	hdr  Buffer // the request header at 0, the status byte at 16
	data [blkPages]Buffer
}

// OpenBlock initialises the block device at base.
func OpenBlock(base uintptr, irq int) (*Block, error) {
	d, q, err := openOneQueue(base, irq)
	if err != nil {
		return nil, err
	}
	b := &Block{dev: d, q: q, size: int64(arch.Read64(base+blkConfigCapacity)) * blkSectorSize}
	if b.hdr, err = NewBuffer(); err != nil {
		return nil, err
	}
	for i := range b.data {
		if b.data[i], err = NewBuffer(); err != nil {
			return nil, err
		}
	}
	d.Start()
	return b, nil
}

// Size is the device's capacity in bytes.
func (b *Block) Size() int64 { return b.size }

// ReadAt reads len(p) bytes at off, at any alignment; io.EOF past the end.
func (b *Block) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("virtio-blk: negative offset %d", off)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	done := 0
	for done < len(p) {
		at := off + int64(done)
		if at >= b.size {
			return done, io.EOF
		}
		sector := at / blkSectorSize
		skip := int(at % blkSectorSize)
		want := min(int64(skip+len(p)-done), b.size-sector*blkSectorSize, blkPages*mm.PageSize)
		span := int((want + blkSectorSize - 1) &^ (blkSectorSize - 1))
		if err := b.read(sector, span, b.data[:]); err != nil {
			return done, err
		}
		for pos := skip; pos < int(want); {
			i, in := pos/mm.PageSize, pos%mm.PageSize
			k := copy(p[done:], b.data[i].Bytes()[in:min(mm.PageSize, int(want)-i*mm.PageSize)])
			done += k
			pos += k
		}
	}
	return done, nil
}

// NewPages returns n pages for ReadPages (fs.PageDevice).
func (b *Block) NewPages(n int) ([][]byte, error) {
	pages := make([][]byte, n)
	for i := range pages {
		buf, err := NewBuffer()
		if err != nil {
			return nil, err
		}
		pages[i] = buf.Bytes()
	}
	return pages, nil
}

// ReadPages reads n bytes at off, a multiple of the sector size, straight
// into pages from NewPages (fs.PageDevice): no bounce through b.data.
func (b *Block) ReadPages(pages [][]byte, off int64, n int) error {
	if off < 0 || off%blkSectorSize != 0 || n < 0 || n > len(pages)*mm.PageSize || off+int64(n) > b.size {
		return fmt.Errorf("virtio-blk: a read of %d bytes at %d", n, off)
	}
	bufs := make([]Buffer, 0, blkPages)
	for i := 0; i*mm.PageSize < n; i++ {
		bufs = append(bufs, Buffer{PA: mm.PhysOf(unsafe.Pointer(unsafe.SliceData(pages[i]))), Size: mm.PageSize})
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for done := 0; done < n; done += blkPages * mm.PageSize {
		span := min(n-done, blkPages*mm.PageSize)
		span = (span + blkSectorSize - 1) &^ (blkSectorSize - 1)
		first := done / mm.PageSize
		if err := b.read((off+int64(done))/blkSectorSize, span, bufs[first:]); err != nil {
			return err
		}
	}
	return nil
}

// read fills the first span bytes of the pages data from sector on; b.mu
// is held.
func (b *Block) read(sector int64, span int, data []Buffer) error {
	hdr := b.hdr.Bytes()
	binary.LittleEndian.PutUint32(hdr[0:], blkRequestIn)
	binary.LittleEndian.PutUint32(hdr[4:], 0)
	binary.LittleEndian.PutUint64(hdr[8:], uint64(sector))
	hdr[16] = 0xff
	segs := make([]Segment, 0, blkPages+2)
	segs = append(segs, Segment{PA: b.hdr.PA, Len: 16})
	for i := 0; i*mm.PageSize < span; i++ {
		segs = append(segs, Segment{PA: data[i].PA, Len: min(mm.PageSize, span-i*mm.PageSize), Write: true})
	}
	segs = append(segs, Segment{PA: b.hdr.PA + 16, Len: 1, Write: true})
	if _, err := b.q.AddChain(segs); err != nil {
		return err
	}
	b.q.Notify()
	for {
		if _, _, ok := b.q.Used(); ok {
			break
		}
		b.dev.WaitInterrupt()
	}
	if hdr[16] != blkStatusOK {
		return fmt.Errorf("virtio-blk: read of %d bytes at sector %d: status %d", span, sector, hdr[16])
	}
	return nil
}
