package syscall

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/syscall/sysno"
)

func init() {
	register(sysno.Wait4, sysWait4)
}

// sysWait4 implements wait4(2) without resource usage.
func sysWait4(t *kernel.Task, a Args) (uint64, error) {
	if a[2]&^(unix.WNOHANG|unix.WUNTRACED|unix.WCONTINUED) != 0 {
		return 0, unix.EINVAL
	}
	cpid, status, err := t.Wait(int(int32(a[0])), int(a[2]))
	if err != nil || cpid == 0 {
		return 0, err
	}
	if a[1] != 0 {
		b := make([]byte, 4)
		binary.LittleEndian.PutUint32(b, uint32(status))
		if err := copyOut(t, a[1], b); err != nil {
			return 0, err
		}
	}
	if a[3] != 0 {
		if err := copyOut(t, a[3], make([]byte, 144)); err != nil { // struct rusage, all zero
			return 0, err
		}
	}
	return uint64(cpid), nil
}
