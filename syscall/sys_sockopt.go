package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
	jnet "github.com/jiege-go/jiege/net"
)

func init() {
	register(sysno.Setsockopt, sysSetsockopt)
	register(sysno.Getsockopt, sysGetsockopt)
}

// Socket options: integer options, and SO_LINGER's struct linger; each
// socket says which it has.

// sysSetsockopt implements setsockopt(2): integer options and SO_LINGER.
func sysSetsockopt(t *kernel.Task, a Args) (uint64, error) {
	so, d, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	level, name := int(int32(a[1])), int(int32(a[2]))
	if level == unix.SOL_SOCKET && name == unix.SO_LINGER {
		var l linux.Linger
		if a[4] < 8 {
			return 0, unix.EINVAL
		}
		if err := copyInStruct(t, a[3], &l); err != nil {
			return 0, err
		}
		return 0, so.SetLinger(jnet.Linger{On: l.OnOff != 0, Seconds: int(max(l.Linger, 0))})
	}
	if a[4] < 4 {
		return 0, unix.EINVAL
	}
	var v int32
	if err := copyInStruct(t, a[3], &v); err != nil {
		return 0, err
	}
	return 0, so.SetIntOption(level, name, int(v))
}

// sysGetsockopt implements getsockopt(2): integer options and SO_LINGER.
func sysGetsockopt(t *kernel.Task, a Args) (uint64, error) {
	so, d, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	var room int32
	if err := copyInStruct(t, a[4], &room); err != nil {
		return 0, err
	}
	if room < 0 {
		return 0, unix.EINVAL
	}
	level, name := int(int32(a[1])), int(int32(a[2]))
	var out []byte
	if level == unix.SOL_SOCKET && name == unix.SO_LINGER {
		l, err := so.Linger()
		if err != nil {
			return 0, err
		}
		out = linux.Append(nil, linux.Linger{OnOff: int32(boolInt(l.On)), Linger: int32(l.Seconds)})
	} else {
		v, err := so.IntOption(level, name)
		if err != nil {
			return 0, err
		}
		out = linux.Append(nil, int32(v))
	}
	out = out[:min(int(room), len(out))]
	if err := copyOut(t, a[3], out); err != nil {
		return 0, err
	}
	return 0, copyOutStruct(t, a[4], uint32(len(out))) // *optlen
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
