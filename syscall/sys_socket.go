package syscall

import (
	"encoding/binary"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	jnet "github.com/jiege-go/jiege/net"
	"github.com/jiege-go/jiege/syscall/sysno"
)

func init() {
	register(sysno.Socket, sysSocket)
	register(sysno.Bind, sysBind)
	register(sysno.Listen, sysListen)
	register(sysno.Accept, sysAccept)
	register(sysno.Accept4, sysAccept4)
	register(sysno.Connect, sysConnect)
	register(sysno.Getsockname, sysGetsockname)
	register(sysno.Getpeername, sysGetpeername)
	register(sysno.Setsockopt, sysSetsockopt)
	register(sysno.Getsockopt, sysGetsockopt)
	register(sysno.Shutdown, sysShutdown)
	register(sysno.Sendto, sysSendto)
	register(sysno.Recvfrom, sysRecvfrom)
	register(sysno.Socketpair, sysSocketpair)
	register(sysno.Sendmsg, sysSendmsg)
	register(sysno.Recvmsg, sysRecvmsg)
}

// sysSocketpair implements socketpair(2) for AF_UNIX stream sockets.
func sysSocketpair(t *kernel.Task, a Args) (uint64, error) {
	if a[0] != unix.AF_UNIX {
		return 0, unix.EAFNOSUPPORT
	}
	if a[1]&^(unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC) != unix.SOCK_STREAM || a[2] != 0 {
		return 0, unix.EPROTONOSUPPORT
	}
	x, y := jnet.SocketPair()
	cloexec := a[1]&unix.SOCK_CLOEXEC != 0
	flags := unix.O_RDWR | uint32(a[1]&unix.SOCK_NONBLOCK)
	fx, err := t.Proc.Files.Open(x, flags, cloexec)
	if err != nil {
		y.Close()
		return 0, err
	}
	fy, err := t.Proc.Files.Open(y, flags, cloexec)
	if err != nil {
		t.Proc.Files.Close(fx)
		return 0, err
	}
	b := make([]byte, 8)
	binary.LittleEndian.PutUint32(b, uint32(fx))
	binary.LittleEndian.PutUint32(b[4:], uint32(fy))
	if err := copyOut(t, a[3], b); err != nil {
		t.Proc.Files.Close(fx)
		t.Proc.Files.Close(fy)
		return 0, err
	}
	return 0, nil
}

// msghdr is struct msghdr on riscv64: name, namelen (+4 padding), iov,
// iovlen, control, controllen, flags.
type msghdr struct {
	iov, iovlen, control, controllen uint64
}

func readMsghdr(t *kernel.Task, addr uint64) (msghdr, error) {
	b := make([]byte, 56)
	if err := copyIn(t, addr, b); err != nil {
		return msghdr{}, err
	}
	le := binary.LittleEndian
	return msghdr{iov: le.Uint64(b[16:]), iovlen: le.Uint64(b[24:]), control: le.Uint64(b[32:]), controllen: le.Uint64(b[40:])}, nil
}

// sysSendmsg implements sendmsg(2) for data; passing descriptors
// (SCM_RIGHTS) is not supported yet.
func sysSendmsg(t *kernel.Task, a Args) (uint64, error) {
	m, err := readMsghdr(t, a[1])
	if err != nil {
		return 0, err
	}
	if m.controllen != 0 {
		return 0, unix.EOPNOTSUPP
	}
	return sysWritev(t, Args{a[0], m.iov, m.iovlen})
}

// sysRecvmsg implements recvmsg(2) for data: no control messages come back.
func sysRecvmsg(t *kernel.Task, a Args) (uint64, error) {
	m, err := readMsghdr(t, a[1])
	if err != nil {
		return 0, err
	}
	n, err := sysReadv(t, Args{a[0], m.iov, m.iovlen})
	if err != nil {
		return 0, err
	}
	// msg_controllen = 0, msg_flags = 0.
	if err := copyOut(t, a[1]+40, make([]byte, 16)); err != nil {
		return 0, err
	}
	return n, nil
}

const sockaddrInLen = 16

// sysSocket implements socket(2) for IPv4 TCP.
func sysSocket(t *kernel.Task, a Args) (uint64, error) {
	domain, typ, proto := a[0], a[1], a[2]
	if domain != unix.AF_INET {
		return 0, unix.EAFNOSUPPORT
	}
	if typ&^(unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC) != unix.SOCK_STREAM || (proto != 0 && proto != unix.IPPROTO_TCP) {
		return 0, unix.EPROTONOSUPPORT
	}
	if kernel.Network == nil {
		return 0, unix.ENETDOWN
	}
	so, err := kernel.Network.NewTCP()
	if err != nil {
		return 0, err
	}
	fd, err := t.Proc.Files.Open(so, unix.O_RDWR|uint32(typ&unix.SOCK_NONBLOCK), typ&unix.SOCK_CLOEXEC != 0)
	return uint64(fd), err
}

