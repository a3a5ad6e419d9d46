package syscall

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/syscall/sysno"
)

func init() {
	register(sysno.Brk, sysBrk)
	register(sysno.Mmap, sysMmap)
	register(sysno.Munmap, sysMunmap)
	register(sysno.Mprotect, sysMprotect)
	register(sysno.Madvise, sysMadvise)
}

func memErrno(err error) unix.Errno {
	switch {
	case errors.Is(err, mm.ErrNoMemory):
		return unix.ENOMEM
	case errors.Is(err, mm.ErrFault):
		return unix.EFAULT
	case errors.Is(err, mm.ErrInvalid):
		return unix.EINVAL
	}
	return unix.EIO
}

func protPerm(prot uint64) uint64 {
	return mm.Perm(prot&unix.PROT_READ != 0, prot&unix.PROT_WRITE != 0, prot&unix.PROT_EXEC != 0)
}

// sysBrk implements brk(2): it returns the new break, or the old one on failure.
func sysBrk(t *kernel.Task, a Args) (uint64, error) {
	p := t.Proc
	p.Lock()
	defer p.Unlock()
	if a[0] == 0 {
		return uint64(p.AS.Brk), nil
	}
	return uint64(p.AS.SetBrk(uintptr(a[0]))), nil
}

// sysMmap implements mmap(2): anonymous mappings, and private mappings of
// files, whose contents are copied in.
func sysMmap(t *kernel.Task, a Args) (uint64, error) {
	addr, length, prot, flags, fd, off := uintptr(a[0]), uintptr(a[1]), a[2], a[3], int(int32(a[4])), int64(a[5])
	const known = unix.MAP_SHARED | unix.MAP_PRIVATE | unix.MAP_FIXED | unix.MAP_ANONYMOUS |
		unix.MAP_NORESERVE | unix.MAP_STACK | unix.MAP_POPULATE | unix.MAP_FIXED_NOREPLACE | unix.MAP_GROWSDOWN | unix.MAP_DENYWRITE
	if length == 0 || flags&^known != 0 || off%mm.PageSize != 0 || flags&(unix.MAP_SHARED|unix.MAP_PRIVATE) == 0 {
		return 0, unix.EINVAL
	}
	var data []byte
	if flags&unix.MAP_ANONYMOUS == 0 {
		f, err := t.Proc.Files.Get(fd)
		if err != nil {
			return 0, err
		}
		nf, ok := f.File.(*fs.NodeFile)
		if !ok || nf.Node().IsDir() {
			return 0, unix.ENODEV
		}
		if flags&unix.MAP_SHARED != 0 && prot&unix.PROT_WRITE != 0 {
			return 0, unix.EACCES // the initramfs is read-only
		}
		if all := nf.Node().Data; off < int64(len(all)) {
			data = all[off:min(int64(len(all)), off+int64(length))]
		}
	}
	p := t.Proc
	p.Lock()
	defer p.Unlock()
	if flags&unix.MAP_FIXED_NOREPLACE != 0 && !p.AS.IsFree(addr, length) {
		return 0, unix.EEXIST
	}
	fixed := flags&(unix.MAP_FIXED|unix.MAP_FIXED_NOREPLACE) != 0
	got, err := p.AS.Map(addr, length, protPerm(prot), fixed)
	if err != nil {
		return 0, err
	}
	if len(data) > 0 {
		if err := p.AS.Populate(got, data); err != nil {
			p.AS.Unmap(got, length)
			return 0, err
		}
	}
	return uint64(got), nil
}

// sysMunmap implements munmap(2).
func sysMunmap(t *kernel.Task, a Args) (uint64, error) {
	t.Proc.Lock()
	defer t.Proc.Unlock()
	return 0, t.Proc.AS.Unmap(uintptr(a[0]), uintptr(a[1]))
}

// sysMprotect implements mprotect(2).
func sysMprotect(t *kernel.Task, a Args) (uint64, error) {
	if a[2]&^(unix.PROT_READ|unix.PROT_WRITE|unix.PROT_EXEC) != 0 {
		return 0, unix.EINVAL
	}
	t.Proc.Lock()
	defer t.Proc.Unlock()
	return 0, t.Proc.AS.Protect(uintptr(a[0]), uintptr(a[1]), protPerm(a[2]))
}

// sysMadvise implements madvise(2) as advice only: nothing changes.
func sysMadvise(t *kernel.Task, a Args) (uint64, error) {
	if a[0]%mm.PageSize != 0 {
		return 0, unix.EINVAL
	}
	return 0, nil
}
