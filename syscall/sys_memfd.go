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

// memfd_create(2)'s flags (MFD_HUGETLB is not offered: no huge pages).
const (
	mfdCloexec      = 1
	mfdAllowSealing = 2
	mfdNoexecSeal   = 8
	mfdExec         = 0x10
)

// mfdNameMax is the longest name, NAME_MAX less "memfd:".
const mfdNameMax = 255 - len("memfd:")

// sysMemfdCreate implements memfd_create(2): an unnamed regular file,
// open for reading and writing, that /proc/PID/fd shows as
// "/memfd:NAME (deleted)".
func sysMemfdCreate(t *kernel.Task, a Args) (uint64, error) {
	flags := a[1]
	if flags&^(mfdCloexec|mfdAllowSealing|mfdNoexecSeal|mfdExec) != 0 ||
		flags&mfdNoexecSeal != 0 && flags&mfdExec != 0 {
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
	n := fs.NewMemfd(t.Proc.Root, t.Proc.Cred(), flags&(mfdAllowSealing|mfdNoexecSeal) != 0, noExec)
	f := t.Proc.Root.OpenNode(n, "/memfd:"+name+" (deleted)")
	fd, err := t.Proc.Files.Open(f, unix.O_RDWR|unix.O_LARGEFILE, flags&mfdCloexec != 0)
	return uint64(fd), err
}
