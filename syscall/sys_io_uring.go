package syscall

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/iouring"
)

// io_uring: io_uring_setup makes a ring whose memory the program maps
// (kernel/iouring); io_uring_enter takes the submissions queued and
// performs each at once, in the submitter's context, as native AIO does
// here (a read from an empty pipe blocks in io_uring_enter unless the
// file is non-blocking or RWF_NOWAIT), then posts its completion and,
// with IORING_ENTER_GETEVENTS, waits for min_complete of them. Linked
// requests after a failed one are cancelled; drain and async flags change
// nothing when every request is done in order. The operations offered
// are those of ioOps; the others complete with EINVAL.

func init() {
	register(sysno.IoUringSetup, sysIoUringSetup)
	register(sysno.IoUringEnter, sysIoUringEnter)
	register(sysno.IoUringRegister, sysIoUringRegister)
}

// sysIoUringSetup implements io_uring_setup(2).
func sysIoUringSetup(t *kernel.Task, a Args) (uint64, error) {
	var p linux.IOUringParams
	if err := copyInStruct(t, a[1], &p); err != nil {
		return 0, err
	}
	r, err := iouring.New(t.Kernel().UserMemory(), uint32(a[0]), &p)
	if err != nil {
		return 0, err
	}
	if err := copyOutStruct(t, a[1], p); err != nil {
		r.Close()
		return 0, err
	}
	fd, err := t.Proc.Files.Open(r, unix.O_RDWR, true)
	return uint64(fd), err
}

// ringOf returns the ring open on fd, with a reference the caller drops:
// EOPNOTSUPP for another file. A registered ring's index is EBADF, for no
// ring is ever registered (IORING_REGISTER_RING_FDS is not offered), or
// EINVAL past Linux's 16 slots.
func ringOf(t *kernel.Task, fd uint64, registered bool) (*iouring.Ring, *fs.Description, error) {
	if registered {
		if uint32(fd) >= 16 {
			return nil, nil, unix.EINVAL
		}
		return nil, nil, unix.EBADF
	}
	return fileOf[*iouring.Ring](t, fd, unix.EOPNOTSUPP)
}

// enterFlags are io_uring_enter's flags; SQ_WAKEUP and SQ_WAIT mean
// nothing without a polling thread, as on Linux.
const enterFlags = linux.IORingEnterGetevents | linux.IORingEnterSQWakeup | linux.IORingEnterSQWait |
	linux.IORingEnterExtArg | linux.IORingEnterRegisteredRing

// sysIoUringEnter implements io_uring_enter(2): the number of submissions
// taken, or, when none was asked, what the wait gave (ETIME, EINTR).
func sysIoUringEnter(t *kernel.Task, a Args) (uint64, error) {
	toSubmit, minComplete, flags := uint32(a[1]), uint32(a[2]), uint32(a[3])
	if flags&^enterFlags != 0 {
		return 0, unix.EINVAL
	}
	r, d, err := ringOf(t, a[0], flags&linux.IORingEnterRegisteredRing != 0)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	var wait waitArgs
	if flags&linux.IORingEnterGetevents != 0 {
		if wait, err = enterWaitArgs(t, flags, a[4], a[5]); err != nil {
			return 0, err
		}
	}
	submitted := uint32(0)
	if toSubmit > 0 {
		if submitted, err = submitRequests(t, r, toSubmit); err != nil {
			return 0, err
		}
		if submitted != toSubmit {
			return uint64(submitted), nil
		}
	}
	if flags&linux.IORingEnterGetevents == 0 {
		return uint64(submitted), nil
	}
	err = waitCompletions(t, r, min(minComplete, r.CQEntries), wait)
	if submitted > 0 || err == nil {
		return uint64(submitted), nil
	}
	return 0, err
}

// waitArgs are io_uring_enter's wait arguments: the signal mask's
// address and size, and the deadline.
type waitArgs struct {
	mask, maskSize uint64
	deadline       time.Time
}

