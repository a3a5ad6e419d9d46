package syscall

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.Userfaultfd, sysUserfaultfd)
}

// userfaultfd's flags and ioctl requests (linux/userfaultfd.h).
const (
	uffdUserModeOnly = 1

	uffdioAPI         = 0xc018aa3f
	uffdioRegister    = 0xc020aa00
	uffdioUnregister  = 0x8010aa01
	uffdioWake        = 0x8010aa02
	uffdioCopy        = 0xc028aa03
	uffdioZeropage    = 0xc020aa04
	uffdioMove        = 0xc028aa05
	uffdioPoison      = 0xc020aa08
	userfaultfdIocNew = 0xaa00

	uffdioRegisterModeMissing   = 1
	uffdioRegisterModeWP        = 2
	uffdioRegisterModeMinor     = 4
	uffdioCopyModeDontwake      = 1
	uffdioMoveModeAllowSrcHoles = 2

	// uffdAPIIoctls: UFFDIO_REGISTER, UNREGISTER and API.
	uffdAPIIoctls = 1<<0 | 1<<1 | 1<<0x3f
	// uffdRangeIoctls: WAKE, COPY, ZEROPAGE, MOVE and POISON, what a
	// range registered for missing faults offers.
	uffdRangeIoctls = 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<8
)

// sysUserfaultfd implements userfaultfd(2): EPERM for a task that may not
// (vm.unprivileged_userfaultfd), then EINVAL for an unknown flag.
func sysUserfaultfd(t *kernel.Task, a Args) (uint64, error) {
	flags := a[0]
	if !t.UserfaultfdAllowed(flags&uffdUserModeOnly != 0) {
		return 0, unix.EPERM
	}
	return newUserfaultfd(t, flags)
}

// newUserfaultfd opens a new userfaultfd with flags (O_CLOEXEC,
// O_NONBLOCK, UFFD_USER_MODE_ONLY), for userfaultfd(2) and
// /dev/userfaultfd's USERFAULTFD_IOC_NEW.
func newUserfaultfd(t *kernel.Task, flags uint64) (uint64, error) {
	if flags&^(unix.O_CLOEXEC|unix.O_NONBLOCK|uffdUserModeOnly) != 0 {
		return 0, unix.EINVAL
	}
	f, err := kernel.NewUserfaultfd(t.Proc)
	if err != nil {
		return 0, err
	}
	n, err := t.Proc.Files.Open(f, unix.O_RDWR|uint32(flags&unix.O_NONBLOCK), flags&unix.O_CLOEXEC != 0)
	return uint64(n), err
}

// uffdErrno turns the memory manager's answers to userfaultfd's ioctls
// into errnos.
func uffdErrno(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mm.ErrNotRegistered):
		return unix.ENOENT
	case errors.Is(err, mm.ErrAccess):
		return unix.EPERM
	case errors.Is(err, unix.ESRCH):
		return unix.ESRCH
	}
	return memErrno(err)
}

// uffdRangeValid is Linux's validate_range: page-aligned start and
// length, not empty, within user memory.
func uffdRangeValid(start, length uint64) bool {
	return start%mm.PageSize == 0 && uffdLenValid(start, length)
}

// uffdLenValid is Linux's validate_unaligned_range.
func uffdLenValid(start, length uint64) bool {
	return length%mm.PageSize == 0 && length != 0 && start >= uint64(mm.UserMin) &&
		start < uint64(mm.MaxUserVA) && length <= uint64(mm.MaxUserVA)-start
}

