package syscall

import (
	"errors"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/aio"
	"github.com/jiege-go/jiege/mm"
)

// Native AIO: io_setup maps a context's ring (its address is the
// context's id) and io_submit performs each request at once, as Linux
// does for buffered I/O (a read from an empty pipe blocks in io_submit
// unless RWF_NOWAIT), posting its completion for io_getevents. The ring's
// header says how many events it holds but not AIO_RING_MAGIC: completions
// are not written into it, so libaio reaps them by io_getevents.
// IOCB_CMD_POLL is not offered (EINVAL, as a kernel before 4.18).

func init() {
	register(sysno.IoSetup, sysIoSetup)
	register(sysno.IoDestroy, sysIoDestroy)
	register(sysno.IoSubmit, sysIoSubmit)
	register(sysno.IoGetevents, sysIoGetevents)
	register(sysno.IoPgetevents, sysIoPgetevents)
	register(sysno.IoCancel, sysIoCancel)
}

// sysIoSetup implements io_setup(2).
func sysIoSetup(t *kernel.Task, a Args) (uint64, error) {
	var id uint64
	if err := copyInStruct(t, a[1], &id); err != nil {
		return 0, err
	}
	if id != 0 {
		return 0, unix.EINVAL
	}
	nr := uint32(a[0])
	length, events, err := aio.RingSize(nr, t.Kernel().CPUs())
	if err != nil {
		return 0, err
	}
	p := t.Proc
	ring, err := mapRing(p, length)
	if err != nil {
		return 0, unix.ENOMEM
	}
	unmap := func() { unmapRing(p, ring, length) }
	header := linux.AIORing{ID: 0, Nr: uint32(events), CompatFeatures: 1, Len: uint32(unsafe.Sizeof(linux.AIORing{}))}
	if err := copyOutStruct(t, uint64(ring), header); err != nil {
		unmap()
		return 0, err
	}
	c, err := p.AIO().Setup(t.Kernel().AIOLimit(), uint64(ring), length, nr, events)
	if err != nil {
		unmap()
		return 0, err
	}
	if err := copyOutStruct(t, a[1], c.ID); err != nil {
		p.AIO().Destroy(c.ID)
		unmap()
		return 0, err
	}
	return 0, nil
}

// sysIoDestroy implements io_destroy(2): the context dies, its ring is
// unmapped and its completions not reaped are lost.
func sysIoDestroy(t *kernel.Task, a Args) (uint64, error) {
	c, ok := t.Proc.AIO().Destroy(a[0])
	if !ok {
		return 0, unix.EINVAL
	}
	unmapRing(t.Proc, uintptr(c.ID), c.Ring)
	return 0, nil
}

// mapRing maps a context's ring, readable and writable, where the
// address space has room.
func mapRing(p *kernel.Process, length uintptr) (uintptr, error) {
	p.Lock()
	defer p.Unlock()
	return p.AS.Mmap(0, length, mm.Mapping{Perm: protPerm(unix.PROT_READ | unix.PROT_WRITE)})
}

// unmapRing unmaps a context's ring.
func unmapRing(p *kernel.Process, ring, length uintptr) {
	p.Lock()
	defer p.Unlock()
	p.AS.Unmap(ring, length)
}

// sysIoSubmit implements io_submit(2): the number of iocbs taken, or the
// first one's error when none was.
func sysIoSubmit(t *kernel.Task, a Args) (uint64, error) {
	nr := int64(a[1])
	if nr < 0 {
		return 0, unix.EINVAL
	}
	c, ok := t.Proc.AIO().Get(a[0])
	if !ok {
		return 0, unix.EINVAL
	}
	nr = min(nr, int64(c.Events))
	done := int64(0)
	for ; done < nr; done++ {
		var iocbp uint64
		err := copyInStruct(t, a[2]+uint64(done)*8, &iocbp)
		if err == nil {
			err = submitOne(t, c, iocbp)
		}
		if err != nil {
			if done == 0 {
				return 0, err
			}
			break
		}
	}
	return uint64(done), nil
}

// rwFlagsKnown are the RWF_ flags a request may carry; RWF_NOWAIT is the
// one that changes what happens here.
const rwFlagsKnown = unix.RWF_HIPRI | unix.RWF_DSYNC | unix.RWF_SYNC | unix.RWF_NOWAIT

