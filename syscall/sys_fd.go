package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
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
	case unix.F_SETOWN, unix.F_GETOWN:
		return 0, nil // no SIGIO is sent yet
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
		d.SetFlags(uint32(a[2]))
		return 0, nil
	case unix.F_GETLK, unix.F_SETLK, unix.F_SETLKW, unix.F_OFD_GETLK, unix.F_OFD_SETLK, unix.F_OFD_SETLKW:
		return 0, recordLock(t, d, a[1], a[2])
	case unix.F_GETPIPE_SZ, unix.F_SETPIPE_SZ:
		var n int
		if a[1] == unix.F_GETPIPE_SZ {
			n, err = d.PipeSize()
		} else {
			n, err = d.SetPipeSize(int(int32(a[2])))
		}
		return uint64(n), err
	}
	return 0, unix.EINVAL
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
		return 0, nil // no SIGIO is sent yet
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
	return 0, unix.ENOTTY
}

// pender is a file that knows how many bytes a read would return.
type pender interface {
	Pending() (int, error)
}
