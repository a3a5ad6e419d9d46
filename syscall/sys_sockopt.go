package syscall

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/kernel"
	"github.com/jiege-go/jiege/kernel/bpf"
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
	if level == unix.SOL_SOCKET {
		switch name {
		case unix.SO_RCVTIMEO_OLD, unix.SO_RCVTIMEO_NEW, unix.SO_SNDTIMEO_OLD, unix.SO_SNDTIMEO_NEW:
			return 0, setTimeout(t, so, name, a[3], a[4])
		case unix.SO_SNDBUFFORCE, unix.SO_RCVBUFFORCE:
			if !t.Proc.Cred().Privileged() { // CAP_NET_ADMIN
				return 0, unix.EPERM
			}
		}
	}
	if level == unix.SOL_SOCKET && (name == unix.SO_ATTACH_BPF || name == unix.SO_DETACH_BPF) {
		return 0, setFilter(t, so, name, a[3], a[4])
	}
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
	switch {
	case level == unix.SOL_SOCKET && name == unix.SO_PEERCRED:
		cred := jnet.NoPeerCred
		if p, ok := so.(peerCredSocket); ok {
			cred = p.PeerCred()
		}
		out = linux.Append(nil, linux.Ucred{Pid: int32(t.Proc.NumberOf(int(cred.PID))), Uid: cred.UID, Gid: cred.GID})
	case level == unix.SOL_SOCKET && isTimeoutOption(name):
		var d time.Duration
		if ts, ok := so.(jnet.TimeoutSocket); ok {
			d = ts.Timeout(name == unix.SO_SNDTIMEO_OLD || name == unix.SO_SNDTIMEO_NEW)
		}
		out = linux.Append(nil, linux.Timeval{Sec: int64(d / time.Second), Usec: int64(d % time.Second / time.Microsecond)})
	case level == unix.SOL_SOCKET && name == unix.SO_LINGER:
		l, err := so.Linger()
		if err != nil {
			return 0, err
		}
		out = linux.Append(nil, linux.Linger{OnOff: int32(boolInt(l.On)), Linger: int32(l.Seconds)})
	default:
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

// peerCredSocket is a socket that knows its peer's credentials
// (SO_PEERCRED): a Unix socket.
type peerCredSocket interface{ PeerCred() jnet.Ucred }

func isTimeoutOption(name int) bool {
	switch name {
	case unix.SO_RCVTIMEO_OLD, unix.SO_RCVTIMEO_NEW, unix.SO_SNDTIMEO_OLD, unix.SO_SNDTIMEO_NEW:
		return true
	}
	return false
}

// setTimeout sets SO_RCVTIMEO or SO_SNDTIMEO from the struct timeval at
// addr, as Linux's sock_set_timeout: EINVAL when optlen is short, EDOM
// for microseconds out of range, no wait for a negative time, for ever
// for 0.
func setTimeout(t *kernel.Task, so jnet.Socket, name int, addr, length uint64) error {
	if length < uint64(unsafe.Sizeof(linux.Timeval{})) {
		return unix.EINVAL
	}
	var tv linux.Timeval
	if err := copyInStruct(t, addr, &tv); err != nil {
		return err
	}
	if tv.Usec < 0 || tv.Usec >= 1000000 {
		return unix.EDOM
	}
	ts, ok := so.(jnet.TimeoutSocket)
	if !ok {
		return unix.ENOPROTOOPT
	}
	d := time.Duration(min(tv.Sec, 1<<32))*time.Second + time.Duration(tv.Usec)*time.Microsecond
	if tv.Sec < 0 {
		d = time.Nanosecond // Linux's timeout of 0 jiffies: no wait at all
	}
	ts.SetTimeout(name == unix.SO_SNDTIMEO_OLD || name == unix.SO_SNDTIMEO_NEW, d)
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// setFilter attaches the socket filter whose descriptor optval holds
// (SO_ATTACH_BPF: optlen exactly 4, EBADF for no descriptor, EINVAL for
// anything but a socket filter) or detaches the socket's (SO_DETACH_BPF:
// ENOENT without one), as Linux's sk_attach_bpf and sk_detach_filter.
// Sockets that run no filter (all but Unix datagram ones) refuse with
// ENOPROTOOPT.
func setFilter(t *kernel.Task, so jnet.Socket, name int, optval, optlen uint64) error {
	if optlen < 4 || (name == unix.SO_ATTACH_BPF && optlen != 4) {
		return unix.EINVAL
	}
	var fd int32
	if err := copyInStruct(t, optval, &fd); err != nil {
		return err
	}
	fso, ok := so.(jnet.FilterSocket)
	if name == unix.SO_DETACH_BPF {
		if !ok {
			return unix.ENOPROTOOPT
		}
		return fso.DetachFilter()
	}
	d, err := t.Proc.Files.Get(int(fd))
	if err != nil {
		return err
	}
	defer d.DecRef()
	p, isProg := d.File.(*bpf.Prog)
	switch {
	case !isProg:
		return unix.EINVAL
	case !ok:
		return unix.ENOPROTOOPT
	}
	p.IncRef()
	fso.AttachFilter(p)
	return nil
}
