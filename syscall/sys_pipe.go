package syscall

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/syscall/sysno"
)

func init() {
	register(sysno.Pipe2, sysPipe2)
	register(sysno.Dup, sysDup)
	register(sysno.Dup3, sysDup3)
}

// sysPipe2 implements pipe2(2).
func sysPipe2(t *kernel.Task, a Args) (uint64, error) {
	flags := a[1]
	if flags&^(unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_DIRECT) != 0 {
		return 0, unix.EINVAL
	}
	r, w := fs.NewPipe()
	status := uint32(flags & unix.O_NONBLOCK)
	return 0, installPair(t, r, w, unix.O_RDONLY|status, unix.O_WRONLY|status, flags&unix.O_CLOEXEC != 0, a[0])
}

// installPair opens x and y (pipe ends, a socket pair) on the two lowest
// free descriptors and stores their numbers as int[2] at addr; on failure
// neither stays open.
func installPair(t *kernel.Task, x, y fs.File, xflags, yflags uint32, cloexec bool, addr uint64) error {
	fx, err := t.Proc.Files.Open(x, xflags, cloexec)
	if err != nil {
		y.Close()
		return err
	}
	fy, err := t.Proc.Files.Open(y, yflags, cloexec)
	if err != nil {
		t.Proc.Files.Close(fx)
		return err
	}
	b := make([]byte, 8)
	binary.LittleEndian.PutUint32(b, uint32(fx))
	binary.LittleEndian.PutUint32(b[4:], uint32(fy))
	if err := copyOut(t, addr, b); err != nil {
		t.Proc.Files.Close(fx)
		t.Proc.Files.Close(fy)
		return err
	}
	return nil
}

// sysDup implements dup(2).
func sysDup(t *kernel.Task, a Args) (uint64, error) {
	d, err := t.Proc.Files.Get(int(int32(a[0])))
	if err != nil {
		return 0, err
	}
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
	return uint64(newfd), t.Proc.Files.InstallAt(d, newfd, a[2]&unix.O_CLOEXEC != 0)
}
