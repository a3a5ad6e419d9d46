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
	cloexec := flags&unix.O_CLOEXEC != 0
	status := uint32(flags & unix.O_NONBLOCK)
	rfd, err := t.Proc.Files.Open(r, unix.O_RDONLY|status, cloexec)
	if err != nil {
		w.Close()
		return 0, err
	}
	wfd, err := t.Proc.Files.Open(w, unix.O_WRONLY|status, cloexec)
	if err != nil {
		t.Proc.Files.Close(rfd)
		return 0, err
	}
	b := make([]byte, 8)
	binary.LittleEndian.PutUint32(b, uint32(rfd))
	binary.LittleEndian.PutUint32(b[4:], uint32(wfd))
	if err := copyOut(t, a[0], b); err != nil {
		t.Proc.Files.Close(rfd)
		t.Proc.Files.Close(wfd)
		return 0, err
	}
	return 0, nil
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