// userfaultfdIoctl serves the ioctls of a userfaultfd: everything but
// UFFDIO_API is EINVAL until the handshake is done, as is an unknown one.
func userfaultfdIoctl(t *kernel.Task, f *kernel.Userfaultfd, req, arg uint64) (uint64, error) {
	if req != uffdioAPI && !f.Initialized() {
		return 0, unix.EINVAL
	}
	switch req {
	case uffdioAPI:
		var api linux.UffdioAPI
		if err := copyInStruct(t, arg, &api); err != nil {
			return 0, err
		}
		if api.API != kernel.UffdAPI {
			return 0, uffdAPIFailed(t, arg)
		}
		if err := f.API(api.Features); err != nil {
			return 0, uffdAPIFailed(t, arg)
		}
		return 0, copyOutStruct(t, arg, linux.UffdioAPI{API: kernel.UffdAPI, Features: kernel.UffdFeatures, Ioctls: uffdAPIIoctls})
	case uffdioRegister:
		var r linux.UffdioRegister
		if err := copyInStruct(t, arg, &r); err != nil {
			return 0, err
		}
		// Write protection and minor faults are not served (on riscv64
		// Linux 6.12 has neither).
		if r.Mode != uffdioRegisterModeMissing || !uffdRangeValid(r.Range.Start, r.Range.Len) {
			return 0, unix.EINVAL
		}
		if err := f.Register(uintptr(r.Range.Start), uintptr(r.Range.Len), mm.UffdMissing); err != nil {
			return 0, uffdErrno(err)
		}
		r.Ioctls = uffdRangeIoctls
		return 0, copyOutStruct(t, arg, r)
	case uffdioUnregister, uffdioWake:
		var r linux.UffdioRange
		if err := copyInStruct(t, arg, &r); err != nil {
			return 0, err
		}
		if !uffdRangeValid(r.Start, r.Len) {
			return 0, unix.EINVAL
		}
		if req == uffdioWake {
			f.Wake(uintptr(r.Start), uintptr(r.Len))
			return 0, nil
		}
		return 0, uffdErrno(f.Unregister(uintptr(r.Start), uintptr(r.Len)))
	case uffdioCopy, uffdioMove:
		var c linux.UffdioCopy
		if err := copyIn(t, arg, linux.AsBytes(&c)[:32]); err != nil {
			return 0, err
		}
		modes := uint64(uffdioCopyModeDontwake)
		srcValid := uffdLenValid(c.Src, c.Len)
		if req == uffdioMove {
			modes |= uffdioMoveModeAllowSrcHoles
			srcValid = uffdRangeValid(c.Src, c.Len)
		}
		if !srcValid || !uffdRangeValid(c.Dst, c.Len) || c.Mode&^modes != 0 {
			return 0, unix.EINVAL
		}
		dontWake := c.Mode&uffdioCopyModeDontwake != 0
		var n uintptr
		var err error
		if req == uffdioMove {
			if c.Src < c.Dst+c.Len && c.Dst < c.Src+c.Len {
				return 0, unix.EINVAL
			}
			n, err = f.Move(uintptr(c.Dst), uintptr(c.Src), uintptr(c.Len), c.Mode&uffdioMoveModeAllowSrcHoles != 0, dontWake)
		} else {
			n, err = f.Resolve(uintptr(c.Dst), uintptr(c.Len), mm.UffdCopy, func(off uintptr, page *[mm.PageSize]byte) error {
				return copyIn(t, c.Src+uint64(off), page[:])
			}, dontWake)
		}
		return uffdResult(t, arg+32, c.Len, n, err)
	case uffdioZeropage, uffdioPoison:
		var z linux.UffdioZeropage
		if err := copyIn(t, arg, linux.AsBytes(&z)[:24]); err != nil {
			return 0, err
		}
		if !uffdRangeValid(z.Range.Start, z.Range.Len) || z.Mode&^uffdioCopyModeDontwake != 0 {
			return 0, unix.EINVAL
		}
		fill := mm.UffdZero
		if req == uffdioPoison {
			fill = mm.UffdPoison
		}
		n, err := f.Resolve(uintptr(z.Range.Start), uintptr(z.Range.Len), fill, nil, z.Mode&uffdioCopyModeDontwake != 0)
		return uffdResult(t, arg+24, z.Range.Len, n, err)
	}
	return 0, unix.EINVAL
}

// uffdAPIFailed answers a refused UFFDIO_API: EINVAL, the structure
// zeroed.
func uffdAPIFailed(t *kernel.Task, arg uint64) error {
	if err := copyOutStruct(t, arg, linux.UffdioAPI{}); err != nil {
		return err
	}
	return unix.EINVAL
}

// uffdResult stores what a filling ioctl did at its result field (the
// bytes done, or the negated errno when none was) and returns the ioctl's
// result: its error, or EAGAIN when only part of length was done.
func uffdResult(t *kernel.Task, field, length uint64, n uintptr, err error) (uint64, error) {
	res := int64(n)
	if err != nil {
		err = uffdErrno(err)
		res = -int64(errnoOf(err))
	}
	if e := copyOutStruct(t, field, res); e != nil {
		return 0, e
	}
	if err == nil && uint64(n) < length {
		err = unix.EAGAIN
	}
	return 0, err
}

// userfaultfdDeviceIoctl serves /dev/userfaultfd: USERFAULTFD_IOC_NEW
// opens a userfaultfd with the flags in arg.
func userfaultfdDeviceIoctl(t *kernel.Task, req, arg uint64) (uint64, error) {
	if req != userfaultfdIocNew {
		return 0, unix.EINVAL
	}
	return newUserfaultfd(t, arg)
}