// socket returns the socket open on fd and its description.
func socket(t *kernel.Task, fd uint64) (*jnet.Socket, *fs.Description, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, nil, err
	}
	so, ok := d.File.(*jnet.Socket)
	if !ok {
		return nil, nil, unix.ENOTSOCK
	}
	return so, d, nil
}

// readSockaddr reads a struct sockaddr_in.
func readSockaddr(t *kernel.Task, addr, length uint64) ([4]byte, uint16, error) {
	if length < sockaddrInLen {
		return [4]byte{}, 0, unix.EINVAL
	}
	b := make([]byte, sockaddrInLen)
	if err := copyIn(t, addr, b); err != nil {
		return [4]byte{}, 0, err
	}
	if binary.LittleEndian.Uint16(b) != unix.AF_INET {
		return [4]byte{}, 0, unix.EAFNOSUPPORT
	}
	return [4]byte(b[4:8]), binary.BigEndian.Uint16(b[2:4]), nil
}

// writeSockaddr writes a struct sockaddr_in where addr points, honouring the
// caller's buffer length at lenAddr and storing the full length there.
func writeSockaddr(t *kernel.Task, addr, lenAddr uint64, ip [4]byte, port uint16) error {
	if addr == 0 {
		return nil
	}
	lb := make([]byte, 4)
	if err := copyIn(t, lenAddr, lb); err != nil {
		return err
	}
	max := binary.LittleEndian.Uint32(lb)
	if int32(max) < 0 {
		return unix.EINVAL
	}
	b := make([]byte, sockaddrInLen)
	binary.LittleEndian.PutUint16(b, unix.AF_INET)
	binary.BigEndian.PutUint16(b[2:], port)
	copy(b[4:], ip[:])
	if err := copyOut(t, addr, b[:min(int(max), sockaddrInLen)]); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(lb, sockaddrInLen)
	return copyOut(t, lenAddr, lb)
}

// sysBind implements bind(2).
func sysBind(t *kernel.Task, a Args) (uint64, error) {
	so, _, err := socket(t, a[0])
	if err != nil {
		return 0, err
	}
	ip, port, err := readSockaddr(t, a[1], a[2])
	if err != nil {
		return 0, err
	}
	return 0, so.Bind(ip, port)
}

// sysListen implements listen(2).
func sysListen(t *kernel.Task, a Args) (uint64, error) {
	so, _, err := socket(t, a[0])
	if err != nil {
		return 0, err
	}
	return 0, so.Listen(int(int32(a[1])))
}

// sysAccept implements accept(2).
func sysAccept(t *kernel.Task, a Args) (uint64, error) {
	return sysAccept4(t, Args{a[0], a[1], a[2], 0})
}

// sysAccept4 implements accept4(2).
func sysAccept4(t *kernel.Task, a Args) (uint64, error) {
	if a[3]&^(unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC) != 0 {
		return 0, unix.EINVAL
	}
	so, d, err := socket(t, a[0])
	if err != nil {
		return 0, err
	}
	conn, ip, port, err := so.Accept()
	for err == unix.EAGAIN && !d.Nonblock() {
		if err = waitReady(t, d, unix.EPOLLIN); err == nil {
			conn, ip, port, err = so.Accept()
		}
	}
	if err != nil {
		return 0, err
	}
	if err := writeSockaddr(t, a[1], a[2], ip, port); err != nil {
		conn.Close()
		return 0, err
	}
	fd, err := t.Proc.Files.Open(conn, unix.O_RDWR|uint32(a[3]&unix.SOCK_NONBLOCK), a[3]&unix.SOCK_CLOEXEC != 0)
	return uint64(fd), err
}

// sysConnect implements connect(2); without O_NONBLOCK it waits until the
// connection is made or refused.
func sysConnect(t *kernel.Task, a Args) (uint64, error) {
	so, d, err := socket(t, a[0])
	if err != nil {
		return 0, err
	}
	ip, port, err := readSockaddr(t, a[1], a[2])
	if err != nil {
		return 0, err
	}
	err = so.Connect(ip, port)
	if err != unix.EINPROGRESS || d.Nonblock() {
		return 0, err
	}
	if err := waitReady(t, d, unix.EPOLLOUT); err != nil {
		return 0, err
	}
	return 0, so.ConnectResult()
}