// enterWaitArgs reads io_uring_enter's wait arguments, as Linux's
// io_get_ext_arg: a signal mask of argsz bytes, or with
// IORING_ENTER_EXT_ARG a struct io_uring_getevents_arg giving the mask
// and a relative timeout. The mask itself is read only when a wait needs
// it.
func enterWaitArgs(t *kernel.Task, flags uint32, arg, argsz uint64) (w waitArgs, err error) {
	if flags&linux.IORingEnterExtArg == 0 {
		return waitArgs{mask: arg, maskSize: argsz}, nil
	}
	if arg == 0 {
		return waitArgs{}, nil
	}
	var ext linux.IOUringGeteventsArg
	if argsz != uint64(unsafe.Sizeof(ext)) {
		return waitArgs{}, unix.EINVAL
	}
	if err := copyInStruct(t, arg, &ext); err != nil {
		return waitArgs{}, err
	}
	w = waitArgs{mask: ext.Sigmask, maskSize: uint64(ext.SigmaskSize)}
	if ext.TS != 0 {
		var ts linux.Timespec
		if err := copyInStruct(t, ext.TS, &ts); err != nil {
			return waitArgs{}, err
		}
		if ts.Sec < 0 || ts.Nsec < 0 || ts.Nsec >= 1e9 {
			return waitArgs{}, unix.EINVAL
		}
		w.deadline = time.Now().Add(time.Duration(min(ts.Sec, 1<<33))*time.Second + time.Duration(ts.Nsec))
	}
	return w, nil
}

// waitCompletions waits until n completions wait in the ring, with the
// wait's signal mask in place: EINTR when a signal comes, ETIME when the
// deadline passes.
func waitCompletions(t *kernel.Task, r *iouring.Ring, n uint32, w waitArgs) (err error) {
	if ready, _ := r.Ready(); ready >= n {
		return nil
	}
	mask, err := sigmaskArg(t, w.mask, w.maskSize)
	if err != nil {
		return err
	}
	if mask != nil {
		t.BeginMaskedWait(*mask)
		defer func() { t.EndMaskedWait(err) }()
	}
	for {
		ready, wake := r.Ready()
		if ready >= n {
			return nil
		}
		switch err := t.Block(wake, w.deadline); err {
		case nil:
		case unix.ETIMEDOUT:
			return unix.ETIME
		default:
			return err
		}
	}
}

// sqeFlags are the IOSQE_ flags a submission may carry.
const sqeFlags = linux.IOSQEFixedFile | linux.IOSQEIODrain | linux.IOSQEIOLink | linux.IOSQEIOHardlink |
	linux.IOSQEAsync | linux.IOSQEBufferSelect | linux.IOSQECQESkipSuccess

// submitRequests takes up to n submissions and performs each, posting its
// completion; it returns how many it took, or the error of the wait for
// another thread's submission to end (EINTR). As Linux's io_submit_sqes, a
// submission that cannot start (a bad flag or opcode) is completed with
// its error and ends the batch unless IORING_SETUP_SUBMIT_ALL. The
// requests a failed link cancels complete after the batch's others, as
// Linux's task work posts them.
func submitRequests(t *kernel.Task, r *iouring.Ring, n uint32) (uint32, error) {
	if err := r.LockSubmit(func(done <-chan struct{}) error { return t.Block(done, time.Time{}) }); err != nil {
		return 0, err
	}
	defer r.UnlockSubmit()
	defer r.Flush()
	n = min(n, r.SQEntries)
	var sqe linux.IOUringSQE
	var cancelled []uint64 // their user data
	taken := uint32(0)
	linkFailed, inLink := false, false
	for taken < n && r.NextSQE(&sqe) {
		taken++
		linked := sqe.Flags&(linux.IOSQEIOLink|linux.IOSQEIOHardlink) != 0
		startErr := checkSQE(r, &sqe)
		if inLink && linkFailed && startErr == nil {
			cancelled = append(cancelled, sqe.UserData)
		} else {
			res := -int32(errnoOf(startErr))
			if startErr == nil {
				res = performSQE(t, r, &sqe)
			}
			// A request of a chain that fails (a short transfer counts)
			// cancels the rest, unless it was hard-linked.
			if (inLink || linked) && (res < 0 || shortTransfer(&sqe, res)) && sqe.Flags&linux.IOSQEIOHardlink == 0 {
				linkFailed = true
			}
			if res < 0 || sqe.Flags&linux.IOSQECQESkipSuccess == 0 {
				r.Post(linux.IOUringCQE{UserData: sqe.UserData, Res: res})
			}
		}
		inLink = linked
		if !linked {
			linkFailed = false
		}
		if startErr != nil && r.Flags&linux.IORingSetupSubmitAll == 0 {
			break
		}
	}
	for _, data := range cancelled {
		r.Post(linux.IOUringCQE{UserData: data, Res: -int32(unix.ECANCELED)})
	}
	return taken, nil
}

