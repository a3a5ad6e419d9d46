//go:build riscv64

package virtio

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/mm"
)

// Split virtqueue layout (virtio 1.2, section 2.7).
const (
	descFlagNext  = 1
	descFlagWrite = 2
	queueSize     = 64 // descriptors; the rings of 64 fit in one page each
	// usedFlagNoNotify in the used ring's flags: the device does not need
	// a notification now (it is working through the queue, or has buffers
	// enough); section 2.7.10, without VIRTIO_F_EVENT_IDX.
	usedFlagNoNotify = 1
	// availFlagNoInterrupt in the available ring's flags: the driver does
	// not need an interrupt when the device uses a buffer (section 2.7.7).
	availFlagNoInterrupt = 1
)

type desc struct {
	addr  uint64
	len   uint32
	flags uint16
	next  uint16
}

// Buffer is a physically contiguous buffer the device reads or writes.
type Buffer struct {
	PA   uintptr // physical address
	Size int
}

// Bytes is the buffer's memory.
func (b Buffer) Bytes() []byte { return unsafe.Slice((*byte)(mm.Ptr(b.PA)), b.Size) }

// NewBuffer returns a zeroed one-page buffer.
func NewBuffer() (Buffer, error) {
	pa := arch.AllocFrame()
	if pa == 0 {
		return Buffer{}, fmt.Errorf("virtio: out of frames")
	}
	return Buffer{PA: pa, Size: mm.PageSize}, nil
}

// Queue is one split virtqueue. A descriptor is handed to the device by
// Submit and comes back from Used; it is never touched in between, and
// Queue never reuses a descriptor the device still owns.
type Queue struct {
	dev        *Device
	index      int
	descs      *[queueSize]desc
	avail      uintptr // flags u16, idx u16, ring [queueSize]u16
	used       uintptr // flags u16, idx u16, ring [queueSize]{id, len u32}
	free       []uint16
	availIdx   uint16
	availFlags uint16
	lastUsed   uint16
	notified   uint16 // availIdx at the last Notify
}

// Queue sets up virtqueue index.
func (d *Device) Queue(index int) (*Queue, error) {
	d.write(regQueueSel, uint32(index))
	if max := d.read(regQueueNumMax); max < queueSize {
		return nil, fmt.Errorf("virtio: queue %d holds %d descriptors, need %d", index, max, queueSize)
	}
	descPage, availPage, usedPage := arch.AllocFrame(), arch.AllocFrame(), arch.AllocFrame()
	if descPage == 0 || availPage == 0 || usedPage == 0 {
		return nil, fmt.Errorf("virtio: out of frames for queue %d", index)
	}
	q := &Queue{dev: d, index: index, descs: (*[queueSize]desc)(mm.Ptr(descPage)), avail: availPage, used: usedPage}
	for i := queueSize - 1; i >= 0; i-- {
		q.free = append(q.free, uint16(i))
	}
	d.write(regQueueNum, queueSize)
	d.write(regQueueDescLow, uint32(descPage))
	d.write(regQueueDescHigh, uint32(uint64(descPage)>>32))
	d.write(regQueueDriverLow, uint32(availPage))
	d.write(regQueueDriverHigh, uint32(uint64(availPage)>>32))
	d.write(regQueueDeviceLow, uint32(usedPage))
	d.write(regQueueDeviceHigh, uint32(uint64(usedPage)>>32))
	d.write(regQueueReady, 1)
	return q, nil
}

// Submit offers a buffer to the device and notifies it (Add, then Notify).
func (q *Queue) Submit(b Buffer, length int, write bool) (uint16, error) {
	id, err := q.Add(b, length, write)
	if err == nil {
		q.Notify()
	}
	return id, err
}

// Add offers a buffer to the device, device-writable when write is set,
// device-readable otherwise, without telling it: a batch of buffers is
// added, then one Notify. It returns the descriptor's id.
func (q *Queue) Add(b Buffer, length int, write bool) (uint16, error) {
	if len(q.free) == 0 {
		return 0, fmt.Errorf("virtio: queue %d full", q.index)
	}
	id := q.free[len(q.free)-1]
	q.free = q.free[:len(q.free)-1]
	var flags uint16
	if write {
		flags = descFlagWrite
	}
	q.descs[id] = desc{addr: uint64(b.PA), len: uint32(length), flags: flags}
	q.publish(id)
	return id, nil
}