// sysGetsockname implements getsockname(2).
func sysGetsockname(t *kernel.Task, a Args) (uint64, error) {
	return sockName(t, a, (*jnet.Socket).LocalAddr)
}

// sysGetpeername implements getpeername(2).
func sysGetpeername(t *kernel.Task, a Args) (uint64, error) {
	return sockName(t, a, (*jnet.Socket).PeerAddr)
}

// sockName writes one of a socket's addresses to (a[1], a[2]).
func sockName(t *kernel.Task, a Args, addr func(*jnet.Socket) ([4]byte, uint16, error)) (uint64, error) {
	so, _, err := socket(t, a[0])
	if err != nil {
		return 0, err
	}
	ip, port, err := addr(so)
	if err != nil {
		return 0, err
	}
	return 0, writeSockaddr(t, a[1], a[2], ip, port)
}

// sysSetsockopt implements setsockopt(2) for the options a server sets.
func sysSetsockopt(t *kernel.Task, a Args) (uint64, error) {
	so, _, err := socket(t, a[0])
	if err != nil {
		return 0, err
	}
	if a[4] < 4 {
		return 0, unix.EINVAL
	}
	b := make([]byte, 4)
	if err := copyIn(t, a[3], b); err != nil {
		return 0, err
	}
	on := binary.LittleEndian.Uint32(b) != 0
	switch {
	case a[1] == unix.SOL_SOCKET && a[2] == unix.SO_REUSEADDR:
		so.SetReuseAddr(on)
	case a[1] == unix.SOL_SOCKET && a[2] == unix.SO_KEEPALIVE:
		so.SetKeepAlive(on)
	case a[1] == unix.IPPROTO_TCP && a[2] == unix.TCP_NODELAY:
		so.SetNoDelay(on)
	case a[1] == unix.IPPROTO_TCP && a[2] == unix.TCP_CORK:
		so.SetCork(on)
	case a[1] == unix.SOL_SOCKET && (a[2] == unix.SO_REUSEPORT || a[2] == unix.SO_RCVBUF || a[2] == unix.SO_SNDBUF):
		// Accepted; netstack sizes its buffers itself.
	case a[1] == unix.IPPROTO_TCP && a[2] == unix.TCP_DEFER_ACCEPT:
		// Accepted; connections are handed over at once.
	default:
		return 0, unix.ENOPROTOOPT
	}
	return 0, nil
}

// sysGetsockopt implements getsockopt(2) for SO_ERROR and SO_TYPE.
func sysGetsockopt(t *kernel.Task, a Args) (uint64, error) {
	so, _, err := socket(t, a[0])
	if err != nil {
		return 0, err
	}
	var v uint32
	switch {
	case a[1] == unix.SOL_SOCKET && a[2] == unix.SO_ERROR:
		if errno, ok := so.ConnectResult().(unix.Errno); ok {
			v = uint32(errno)
		}
	case a[1] == unix.SOL_SOCKET && a[2] == unix.SO_TYPE:
		v = unix.SOCK_STREAM
	default:
		return 0, unix.ENOPROTOOPT
	}
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, v)
	if err := copyOut(t, a[3], b); err != nil {
		return 0, err
	}
	binary.LittleEndian.PutUint32(b, 4)
	return 0, copyOut(t, a[4], b) // *optlen
}

// sysShutdown implements shutdown(2).
func sysShutdown(t *kernel.Task, a Args) (uint64, error) {
	so, _, err := socket(t, a[0])
	if err != nil {
		return 0, err
	}
	return 0, so.Shutdown(int(a[1]))
}

// sysSendto implements sendto(2) on connected sockets.
func sysSendto(t *kernel.Task, a Args) (uint64, error) {
	if a[4] != 0 {
		return 0, unix.EISCONN
	}
	return sysWrite(t, Args{a[0], a[1], a[2]})
}

// sysRecvfrom implements recvfrom(2) on connected sockets.
func sysRecvfrom(t *kernel.Task, a Args) (uint64, error) {
	n, err := sysRead(t, Args{a[0], a[1], a[2]})
	if err != nil || a[4] == 0 {
		return n, err
	}
	so, _, err := socket(t, a[0])
	if err != nil {
		return 0, err
	}
	ip, port, err := so.PeerAddr()
	if err != nil {
		return 0, err
	}
	return n, writeSockaddr(t, a[4], a[5], ip, port)
}
