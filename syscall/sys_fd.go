package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/fs"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/ipc"
	"github.com/jiege-go/jiege/kernel/perf"
)

func init() {
	register(sysno.Close, sysClose)
	register(sysno.Dup, sysDup)
	register(sysno.Dup3, sysDup3)
	register(sysno.Fcntl, sysFcntl)
	register(sysno.Ioctl, sysIoctl)
}

// sysClose implements close(2). Closing any descriptor of a file drops the
// POSIX locks the process holds on it, as on Linux.
func sysClose(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Remove(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if n := d.Node(); n != nil {
		t.Proc.Root.ReleaseLocks(n, t.Proc)
	}
	if q, ok := d.File.(*ipc.MQFile); ok {
		q.Flush(t.Proc.PID) // the process's mq_notify registration goes
	}
	return 0, nil
}

// sysDup implements dup(2).
func sysDup(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
	defer d.DecRef() // the new descriptor takes its own
	fd, err := t.Proc.Files.Install(d, false, 0)
	return uint64(fd), err
}

// sysDup3 implements dup3(2) (and dup2, which riscv64 has only through
// the C library): EINVAL when both descriptors are the same.
func sysDup3(t *kernel.Task, a Args) (uint64, error) {
	oldfd, newfd := int(int32(a[0])), int(int32(a[1]))
	if a[2]&^unix.O_CLOEXEC != 0 || oldfd == newfd {
		return 0, unix.EINVAL
	}
	d, err := t.Proc.Files.Get(oldfd)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return uint64(newfd), t.Proc.Files.InstallAt(d, newfd, a[2]&unix.O_CLOEXEC != 0)
}

// sysFcntl implements fcntl(2) for descriptors, status flags and pipe sizes.
func sysFcntl(t *kernel.Task, a Args) (uint64, error) {
	fd := int(int32(a[0]))
	d, err := t.Proc.Files.Get(fd)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	switch a[1] {
	case unix.F_GETFD:
		if on, _ := t.Proc.Files.CloExec(fd); on {
			return unix.FD_CLOEXEC, nil
		}
		return 0, nil
	case unix.F_SETFD:
		return 0, t.Proc.Files.SetCloExec(fd, a[2]&unix.FD_CLOEXEC != 0)
	case unix.F_GETOWN:
		o := d.Owner()
		id := int64(t.Proc.NumberOf(int(o.ID)))
		if o.Kind == linux.FOwnerPGRP {
			return uint64(-id), nil
		}
		return uint64(id), nil
	case unix.F_SETOWN:
		o := fs.Owner{Kind: linux.FOwnerPID, ID: int32(a[2])}
		if o.ID < 0 {
			o = fs.Owner{Kind: linux.FOwnerPGRP, ID: -o.ID}
		}
		return 0, setOwner(t, d, o)
	case unix.F_GETOWN_EX:
		o := d.Owner()
		return 0, copyOutStruct(t, a[2], linux.FOwnerEx{Type: o.Kind, Pid: int32(t.Proc.NumberOf(int(o.ID)))})
	case unix.F_SETOWN_EX:
		var ex linux.FOwnerEx
		if err := copyInStruct(t, a[2], &ex); err != nil {
			return 0, err
		}
		if ex.Type != linux.FOwnerTID && ex.Type != linux.FOwnerPID && ex.Type != linux.FOwnerPGRP {
			return 0, unix.EINVAL
		}
		return 0, setOwner(t, d, fs.Owner{Kind: ex.Type, ID: ex.Pid})
	case unix.F_NOTIFY:
		return 0, setDnotify(t, d, fd, uint32(a[2]))
	case unix.F_GETSIG:
		return uint64(d.Signal()), nil
	case unix.F_SETSIG:
		if a[2] > numSignals {
			return 0, unix.EINVAL
		}
		d.SetSignal(int(a[2]))
		return 0, nil
	case unix.F_SETLEASE, unix.F_GETLEASE:
		return setLease(t, d, a[1] == unix.F_GETLEASE, a[2])
	case unix.F_ADD_SEALS:
		n := d.Node()
		if n == nil {
			return 0, unix.EINVAL
		}
		if _, err := n.Seals(); err != nil {
			return 0, err
		}
		if !d.Writable() {
			return 0, unix.EPERM
		}
		return 0, n.AddSeals(uint32(a[2]))
	case unix.F_GET_SEALS:
		n := d.Node()
		if n == nil {
			return 0, unix.EINVAL
		}
		seals, err := n.Seals()
		return uint64(seals), err
	case unix.F_CREATED_QUERY:
		if d.Created {
			return 1, nil
		}
		return 0, nil
	case unix.F_DUPFD, unix.F_DUPFD_CLOEXEC:
		min := int(int32(a[2]))
		if min < 0 || min >= t.Proc.Files.Limit() {
			return 0, unix.EINVAL
		}
		nfd, err := t.Proc.Files.Install(d, a[1] == unix.F_DUPFD_CLOEXEC, min)
		return uint64(nfd), err
	case unix.F_GETFL:
		return uint64(d.Flags()), nil
	case unix.F_SETFL:
		if nf, ok := d.NodeFile(); ok && (uint32(a[2])^d.Flags())&unix.O_APPEND != 0 {
			if err := fs.MayChangeAppend(nf.Node()); err != nil {
				return 0, err
			}
		}
		d.SetFlags(uint32(a[2]))
		setAsync(t, d, fd, a[2]&unix.O_ASYNC != 0)
		return 0, nil
	case unix.F_GETLK, unix.F_SETLK, unix.F_SETLKW, unix.F_OFD_GETLK, unix.F_OFD_SETLK, unix.F_OFD_SETLKW:
		return 0, recordLock(t, d, a[1], a[2])
	case unix.F_GETPIPE_SZ, unix.F_SETPIPE_SZ:
		var n int
		if a[1] == unix.F_GETPIPE_SZ {
			n, err = d.PipeSize()
		} else {
			n, err = d.SetPipeSize(int(int32(a[2])), t.Proc.Caps.Effective&(1<<unix.CAP_SYS_RESOURCE) != 0)
		}
		return uint64(n), err
	}
	return 0, unix.EINVAL
}

// numSignals is the largest signal number (_NSIG).
const numSignals = 64

// setOwner makes o the owner of d's I/O signals: ESRCH when no thread,
// process or group has its id (0 clears the owner), a number of the
// caller's PID namespace, kept as the global id.
func setOwner(t *kernel.Task, d *fs.Description, o fs.Owner) error {
	o.ID = int32(t.Proc.GlobalID(int(o.ID)))
	if o.ID != 0 && !idInUse(t.Kernel(), int(o.ID)) {
		return unix.ESRCH
	}
	d.SetOwner(o)
	return nil
}

// idInUse reports whether a thread, process or process group has id,
// as Linux's find_vpid.
func idInUse(k *kernel.Kernel, id int) bool {
	if k.TaskByID(id) != nil || k.ProcessByID(id) != nil {
		return true
	}
	for _, p := range k.Processes() {
		if p.PGID() == id {
			return true
		}
	}
	return false
}

// I/O signal codes (si_code of a F_SETSIG signal) and their bands
// (si_band: Linux's band_table).
const (
	pollIn      = 1
	pollOut     = 2
	pollMsg     = 3
	pollInBand  = unix.EPOLLIN | unix.EPOLLRDNORM
	pollOutBand = unix.EPOLLOUT | unix.EPOLLWRNORM | unix.EPOLLWRBAND
	pollMsgBand = unix.EPOLLIN | unix.EPOLLRDNORM | unix.EPOLLMSG
)

// setAsync starts or stops the I/O signals of an O_ASYNC description
// open as fd: at each change of its file's readiness, while it is
// readable or writable, its owner gets F_SETSIG's signal (SIGIO by
// default).
func setAsync(t *kernel.Task, d *fs.Description, fd int, on bool) {
	if !on {
		d.WatchAsync(nil)
		return
	}
	w, ok := d.Waitable()
	if !ok {
		return
	}
	k := t.Kernel()
	d.WatchAsync(func() {
		ready := w.Readiness(unix.EPOLLIN | unix.EPOLLOUT)
		if ready == 0 || d.Flags()&unix.O_ASYNC == 0 {
			return
		}
		code, band := int32(pollIn), int64(pollInBand)
		if ready&unix.EPOLLIN == 0 {
			code, band = pollOut, pollOutBand
		}
		sendIOSignal(k, d, fd, code, band)
	})
}

// sendIOSignal sends d's owner its I/O signal for descriptor fd: SIGIO
// from the kernel, or F_SETSIG's signal with the reason code, band and
// fd in its siginfo (Linux's send_sigio).
func sendIOSignal(k *kernel.Kernel, d *fs.Description, fd int, code int32, band int64) {
	sig, info := unix.SIGIO, (*kernel.SigInfo)(nil)
	if s := d.Signal(); s != 0 {
		sig, info = unix.Signal(s), &kernel.SigInfo{Signo: unix.Signal(s), Code: code, Band: band, FD: int32(fd)}
	}
	o := d.Owner()
	switch {
	case o.ID == 0:
	case o.Kind == linux.FOwnerTID:
		if t := k.TaskByID(int(o.ID)); t != nil {
			t.SignalThread(sig, info)
		}
	case o.Kind == linux.FOwnerPID:
		if p := k.ProcessByID(int(o.ID)); p != nil {
			p.Signal(sig, info)
		}
	default:
		for _, p := range k.Processes() {
			if p.PGID() == int(o.ID) {
				p.Signal(sig, info)
			}
		}
	}
}

// setDnotify implements F_NOTIFY: a directory's changes signal the
// description's owner, which becomes the caller's process, with si_fd fd
// (Linux's fcntl_dirnotify); no event in arg removes the mark.
func setDnotify(t *kernel.Task, d *fs.Description, fd int, arg uint32) error {
	nf, ok := d.NodeFile()
	if arg&^fs.DnMultishot == 0 {
		if ok {
			return nf.SetDnotify(0, nil)
		}
		return nil
	}
	if !ok || !nf.Node().IsDir() {
		return unix.ENOTDIR
	}
	d.SetOwner(fs.Owner{Kind: linux.FOwnerPID, ID: int32(t.Proc.PID)})
	k := t.Kernel()
	return nf.SetDnotify(arg, func() { sendIOSignal(k, d, fd, pollMsg, pollMsgBand) })
}

// setLease implements F_SETLEASE and F_GETLEASE: leases on regular files
// only (EINVAL), set by the file's owner or root (EACCES).
func setLease(t *kernel.Task, d *fs.Description, get bool, arg uint64) (uint64, error) {
	nf, ok := d.NodeFile()
	if get {
		if !ok {
			return 0, unix.EINVAL
		}
		return uint64(t.Proc.Root.Lease(nf.Node(), nf)), nil
	}
	if arg != unix.F_RDLCK && arg != unix.F_WRLCK && arg != unix.F_UNLCK {
		return 0, unix.EINVAL
	}
	if !ok {
		return 0, unix.EINVAL
	}
	n := nf.Node()
	if arg != unix.F_UNLCK && t.Proc.EUID != 0 && t.Proc.EUID != n.UID {
		return 0, unix.EACCES
	}
	if !n.Mode.IsRegular() {
		return 0, unix.EINVAL
	}
	return 0, t.Proc.Root.SetLease(n, nf, arg == unix.F_WRLCK, arg == unix.F_UNLCK)
}

// ioctl requests (asm-generic/ioctls.h).
const (
	fionread = 0x541b
	fionbio  = 0x5421
	fionclex = 0x5450
	fioclex  = 0x5451
	fioasync = 0x5452
)

// sysIoctl implements ioctl(2): the generic file requests, the terminal
// requests on the console (sys_tty.go), FIONREAD on pipes, the console and
// sockets (nginx asks it after a read that filled its buffer,
// and closes the connection when it fails); no file has terminal controls
// elsewhere (ENOTTY, as for a pipe).
func sysIoctl(t *kernel.Task, a Args) (uint64, error) {
	fd := int(int32(a[0]))
	d, err := t.Proc.Files.Get(fd)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if d.Flags()&unix.O_PATH != 0 {
		return 0, unix.EBADF
	}
	switch a[1] {
	case fionbio:
		var on int32
		if err := copyInStruct(t, a[2], &on); err != nil {
			return 0, err
		}
		d.SetNonblock(on != 0)
		return 0, nil
	case fionread:
		p, ok := d.File.(pender)
		if !ok {
			return 0, unix.ENOTTY
		}
		n, err := p.Pending()
		if err != nil {
			return 0, err
		}
		return 0, copyOutStruct(t, a[2], int32(n))
	case fioclex, fionclex:
		return 0, t.Proc.Files.SetCloExec(fd, a[1] == fioclex)
	case fioasync:
		var on int32
		if err := copyInStruct(t, a[2], &on); err != nil {
			return 0, err
		}
		fl := d.Flags() &^ unix.O_ASYNC
		if on != 0 {
			fl |= unix.O_ASYNC
		}
		d.SetFlags(fl)
		setAsync(t, d, fd, on != 0)
		return 0, nil
	}
	if ret, handled, err := fileattrIoctl(t, d, a[1], a[2]); handled {
		return ret, err
	}
	if d.LandlockDenied&fs.LandlockIoctlDev != 0 {
		return 0, unix.EACCES // a device's own commands, which Landlock's IOCTL_DEV covers
	}
	if so, sd, err := sockFile(t, a[0]); err == nil {
		sd.DecRef()
		if a[1] == unix.SIOCATMARK && so.MaxMessage() == 0 {
			// A stream socket is never at an urgent mark: none is kept.
			return 0, copyOutStruct(t, a[2], int32(0))
		}
		if handled, err := ifreqIoctl(t, a[1], a[2]); handled {
			return 0, err
		}
	}
	if tty, ok := d.Terminal(); ok {
		if ret, handled, err := ttyIoctl(t, tty, a[1], a[2]); handled {
			return ret, err
		}
	}
	if d.RandomDevice() {
		return randomIoctl(t, a[1], a[2])
	}
	if ns, ok := namespaceOf(d); ok {
		return nsIoctl(t, ns, a[1], a[2])
	}
	if m, ok := procmapQueryOf(d); ok {
		return procmapIoctl(t, m, a[1], a[2])
	}
	if tf, ok := d.File.(*clockedTimer); ok {
		return timerfdIoctl(t, tf, a[1], a[2])
	}
	if uf, ok := d.File.(*kernel.Userfaultfd); ok {
		return userfaultfdIoctl(t, uf, a[1], a[2])
	}
	if ev, ok := d.File.(*perf.Event); ok {
		return perfEventIoctl(t, ev, a[1], a[2])
	}
	if d.UserfaultfdDevice() {
		return userfaultfdDeviceIoctl(t, a[1], a[2])
	}
	return 0, unix.ENOTTY
}

// pender is a file that knows how many bytes a read would return.
type pender interface {
	Pending() (int, error)
}

// fileOf returns the file of kind F open on fd and its description, with
// the reference the caller drops: the descriptor's error when none is
// open, notKind when another kind of file is.
func fileOf[F fs.File](t *kernel.Task, fd uint64, notKind error) (F, *fs.Description, error) {
	var none F
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return none, nil, err
	}
	f, ok := d.File.(F)
	if !ok {
		d.DecRef()
		return none, nil, notKind
	}
	return f, d, nil
}