// submitOne makes io_submit_one's checks in Linux's order and performs
// the request: an error returned is io_submit's, the request's own
// result goes into its completion.
func submitOne(t *kernel.Task, c *aio.Context, iocbp uint64) error {
	var cb linux.IOCB
	if err := copyInStruct(t, iocbp, &cb); err != nil {
		return err
	}
	if cb.Reserved2 != 0 || int64(cb.NBytes) < 0 {
		return unix.EINVAL
	}
	if !c.Reserve() {
		return unix.EAGAIN
	}
	res, err := performIOCB(t, iocbp, &cb)
	if err != nil {
		c.Unreserve()
		return err
	}
	c.Complete(aio.Event{Data: cb.Data, Obj: iocbp, Res: res})
	return nil
}

// performIOCB looks up the iocb's files, writes its key, and runs it; res
// is its completion's result.
func performIOCB(t *kernel.Task, iocbp uint64, cb *linux.IOCB) (res int64, err error) {
	d, err := t.Proc.Files.Get(int(int32(cb.FD)))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	var notify *fs.EventFD
	if cb.Flags&linux.IOCBFlagResFD != 0 {
		e, err := t.Proc.Files.Get(int(int32(cb.ResFD)))
		if err != nil {
			return 0, err
		}
		defer e.DecRef()
		var ok bool
		if notify, ok = e.File.(*fs.EventFD); !ok {
			return 0, unix.EINVAL
		}
	}
	if err := copyOutStruct(t, iocbp+uint64(unsafe.Offsetof(cb.Key)), uint32(linux.KIOCBKey)); err != nil {
		return 0, err
	}
	switch cb.Opcode {
	case linux.IOCBCmdPread, linux.IOCBCmdPreadv, linux.IOCBCmdPwrite, linux.IOCBCmdPwritev:
		res, err = aioReadWrite(t, d, cb)
	case linux.IOCBCmdFsync, linux.IOCBCmdFdsync:
		if cb.Buf != 0 || cb.Offset != 0 || cb.NBytes != 0 || cb.RWFlags != 0 {
			return 0, unix.EINVAL
		}
		if _, ok := d.NodeFile(); !ok {
			return 0, unix.EINVAL // pipes, sockets: no fsync
		}
	default:
		return 0, unix.EINVAL
	}
	if err != nil {
		return 0, err
	}
	if notify != nil {
		notify.Signal(1)
	}
	return res, nil
}

// aioReadWrite is aio_read and aio_write: the checks that fail the
// submission, then the transfer, whose error is the completion's result.
func aioReadWrite(t *kernel.Task, d *fs.Description, cb *linux.IOCB) (int64, error) {
	if cb.Flags&linux.IOCBFlagIOPrio != 0 && !validIOPrio(cb.ReqPrio) {
		return 0, unix.EINVAL
	}
	if cb.RWFlags&^rwFlagsKnown != 0 {
		return 0, unix.EOPNOTSUPP
	}
	write := cb.Opcode == linux.IOCBCmdPwrite || cb.Opcode == linux.IOCBCmdPwritev
	if write && !d.Writable() || !write && !d.Readable() {
		return 0, unix.EBADF
	}
	vs := oneIovec(cb.Buf, cb.NBytes)
	if cb.Opcode == linux.IOCBCmdPreadv || cb.Opcode == linux.IOCBCmdPwritev {
		var err error
		var few [fewIovecs]iovec
		if vs, err = readIovecs(t, cb.Buf, cb.NBytes, &few); err != nil {
			return 0, err
		}
	}
	mode := ioMode{nonblock: d.Nonblock() || cb.RWFlags&unix.RWF_NOWAIT != 0}
	var n uint64
	var err error
	switch {
	case d.Positioned():
		pos := cb.Offset
		if pos < 0 || pos+int64(iovecsLen(vs)) < 0 {
			return 0, unix.EINVAL
		}
		if write {
			n, err = writeFrom(t, d, vs, func(src fs.UserIO) (int64, error) {
				k, err := d.WriteAt(src, pos)
				pos += k
				return k, err
			}, mode)
		} else {
			n, err = readTo(t, d, vs, func(dst fs.UserIO) (int64, error) {
				k, err := d.ReadAt(dst, pos)
				pos += k
				return k, err
			}, mode)
		}
	case write:
		n, err = writeFrom(t, d, vs, d.File.WriteFrom, mode)
	default:
		n, err = readTo(t, d, vs, d.File.ReadTo, mode)
	}
	var errno unix.Errno
	switch {
	case err == nil:
		return int64(n), nil
	case errors.As(err, &errno):
		return -int64(errno), nil
	default:
		return -int64(unix.EIO), nil
	}
}

