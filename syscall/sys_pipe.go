package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
)

func init() {
	register(sysno.Pipe2, sysPipe2)
}

// sysPipe2 implements pipe2(2).
func sysPipe2(t *kernel.Task, a Args) (uint64, error) {
	flags := a[1]
	if flags&^(unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_DIRECT) != 0 {
		return 0, unix.EINVAL
	}
	r, w := t.Kernel().Pipes().NewPipe(t.Proc.UID, t.Proc.Caps.Effective&(1<<(unix.CAP_SYS_RESOURCE)|1<<unix.CAP_SYS_ADMIN) != 0)
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
	if err := copyOutStruct(t, addr, [2]int32{int32(fx), int32(fy)}); err != nil {
		t.Proc.Files.Close(fx)
		t.Proc.Files.Close(fy)
		return err
	}
	return nil
}