// checkSQE makes the checks that keep a submission from starting, in
// Linux's io_init_req order. The submission lock is held.
func checkSQE(r *iouring.Ring, sqe *linux.IOUringSQE) error {
	if sqe.Opcode >= linux.IORingOpLast || sqe.Flags&^sqeFlags != 0 {
		return unix.EINVAL
	}
	if sqe.Flags&linux.IOSQEBufferSelect != 0 && !selectsBuffer(sqe.Opcode) {
		return unix.EOPNOTSUPP
	}
	if sqe.Flags&linux.IOSQECQESkipSuccess != 0 {
		r.DrainDisabled = true
	}
	if sqe.Flags&linux.IOSQEIODrain != 0 && r.DrainDisabled {
		return unix.EOPNOTSUPP
	}
	return nil
}

// selectsBuffer reports whether an operation may take a provided buffer
// (IOSQE_BUFFER_SELECT).
func selectsBuffer(op uint8) bool {
	switch op {
	case linux.IORingOpReadv, linux.IORingOpRead, linux.IORingOpRecv, linux.IORingOpRecvmsg:
		return true
	}
	return false
}

// shortTransfer reports whether a read or write moved fewer bytes than
// asked, which fails a link as in Linux's io_rw.
func shortTransfer(sqe *linux.IOUringSQE, res int32) bool {
	switch sqe.Opcode {
	case linux.IORingOpRead, linux.IORingOpWrite, linux.IORingOpReadFixed, linux.IORingOpWriteFixed:
		return uint32(res) != sqe.Len
	}
	return false
}

// ioOps are the operations performed, each given the submission and the
// ring; the result is the completion's (a count, or -errno).
var ioOps = map[uint8]func(t *kernel.Task, r *iouring.Ring, sqe *linux.IOUringSQE) (uint64, error){
	linux.IORingOpNop:        ioNop,
	linux.IORingOpReadv:      ioReadWrite,
	linux.IORingOpWritev:     ioReadWrite,
	linux.IORingOpRead:       ioReadWrite,
	linux.IORingOpWrite:      ioReadWrite,
	linux.IORingOpReadFixed:  ioReadWrite,
	linux.IORingOpWriteFixed: ioReadWrite,
	linux.IORingOpFsync:      ioFsync,
	linux.IORingOpSendmsg:    ioSendRecv,
	linux.IORingOpRecvmsg:    ioSendRecv,
	linux.IORingOpSend:       ioSendRecv,
	linux.IORingOpRecv:       ioSendRecv,
	linux.IORingOpClose:      ioClose,
}

// performSQE performs one submission and returns its completion's result.
func performSQE(t *kernel.Task, r *iouring.Ring, sqe *linux.IOUringSQE) int32 {
	op, ok := ioOps[sqe.Opcode]
	switch {
	case !ok:
		return -int32(unix.EINVAL)
	case sqe.Flags&linux.IOSQEFixedFile != 0 && sqe.Opcode != linux.IORingOpNop:
		return -int32(unix.EBADF) // no file is ever registered
	case sqe.Flags&linux.IOSQEBufferSelect != 0:
		return -int32(unix.ENOBUFS) // no buffer is ever provided
	}
	n, err := op(t, r, sqe)
	if err != nil {
		return -int32(errnoOf(err))
	}
	return int32(n)
}

// IORING_NOP_INJECT_RESULT: the no-op completes with sqe.len.
const nopInjectResult = 1 << 0

func ioNop(t *kernel.Task, r *iouring.Ring, sqe *linux.IOUringSQE) (uint64, error) {
	if sqe.OpFlags&^nopInjectResult != 0 {
		return 0, unix.EINVAL
	}
	if sqe.OpFlags&nopInjectResult != 0 {
		return uint64(int64(int32(sqe.Len))), nil
	}
	return 0, nil
}