// validIOPrio is ioprio_check_cap's test of a class and level, for a
// caller that may use every class (root).
func validIOPrio(prio int16) bool {
	class, level := uint16(prio)>>13, uint16(prio)&0x1fff
	switch class {
	case 0: // IOPRIO_CLASS_NONE
		return level == 0
	case 1, 2: // IOPRIO_CLASS_RT, IOPRIO_CLASS_BE
		return level < 8
	case 3: // IOPRIO_CLASS_IDLE
		return true
	}
	return false
}

// sysIoGetevents implements io_getevents(2).
func sysIoGetevents(t *kernel.Task, a Args) (uint64, error) {
	return ioGetevents(t, a, nil)
}

// sysIoPgetevents implements io_pgetevents(2): io_getevents with the
// signal mask of struct __aio_sigset in place while it waits.
func sysIoPgetevents(t *kernel.Task, a Args) (uint64, error) {
	var mask *kernel.SigSet
	if a[5] != 0 {
		var usig struct{ Mask, Size uint64 }
		if err := copyInStruct(t, a[5], &usig); err != nil {
			return 0, err
		}
		var err error
		if mask, err = sigmaskArg(t, usig.Mask, usig.Size); err != nil {
			return 0, err
		}
	}
	return ioGetevents(t, a, mask)
}

// ioGetevents waits until min_nr completions are there, the timeout
// passes or a signal comes, and copies out up to nr of them.
func ioGetevents(t *kernel.Task, a Args, mask *kernel.SigSet) (n uint64, err error) {
	minNr, nr := int64(a[1]), int64(a[2])
	deadline, noWait := time.Time{}, false
	if a[4] != 0 {
		var ts linux.Timespec
		if err := copyInStruct(t, a[4], &ts); err != nil {
			return 0, err
		}
		d := time.Duration(ts.Sec)*time.Second + time.Duration(ts.Nsec)
		if ts.Sec > 1<<33 {
			d = 0 // beyond any wait: none
		} else if d <= 0 {
			noWait = true
		} else {
			deadline = time.Now().Add(d)
		}
	}
	c, ok := t.Proc.AIO().Get(a[0])
	if !ok || minNr < 0 || nr < 0 || minNr > nr {
		return 0, unix.EINVAL
	}
	if mask != nil {
		t.BeginMaskedWait(*mask)
		defer func() { t.EndMaskedWait(err) }()
	}
	got := int64(0)
	for {
		es, wake, dead := c.Take(int(nr - got))
		if len(es) > 0 {
			out := make([]linux.IOEvent, len(es))
			for i, e := range es {
				out[i] = linux.IOEvent{Data: e.Data, Obj: e.Obj, Res: e.Res, Res2: e.Res2}
			}
			if err := copyOutStructs(t, a[3]+uint64(got)*32, out); err != nil {
				c.Untake(es)
				if got > 0 {
					return uint64(got), nil
				}
				return 0, err
			}
			got += int64(len(es))
		}
		if got >= minNr || got == nr || noWait || dead {
			return uint64(got), nil
		}
		if err := t.Block(wake, deadline); err == unix.ETIMEDOUT {
			return uint64(got), nil
		} else if err != nil {
			if got > 0 {
				return uint64(got), nil
			}
			return 0, err
		}
	}
}

// sysIoCancel implements io_cancel(2). Every request completed when it
// was submitted, so none is in flight to cancel: EINVAL after the checks
// Linux makes first.
func sysIoCancel(t *kernel.Task, a Args) (uint64, error) {
	var key uint32
	if err := copyInStruct(t, a[1]+uint64(unsafe.Offsetof(linux.IOCB{}.Key)), &key); err != nil {
		return 0, err
	}
	if key != linux.KIOCBKey {
		return 0, unix.EINVAL
	}
	if _, ok := t.Proc.AIO().Get(a[0]); !ok {
		return 0, unix.EINVAL
	}
	return 0, unix.EINVAL
}
