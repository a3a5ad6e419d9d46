package syscall

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/mm"
)

func init() {
	register(sysno.MemfdCreate, sysMemfdCreate)
}

// memfd_create(2)'s flags; with MFD_HUGETLB, the huge page size's log in
// the bits from mfdHugeShift.
const (
	mfdCloexec      = 1
	mfdAllowSealing = 2
	mfdHugetlb      = 4
	mfdNoexecSeal   = 8
	mfdExec         = 0x10
	mfdHugeShift    = 26
	mfdHugeMask     = 0x3f
)

// mfdNameMax is the longest name, NAME_MAX less "memfd:".
const mfdNameMax = 255 - len("memfd:")

// sysMemfdCreate implements memfd_create(2): an unnamed regular file,
// open for reading and writing, that /proc/PID/fd shows as
// "/memfd:NAME (deleted)".
func sysMemfdCreate(t *kernel.Task, a Args) (uint64, error) {
	flags := uint64(uint32(a[1])) // an unsigned int, which riscv64 passes sign-extended
	allowed := uint64(mfdCloexec | mfdAllowSealing | mfdNoexecSeal | mfdExec)
	if flags&mfdHugetlb != 0 {
		allowed |= mfdHugetlb | mfdHugeMask<<mfdHugeShift
	}
	if flags&^allowed != 0 || flags&mfdNoexecSeal != 0 && flags&mfdExec != 0 {
		return 0, unix.EINVAL
	}
	t.Proc.Lock()
	name, err := t.Proc.AS.CopyInString(uintptr(a[0]), mfdNameMax+1)
	t.Proc.Unlock()
	switch {
	case errors.Is(err, mm.ErrInvalid):
		return 0, unix.EINVAL
	case err != nil:
		return 0, unix.EFAULT
	}
	noExec := flags&mfdNoexecSeal != 0
	if flags&mfdHugetlb != 0 {
		return memfdHuge(t, name, uint(flags>>mfdHugeShift&mfdHugeMask), noExec, flags&mfdCloexec != 0)
	}
	n := fs.NewMemfd(t.Proc.Root, t.Proc.Cred(), flags&(mfdAllowSealing|mfdNoexecSeal) != 0, noExec)
	f := t.Proc.Root.OpenNode(n, "/memfd:"+name+" (deleted)")
	fd, err := t.Proc.Files.Open(f, unix.O_RDWR|unix.O_LARGEFILE, flags&mfdCloexec != 0)
	return uint64(fd), err
}

// memfdHuge makes a memfd of huge pages of 2^sizeLog bytes (the default
// size for 0): ENODEV for a size the kernel does not offer, as Linux's
// hugetlb_file_setup.
func memfdHuge(t *kernel.Task, name string, sizeLog uint, noExec, cloexec bool) (uint64, error) {
	pool := t.Kernel().HugePool(sizeLog)
	if pool == nil {
		return 0, unix.ENODEV
	}
	perm := uint32(0o777)
	if noExec {
		perm = 0o666
	}
	f := fs.NewHugeFile(pool, t.Proc.Cred(), perm, "/memfd:"+name+" (deleted)")
	fd, err := t.Proc.Files.Open(f, unix.O_RDWR|unix.O_LARGEFILE, cloexec)
	return uint64(fd), err
}
