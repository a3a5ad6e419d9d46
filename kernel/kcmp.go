package kernel

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/fs"
)

// kcmp(2)'s types (linux/kcmp.h).
const (
	KcmpFile = iota
	KcmpVM
	KcmpFiles
	KcmpFS
	KcmpSighand
	KcmpIO
	KcmpSysvsem
	KcmpEpollTFD
	kcmpTypes
)

// initKcmpCookies draws the values that hide the kernel's addresses in
// kcmp's order, as Linux's kcmp_cookies.
func (k *Kernel) initKcmpCookies() {
	var b [8]byte
	for i := range k.kcmpCookies {
		for j := range k.kcmpCookies[i] {
			k.Random(b[:])
			k.kcmpCookies[i][j] = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
				uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		}
	}
	for i := range k.kcmpCookies {
		k.kcmpCookies[i][1] |= 1 // an odd multiplier keeps distinct values distinct
	}
}

// kcmpOrder is Linux's kcmp_ptr: 0 when a and b are the same object, else
// 1 or 2 by an order of their obfuscated addresses that is the same for
// every call of one boot and tells nothing of where they are. nil (Linux's
// NULL: no I/O context, no SEM_UNDO list) is an object of its own.
func (k *Kernel) kcmpOrder(a, b unsafe.Pointer, typ int) int {
	obfuscate := func(p unsafe.Pointer) uint64 {
		c := k.kcmpCookies[typ]
		return (uint64(uintptr(p)) ^ c[0]) * c[1]
	}
	x, y := obfuscate(a), obfuscate(b)
	switch {
	case x < y:
		return 1
	case x > y:
		return 2
	}
	return 0
}

// Kcmp implements kcmp(2): whether the processes (or threads) pid1 and
// pid2 share a kernel object of a type, with Linux's checks in its order:
// ESRCH for a pid that names nothing, EPERM unless the caller may read
// both (ptrace's check), then EBADF for a descriptor that is not open and
// EINVAL for an unknown type. slot reads KCMP_EPOLL_TFD's kcmp_epoll_slot
// from the caller's memory (idx2 is its address).
//
// The objects: a description (KCMP_FILE), the address space, the
// descriptor table, the working directory and umask (fsContext), the
// signal handlers (a process's own: CLONE_SIGHAND between processes
// copies them here), no I/O context (one for the whole kernel, as Linux's
// NULL for a task that never set an I/O priority) and the SEM_UNDO list
// (a process's own once it made one, else NULL; CLONE_SYSVSEM shares none
// here).
func (t *Task) Kcmp(pid1, pid2, typ int, idx1, idx2 uint64, slot func() (linux.KcmpEpollSlot, error)) (int, error) {
	k := t.Proc.k
	t1, t2 := t.FindTaskOrZombie(pid1), t.FindTaskOrZombie(pid2)
	if t1 == nil || t2 == nil {
		return 0, unix.ESRCH
	}
	p1, p2 := t1.Proc, t2.Proc
	if !t.MayPtrace(p1) || !t.MayPtrace(p2) {
		return 0, unix.EPERM
	}
	var a, b unsafe.Pointer
	switch typ {
	case KcmpFile:
		d1, d2, err := descriptions(p1, int(idx1), p2, int(idx2))
		if err != nil {
			return 0, err
		}
		a, b = unsafe.Pointer(d1), unsafe.Pointer(d2)
	case KcmpVM:
		a, b = unsafe.Pointer(p1.vm.Load()), unsafe.Pointer(p2.vm.Load())
	case KcmpFiles:
		a, b = unsafe.Pointer(p1.Files), unsafe.Pointer(p2.Files)
	case KcmpFS:
		a, b = unsafe.Pointer(p1.fs.Load()), unsafe.Pointer(p2.fs.Load())
	case KcmpSighand:
		a, b = unsafe.Pointer(&p1.sig), unsafe.Pointer(&p2.sig)
	case KcmpIO:
	case KcmpSysvsem:
		if p1.ns.Load().ipc.ipc.HasUndo(p1.PID) {
			a = unsafe.Pointer(p1)
		}
		if p2.ns.Load().ipc.ipc.HasUndo(p2.PID) {
			b = unsafe.Pointer(p2)
		}
	case KcmpEpollTFD:
		s, err := slot()
		if err != nil {
			return 0, err
		}
		d1, err := description(p1, int(idx1))
		if err != nil {
			return 0, err
		}
		d2, err := epollTarget(p2, s)
		if err != nil {
			return 0, err
		}
		a, b = unsafe.Pointer(d1), unsafe.Pointer(d2)
	default:
		return 0, unix.EINVAL
	}
	return k.kcmpOrder(a, b, typ), nil
}

// description is the description open on fd in p's table, without a
// reference of its own (kcmp only compares it): EBADF when none is.
func description(p *Process, fd int) (*fs.Description, error) {
	d, err := p.Files.Get(fd)
	if err != nil {
		return nil, unix.EBADF
	}
	d.DecRef()
	return d, nil
}

// descriptions is description of fd1 in p1 and fd2 in p2.
func descriptions(p1 *Process, fd1 int, p2 *Process, fd2 int) (*fs.Description, *fs.Description, error) {
	d1, err1 := description(p1, fd1)
	d2, err2 := description(p2, fd2)
	if err1 != nil || err2 != nil {
		return nil, nil, unix.EBADF
	}
	return d1, d2, nil
}

// epollTarget is the description that slot's watch in p's epoll instance
// watches: EBADF without the instance, EINVAL when it is not one, ENOENT
// without the watch, as Linux's get_epoll_tfile_raw_ptr.
func epollTarget(p *Process, s linux.KcmpEpollSlot) (*fs.Description, error) {
	d, err := description(p, int(s.EFD))
	if err != nil {
		return nil, err
	}
	e, ok := d.Epoll()
	if !ok {
		return nil, unix.EINVAL
	}
	target, ok := e.Target(int(s.TFD), int(min(s.TOff, 1<<31)))
	if !ok {
		return nil, unix.ENOENT
	}
	return target, nil
}