// ioReadWrite performs the reads and writes: vectored ones on the iovec
// array at addr (len buffers), the others on the buffer at addr (len
// bytes), a fixed one within the registered buffer buf_index (EFAULT
// outside it); at off, or at the file position when off is -1.
func ioReadWrite(t *kernel.Task, r *iouring.Ring, sqe *linux.IOUringSQE) (uint64, error) {
	fd, off, flags := uint64(uint32(sqe.FD)), int64(sqe.Off), uint64(sqe.OpFlags)
	switch sqe.Opcode {
	case linux.IORingOpReadv:
		return readvAt(t, fd, sqe.Addr, uint64(sqe.Len), off, flags)
	case linux.IORingOpWritev:
		return writevAt(t, fd, sqe.Addr, uint64(sqe.Len), off, flags)
	case linux.IORingOpReadFixed, linux.IORingOpWriteFixed:
		b, ok := r.Buffer(sqe.BufIndex)
		end := sqe.Addr + uint64(sqe.Len)
		if !ok || sqe.Addr < b.Addr || end < sqe.Addr || end > b.Addr+b.Len {
			return 0, unix.EFAULT
		}
	}
	if off < -1 {
		return 0, unix.EINVAL
	}
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if err := checkRWFlags(d, flags); err != nil {
		return 0, err
	}
	vs := oneIovec(sqe.Addr, uint64(sqe.Len))
	if sqe.Opcode == linux.IORingOpWrite || sqe.Opcode == linux.IORingOpWriteFixed {
		return writeAt(t, d, fd, vs, off, flags)
	}
	return readAt(t, d, fd, vs, off, flags)
}

// ioFsync is fsync, or fdatasync with IORING_FSYNC_DATASYNC.
func ioFsync(t *kernel.Task, r *iouring.Ring, sqe *linux.IOUringSQE) (uint64, error) {
	if sqe.Addr != 0 || sqe.BufIndex != 0 || sqe.SpliceFDIn != 0 || sqe.OpFlags&^linux.IORingFsyncDatasync != 0 {
		return 0, unix.EINVAL
	}
	return sysFsync(t, Args{uint64(uint32(sqe.FD))})
}

// ioSendRecv is sendmsg, recvmsg, send (to the address at addr2 when
// there is one) and recv. Sends never raise SIGPIPE: io_uring adds
// MSG_NOSIGNAL, as Linux's.
func ioSendRecv(t *kernel.Task, r *iouring.Ring, sqe *linux.IOUringSQE) (uint64, error) {
	fd, flags := uint64(uint32(sqe.FD)), uint64(sqe.OpFlags)
	switch sqe.Opcode {
	case linux.IORingOpSendmsg:
		return sysSendmsg(t, Args{fd, sqe.Addr, flags | unix.MSG_NOSIGNAL})
	case linux.IORingOpRecvmsg:
		return sysRecvmsg(t, Args{fd, sqe.Addr, flags})
	case linux.IORingOpSend:
		addrLen := uint64(uint16(sqe.SpliceFDIn)) // addr_len shares splice_fd_in's place
		return sysSendto(t, Args{fd, sqe.Addr, uint64(sqe.Len), flags | unix.MSG_NOSIGNAL, sqe.Off, addrLen})
	default:
		return sysRecvfrom(t, Args{fd, sqe.Addr, uint64(sqe.Len), flags, 0, 0})
	}
}

// ioClose closes a descriptor; a ring's own is EBADF, as Linux's io_close.
func ioClose(t *kernel.Task, r *iouring.Ring, sqe *linux.IOUringSQE) (uint64, error) {
	if sqe.Off != 0 || sqe.Addr != 0 || sqe.Len != 0 || sqe.OpFlags != 0 || sqe.BufIndex != 0 || sqe.SpliceFDIn != 0 {
		return 0, unix.EINVAL
	}
	d, err := t.Proc.Files.Get(int(sqe.FD))
	if err != nil {
		return 0, err
	}
	_, ring := d.File.(*iouring.Ring)
	d.DecRef()
	if ring {
		return 0, unix.EBADF
	}
	return sysClose(t, Args{uint64(uint32(sqe.FD))})
}