// publish puts the chain starting at head in the available ring.
func (q *Queue) publish(head uint16) {
	ring := (*[queueSize]uint16)(mm.Ptr(q.avail + 4))
	ring[q.availIdx%queueSize] = head
	q.availIdx++
	// The ring entry must be visible before the index that publishes it:
	// the atomic store orders them (RISC-V AMO with release semantics).
	q.storeAvail()
}

// storeAvail writes the available ring's flags and index (one word).
func (q *Queue) storeAvail() {
	atomic.StoreUint32((*uint32)(mm.Ptr(q.avail)), uint32(q.availIdx)<<16|uint32(q.availFlags))
}

// SuppressInterrupts asks the device not to interrupt when it uses a
// buffer (on), or to interrupt again. The device may still interrupt
// once: the flag is a hint. After turning interrupts back on, a driver
// checks HasUsed before it waits: a buffer used just before is not
// announced. Only the queue's one writer may call it (as Add).
func (q *Queue) SuppressInterrupts(on bool) {
	q.availFlags = 0
	if on {
		q.availFlags = availFlagNoInterrupt
	}
	q.storeAvail()
}

// QuietOnInterrupt has the device's interrupt suppress the queue's
// interrupts (arch.QuietOnIRQ) until the driver calls
// SuppressInterrupts(false): for a queue the driver works through after
// each interrupt.
func (q *Queue) QuietOnInterrupt() { arch.QuietOnIRQ(q.dev.irqNum, mm.Ptr(q.avail)) }

// HasUsed reports whether the device has finished with a buffer that Used
// has not returned yet. The load is ordered after SuppressInterrupts'
// store: Go's atomics are sequentially consistent.
func (q *Queue) HasUsed() bool {
	return uint16(atomic.LoadUint32((*uint32)(mm.Ptr(q.used)))>>16) != q.lastUsed
}

// Segment is one part of a descriptor chain: a physically contiguous
// range the device reads, or writes when Write is set.
type Segment struct {
	PA    uintptr
	Len   int
	Write bool
}

// AddChain offers one request made of several segments (a virtio-blk
// request: header, data, status) without notifying the device, and
// returns the id of its first descriptor, which Used reports.
func (q *Queue) AddChain(segs []Segment) (uint16, error) {
	if len(segs) == 0 || len(q.free) < len(segs) {
		return 0, fmt.Errorf("virtio: queue %d has no room for %d descriptors", q.index, len(segs))
	}
	var next uint16
	for i := len(segs) - 1; i >= 0; i-- {
		id := q.free[len(q.free)-1]
		q.free = q.free[:len(q.free)-1]
		d := desc{addr: uint64(segs[i].PA), len: uint32(segs[i].Len)}
		if segs[i].Write {
			d.flags = descFlagWrite
		}
		if i < len(segs)-1 {
			d.flags |= descFlagNext
			d.next = next
		}
		q.descs[id] = d
		next = id
	}
	q.publish(next)
	return next, nil
}

// Notify tells the device that buffers were added. A notification is an
// MMIO write that QEMU serves under its big lock: it is skipped when no
// buffer was added since the last, and when the device says it does not
// need one. The atomic store of Add and this load are ordered (store,
// then load), as the suppression protocol requires.
func (q *Queue) Notify() {
	if q.notified == q.availIdx {
		return
	}
	q.notified = q.availIdx
	if atomic.LoadUint32((*uint32)(mm.Ptr(q.used)))&usedFlagNoNotify == 0 {
		q.dev.write(regQueueNotify, uint32(q.index))
	}
}

// Used returns the next buffer the device has finished with, if any: its
// (first) descriptor id and the number of bytes the device wrote. Its
// descriptors become free again.
func (q *Queue) Used() (id uint16, n int, ok bool) {
	idx := uint16(atomic.LoadUint32((*uint32)(mm.Ptr(q.used))) >> 16)
	if idx == q.lastUsed {
		return 0, 0, false
	}
	elem := q.used + 4 + 8*uintptr(q.lastUsed%queueSize)
	id = uint16(*(*uint32)(mm.Ptr(elem)))
	n = int(*(*uint32)(mm.Ptr(elem + 4)))
	q.lastUsed++
	for d := id; ; d = q.descs[d].next {
		q.free = append(q.free, d)
		if q.descs[d].flags&descFlagNext == 0 {
			break
		}
	}
	return id, n, true
}