// sysIoUringRegister implements io_uring_register(2) for buffers, an
// eventfd and the probe; registered files, personalities, restrictions
// and the rest are EINVAL, as a kernel without them answers.
func sysIoUringRegister(t *kernel.Task, a Args) (uint64, error) {
	opcode, arg, nr := uint32(a[1]), a[2], uint32(a[3])
	registered := opcode&linux.IORingRegisterUseRegisteredRing != 0
	opcode &^= linux.IORingRegisterUseRegisteredRing
	r, d, err := ringOf(t, a[0], registered)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	switch opcode {
	case linux.IORingRegisterBuffers:
		return 0, registerBuffers(t, r, arg, nr)
	case linux.IORingUnregisterBuffers:
		if arg != 0 || nr != 0 {
			return 0, unix.EINVAL
		}
		return 0, r.UnregisterBuffers()
	case linux.IORingRegisterEventFD, linux.IORingRegisterEventFDAsync:
		return 0, registerEventFD(t, r, arg, nr, opcode == linux.IORingRegisterEventFDAsync)
	case linux.IORingUnregisterEventFD:
		if arg != 0 || nr != 0 {
			return 0, unix.EINVAL
		}
		return 0, r.UnregisterEventFD()
	case linux.IORingRegisterProbe:
		return 0, registerProbe(t, arg, nr)
	}
	return 0, unix.EINVAL
}

// registerBuffers registers nr buffers from the iovec array at arg, with
// Linux's checks: a null buffer only empty, none over 1 GiB (EFAULT), none
// wrapping the address space (EOVERFLOW).
func registerBuffers(t *kernel.Task, r *iouring.Ring, arg uint64, nr uint32) error {
	if nr == 0 || nr > iouring.MaxBuffers {
		return unix.EINVAL
	}
	vs := make([]linux.Iovec, nr)
	if err := copyIn(t, arg, linux.SliceAsBytes(vs)); err != nil {
		return err
	}
	bs := make([]iouring.Buffer, nr)
	for i, v := range vs {
		switch {
		case v.Base == 0 && v.Len != 0, v.Len > iouring.MaxBufferSize:
			return unix.EFAULT
		case v.Base+v.Len < v.Base:
			return unix.EOVERFLOW
		}
		bs[i] = iouring.Buffer{Addr: v.Base, Len: v.Len}
	}
	return r.RegisterBuffers(bs)
}

// registerEventFD registers the eventfd whose descriptor is the int at
// arg, for every flush of completions or for asynchronous ones only.
func registerEventFD(t *kernel.Task, r *iouring.Ring, arg uint64, nr uint32, async bool) error {
	if nr != 1 {
		return unix.EINVAL
	}
	var fd int32
	if err := copyInStruct(t, arg, &fd); err != nil {
		return err
	}
	d, err := t.Proc.Files.Get(int(fd))
	if err != nil {
		return err
	}
	defer d.DecRef()
	e, ok := d.File.(*fs.EventFD)
	if !ok {
		return unix.EINVAL
	}
	return r.RegisterEventFD(e, async)
}

// registerProbe answers IORING_REGISTER_PROBE: the probe at arg, with room
// for nr operations and zeroed (EINVAL otherwise), gets the last opcode
// and which of the first nr the kernel performs.
func registerProbe(t *kernel.Task, arg uint64, nr uint32) error {
	nr = min(nr, linux.IORingOpLast)
	var head linux.IOUringProbe
	ops := make([]linux.IOUringProbeOp, nr)
	opsAt := arg + uint64(unsafe.Sizeof(head))
	if err := copyInStruct(t, arg, &head); err != nil {
		return err
	}
	if err := copyIn(t, opsAt, linux.SliceAsBytes(ops)); err != nil {
		return err
	}
	if head != (linux.IOUringProbe{}) {
		return unix.EINVAL
	}
	for i, op := range ops {
		if op != (linux.IOUringProbeOp{}) {
			return unix.EINVAL
		}
		ops[i].Op = uint8(i)
		if _, ok := ioOps[uint8(i)]; ok {
			ops[i].Flags = linux.IORingProbeOpSupported
		}
	}
	head.LastOp, head.OpsLen = linux.IORingOpLast-1, uint8(nr)
	if err := copyOutStruct(t, arg, head); err != nil {
		return err
	}
	return copyOut(t, opsAt, linux.SliceAsBytes(ops))
}
