package syscall

import (
	"encoding/binary"
	iofs "io/fs"
	"net/netip"
	"time"

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
	register(sysno.Sendmmsg, sysSendmmsg)
	register(sysno.Recvmmsg, sysRecvmmsg)
}

// Sockets: TCP and UDP over IPv4 and IPv6 on the netstack (jnet.Socket),
// Unix stream sockets (jnet.UnixSocket) and NETLINK_ROUTE sockets
// (jnet.NetlinkSocket). Handlers find which one a descriptor holds and
// call it.

// sockaddr is a decoded struct sockaddr_in, sockaddr_in6, sockaddr_un or
// sockaddr_nl.
type sockaddr struct {
	family   uint16
	ip       netip.Addr
	port     uint16
	path     string // AF_UNIX: a path, or an abstract name
	abstract bool
	nlPid    uint32 // AF_NETLINK: the port id (0: the kernel)
	nlGroups uint32 // AF_NETLINK: multicast groups
}

const (
	sockaddrInLen     = 16
	sockaddrIn6MinLen = 24  // SIN6_LEN_RFC2133: without sin6_scope_id
	sockaddrUnLen     = 110 // sa_family_t + sun_path[108]
)

// readSockaddr reads a socket address of the family the socket has.
func readSockaddr(t *kernel.Task, addr, length uint64, family uint16) (sockaddr, error) {
	if int32(length) < 2 || length > 128 {
		return sockaddr{}, unix.EINVAL
	}
	b := make([]byte, length)
	if err := copyIn(t, addr, b); err != nil {
		return sockaddr{}, err
	}
	sa := sockaddr{family: binary.LittleEndian.Uint16(b)}
	// Linux checks an inet or netlink address's length before its family.
	if (family == unix.AF_INET && length < sockaddrInLen) || (family == unix.AF_INET6 && length < sockaddrIn6MinLen) ||
		(family == unix.AF_NETLINK && length < unix.SizeofSockaddrNetlink) {
		return sockaddr{}, unix.EINVAL
	}
	if sa.family != family {
		if family == unix.AF_UNIX || family == unix.AF_NETLINK {
			return sockaddr{}, unix.EINVAL
		}
		return sockaddr{}, unix.EAFNOSUPPORT
	}
	switch family {
	case unix.AF_INET:
		sa.ip, sa.port = netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:4])
	case unix.AF_INET6:
		sa.ip, sa.port = netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:4])
	case unix.AF_NETLINK:
		sa.nlPid, sa.nlGroups = binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
	case unix.AF_UNIX:
		name := b[2:min(len(b), sockaddrUnLen)]
		if len(name) > 0 && name[0] == 0 {
			sa.abstract, sa.path = true, string(name[1:])
		} else {
			if i := indexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			sa.path = string(name)
		}
	}
	return sa, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// writeSockaddr writes sa where addr points, truncated to the caller's
// length at lenAddr, and stores the full length there.
func writeSockaddr(t *kernel.Task, addr, lenAddr uint64, sa sockaddr) error {
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
	b := make([]byte, 2, sockaddrUnLen)
	binary.LittleEndian.PutUint16(b, sa.family)
	switch sa.family {
	case unix.AF_INET:
		b = binary.BigEndian.AppendUint16(b, sa.port)
		var ip [4]byte
		if sa.ip.Is4() {
			ip = sa.ip.As4()
		}
		b = append(b, ip[:]...)
		b = append(b, make([]byte, 8)...)
	case unix.AF_INET6:
		b = binary.BigEndian.AppendUint16(b, sa.port)
		b = append(b, 0, 0, 0, 0) // sin6_flowinfo
		ip := sa.ip.As16()
		b = append(b, ip[:]...)
		b = append(b, 0, 0, 0, 0) // sin6_scope_id
	case unix.AF_NETLINK:
		b = append(b, 0, 0) // nl_pad
		b = binary.LittleEndian.AppendUint32(b, sa.nlPid)
		b = binary.LittleEndian.AppendUint32(b, sa.nlGroups)
	case unix.AF_UNIX:
		if sa.abstract {
			b = append(append(b, 0), sa.path...)
		} else if sa.path != "" {
			b = append(append(b, sa.path...), 0)
		}
	}
	if err := copyOut(t, addr, b[:min(int(max), len(b))]); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(lb, uint32(len(b)))
	return copyOut(t, lenAddr, lb)
}

// inetFamily is the address family of an inet socket.
func inetFamily(so *jnet.Socket) uint16 {
	if so.V6() {
		return unix.AF_INET6
	}
	return unix.AF_INET
}

// unixName turns a bound name as net keeps it into a sockaddr_un.
func unixName(name string) sockaddr {
	if len(name) > 0 && name[0] == '@' {
		return sockaddr{family: unix.AF_UNIX, path: name[1:], abstract: true}
	}
	return sockaddr{family: unix.AF_UNIX, path: name}
}

// sockFile returns the socket open on fd, whichever kind, and its description.
func sockFile(t *kernel.Task, fd uint64) (fs.File, *fs.Description, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, nil, err
	}
	switch d.File.(type) {
	case *jnet.Socket, *jnet.UnixSocket, *jnet.NetlinkSocket:
		return d.File, d, nil
	}
	return nil, nil, unix.ENOTSOCK
}

// socket returns the TCP socket open on fd: EOPNOTSUPP for a Unix one.
func socket(t *kernel.Task, fd uint64) (*jnet.Socket, *fs.Description, error) {
	f, d, err := sockFile(t, fd)
	if err != nil {
		return nil, nil, err
	}
	so, ok := f.(*jnet.Socket)
	if !ok {
		return nil, nil, unix.EOPNOTSUPP
	}
	return so, d, nil
}

// socketFlags splits a socket type argument into the type and the flags.
func socketFlags(typ uint64) (uint64, uint32, bool, error) {
	if typ&^(unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC|0xf) != 0 {
		return 0, 0, false, unix.EINVAL
	}
	return typ & 0xf, unix.O_RDWR | uint32(typ&unix.SOCK_NONBLOCK), typ&unix.SOCK_CLOEXEC != 0, nil
}

// sysSocket implements socket(2) for TCP and UDP over IPv4 and IPv6, Unix
// stream sockets and NETLINK_ROUTE sockets.
func sysSocket(t *kernel.Task, a Args) (uint64, error) {
	typ, flags, cloexec, err := socketFlags(a[1])
	if err != nil {
		return 0, err
	}
	var f fs.File
	switch a[0] {
	case unix.AF_INET, unix.AF_INET6:
		var dgram bool
		switch {
		case typ == unix.SOCK_STREAM && (a[2] == 0 || a[2] == unix.IPPROTO_TCP):
		case typ == unix.SOCK_DGRAM && (a[2] == 0 || a[2] == unix.IPPROTO_UDP):
			dgram = true
		default:
			return 0, unix.EPROTONOSUPPORT
		}
		if t.Kernel().Network == nil {
			return 0, unix.ENETDOWN
		}
		so, err := t.Kernel().Network.NewSocket(dgram, a[0] == unix.AF_INET6)
		if err != nil {
			return 0, err
		}
		f = so
	case unix.AF_UNIX:
		if typ != unix.SOCK_STREAM || a[2] != 0 {
			return 0, unix.EPROTONOSUPPORT
		}
		f = jnet.NewUnix()
	case unix.AF_NETLINK:
		if typ != unix.SOCK_RAW && typ != unix.SOCK_DGRAM {
			return 0, unix.ESOCKTNOSUPPORT
		}
		if a[2] != unix.NETLINK_ROUTE {
			return 0, unix.EPROTONOSUPPORT
		}
		f = jnet.NewNetlink(t.Kernel().Network, int(typ), uint32(t.Proc.PID), t.Proc.Cred().Privileged())
	default:
		return 0, unix.EAFNOSUPPORT
	}
	fd, err := t.Proc.Files.Open(f, flags, cloexec)
	return uint64(fd), err
}

// sysSocketpair implements socketpair(2) for Unix stream sockets
// (EOPNOTSUPP for IPv4, as Linux's inet sockets have no pairs).
func sysSocketpair(t *kernel.Task, a Args) (uint64, error) {
	switch a[0] {
	case unix.AF_UNIX:
	case unix.AF_INET, unix.AF_INET6:
		return 0, unix.EOPNOTSUPP
	default:
		return 0, unix.EAFNOSUPPORT
	}
	typ, flags, cloexec, err := socketFlags(a[1])
	if err != nil {
		return 0, err
	}
	if typ != unix.SOCK_STREAM || a[2] != 0 {
		return 0, unix.EPROTONOSUPPORT
	}
	x, y := jnet.SocketPair()
	return 0, installPair(t, x, y, flags, flags, cloexec, a[3])
}

// sysBind implements bind(2). A Unix socket bound to a path appears in
// the tree as a socket node.
func sysBind(t *kernel.Task, a Args) (uint64, error) {
	f, _, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	switch so := f.(type) {
	case *jnet.Socket:
		sa, err := readSockaddr(t, a[1], a[2], inetFamily(so))
		if err != nil {
			return 0, err
		}
		return 0, so.Bind(sa.ip, sa.port)
	case *jnet.UnixSocket:
		sa, err := readSockaddr(t, a[1], a[2], unix.AF_UNIX)
		if err != nil {
			return 0, err
		}
		if sa.abstract {
			return 0, so.BindAbstract(sa.path)
		}
		if so.Name() != "" {
			return 0, unix.EINVAL
		}
		p, err := resolve(t, unix.AT_FDCWD, sa.path)
		if err != nil {
			return 0, err
		}
		n := &fs.Node{Mode: iofs.ModeSocket | iofs.FileMode(0o777&^t.Proc.Umask), Bound: so}
		n.Touch()
		if err := t.Proc.Root.Create(t.Proc.Cred(), p, n); err != nil {
			if err == fs.ErrExist {
				return 0, unix.EADDRINUSE
			}
			return 0, err
		}
		return 0, so.BindPath(sa.path)
	case *jnet.NetlinkSocket:
		sa, err := readSockaddr(t, a[1], a[2], unix.AF_NETLINK)
		if err != nil {
			return 0, err
		}
		return 0, so.Bind(sa.nlPid, sa.nlGroups)
	}
	return 0, unix.ENOTSOCK
}

// sysListen implements listen(2).
func sysListen(t *kernel.Task, a Args) (uint64, error) {
	f, _, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	switch so := f.(type) {
	case *jnet.Socket:
		return 0, so.Listen(int(int32(a[1])))
	case *jnet.UnixSocket:
		return 0, so.Listen(int(int32(a[1])))
	case *jnet.NetlinkSocket:
		return 0, unix.EOPNOTSUPP
	}
	return 0, unix.ENOTSOCK
}

// sysAccept implements accept(2).
func sysAccept(t *kernel.Task, a Args) (uint64, error) {
	return sysAccept4(t, Args{a[0], a[1], a[2], 0})
}

// sysAccept4 implements accept4(2); without O_NONBLOCK it waits for a
// connection.
func sysAccept4(t *kernel.Task, a Args) (uint64, error) {
	if a[3]&^(unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC) != 0 {
		return 0, unix.EINVAL
	}
	f, d, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	accept := func() (fs.File, sockaddr, error) {
		switch so := f.(type) {
		case *jnet.Socket:
			conn, ip, port, err := so.Accept()
			return conn, sockaddr{family: inetFamily(so), ip: ip, port: port}, err
		case *jnet.UnixSocket:
			conn, err := so.Accept()
			if err != nil {
				return nil, sockaddr{}, err
			}
			peer, _ := conn.PeerName()
			return conn, unixName(peer), nil
		}
		return nil, sockaddr{}, unix.ENOTSOCK
	}
	conn, peer, err := accept()
	for err == unix.EAGAIN && !d.Nonblock() {
		if err = waitReady(t, d, unix.EPOLLIN); err == nil {
			conn, peer, err = accept()
		}
	}
	if err != nil {
		return 0, err
	}
	if err := writeSockaddr(t, a[1], a[2], peer); err != nil {
		conn.Close()
		return 0, err
	}
	fd, err := t.Proc.Files.Open(conn, unix.O_RDWR|uint32(a[3]&unix.SOCK_NONBLOCK), a[3]&unix.SOCK_CLOEXEC != 0)
	return uint64(fd), err
}

// sysConnect implements connect(2); without O_NONBLOCK it waits until the
// connection is made or refused.
func sysConnect(t *kernel.Task, a Args) (uint64, error) {
	f, d, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	switch so := f.(type) {
	case *jnet.Socket:
		if so.Datagram() && unspecified(t, a[1], a[2]) {
			return 0, so.Disconnect()
		}
		sa, err := readSockaddr(t, a[1], a[2], inetFamily(so))
		if err != nil {
			return 0, err
		}
		err = so.Connect(sa.ip, sa.port)
		if err != unix.EINPROGRESS || d.Nonblock() {
			return 0, err
		}
		if err := waitReady(t, d, unix.EPOLLOUT); err != nil {
			return 0, err
		}
		return 0, so.ConnectResult()
	case *jnet.UnixSocket:
		sa, err := readSockaddr(t, a[1], a[2], unix.AF_UNIX)
		if err != nil {
			return 0, err
		}
		l, err := unixListener(t, sa)
		if err != nil {
			return 0, err
		}
		return 0, so.Connect(l)
	case *jnet.NetlinkSocket:
		// Only the kernel can be the peer: connecting just binds.
		sa, err := readSockaddr(t, a[1], a[2], unix.AF_NETLINK)
		if err != nil {
			return 0, err
		}
		if sa.nlPid != 0 {
			return 0, unix.ECONNREFUSED
		}
		return 0, so.Bind(0, 0)
	}
	return 0, unix.ENOTSOCK
}

// unspecified reports whether the address at addr is AF_UNSPEC, which
// dissolves a datagram socket's association.
func unspecified(t *kernel.Task, addr, length uint64) bool {
	b := make([]byte, 2)
	return length >= 2 && copyIn(t, addr, b) == nil && binary.LittleEndian.Uint16(b) == unix.AF_UNSPEC
}

// unixListener finds the socket bound to a Unix address: ECONNREFUSED
// when the name holds no socket.
func unixListener(t *kernel.Task, sa sockaddr) (*jnet.UnixSocket, error) {
	if sa.abstract {
		l, ok := jnet.LookupAbstract(sa.path)
		if !ok {
			return nil, unix.ECONNREFUSED
		}
		return l, nil
	}
	p, err := resolve(t, unix.AT_FDCWD, sa.path)
	if err != nil {
		return nil, err
	}
	n, err := t.Proc.Root.Lookup(t.Proc.Cred(), p, true)
	if err != nil {
		return nil, err
	}
	if err := fs.Access(n, t.Proc.Cred(), fs.MayWrite); err != nil {
		return nil, err
	}
	l, ok := n.Bound.(*jnet.UnixSocket)
	if !ok {
		return nil, unix.ECONNREFUSED
	}
	return l, nil
}

// sysGetsockname implements getsockname(2).
func sysGetsockname(t *kernel.Task, a Args) (uint64, error) { return sockName(t, a, false) }

// sysGetpeername implements getpeername(2).
func sysGetpeername(t *kernel.Task, a Args) (uint64, error) { return sockName(t, a, true) }

// sockName writes the socket's own or its peer's address to (a[1], a[2]).
func sockName(t *kernel.Task, a Args, peer bool) (uint64, error) {
	f, _, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	var sa sockaddr
	switch so := f.(type) {
	case *jnet.Socket:
		addr := so.LocalAddr
		if peer {
			addr = so.PeerAddr
		}
		ip, port, err := addr()
		if err != nil {
			return 0, err
		}
		sa = sockaddr{family: inetFamily(so), ip: ip, port: port}
	case *jnet.UnixSocket:
		name := so.Name()
		if peer {
			if name, err = so.PeerName(); err != nil {
				return 0, err
			}
		}
		sa = unixName(name)
	case *jnet.NetlinkSocket:
		sa = sockaddr{family: unix.AF_NETLINK}
		if !peer {
			sa.nlPid, sa.nlGroups = so.Name()
		}
	}
	return 0, writeSockaddr(t, a[1], a[2], sa)
}

// sysSetsockopt implements setsockopt(2): integer options and SO_LINGER.
func sysSetsockopt(t *kernel.Task, a Args) (uint64, error) {
	f, _, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	level, name := int(int32(a[1])), int(int32(a[2]))
	so, inet := f.(*jnet.Socket)
	if level == unix.SOL_SOCKET && name == unix.SO_LINGER {
		var l linger
		if a[4] < 8 {
			return 0, unix.EINVAL
		}
		if err := copyInStruct(t, a[3], &l); err != nil {
			return 0, err
		}
		if inet {
			so.SetLinger(l.OnOff != 0, int(max(l.Linger, 0)))
		}
		return 0, nil
	}
	if a[4] < 4 {
		return 0, unix.EINVAL
	}
	b := make([]byte, 4)
	if err := copyIn(t, a[3], b); err != nil {
		return 0, err
	}
	v := int(int32(binary.LittleEndian.Uint32(b)))
	if inet {
		return 0, so.SetIntOption(level, name, v)
	}
	if _, ok := f.(*jnet.NetlinkSocket); ok {
		return 0, setNetlinkOption(level, name)
	}
	switch {
	case level == unix.SOL_SOCKET && (name == unix.SO_REUSEADDR || name == unix.SO_REUSEPORT ||
		name == unix.SO_KEEPALIVE || name == unix.SO_RCVBUF || name == unix.SO_SNDBUF):
		// Accepted: a Unix socket has no port to share and sizes its own buffers.
		return 0, nil
	}
	return 0, unix.ENOPROTOOPT
}

// linger is struct linger (SO_LINGER).
type linger struct {
	OnOff  int32
	Linger int32
}

// sysGetsockopt implements getsockopt(2): integer options and SO_LINGER.
func sysGetsockopt(t *kernel.Task, a Args) (uint64, error) {
	f, _, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	lb := make([]byte, 4)
	if err := copyIn(t, a[4], lb); err != nil {
		return 0, err
	}
	room := int32(binary.LittleEndian.Uint32(lb))
	if room < 0 {
		return 0, unix.EINVAL
	}
	level, name := int(int32(a[1])), int(int32(a[2]))
	var out []byte
	switch so := f.(type) {
	case *jnet.Socket:
		if level == unix.SOL_SOCKET && name == unix.SO_LINGER {
			on, secs := so.Linger()
			out, _ = binary.Append(nil, binary.LittleEndian, linger{OnOff: int32(boolInt(on)), Linger: int32(secs)})
			break
		}
		v, err := so.IntOption(level, name)
		if err != nil {
			return 0, err
		}
		out = binary.LittleEndian.AppendUint32(nil, uint32(v))
	case *jnet.UnixSocket:
		v, err := unixIntOption(so, level, name)
		if err != nil {
			return 0, err
		}
		out = binary.LittleEndian.AppendUint32(nil, uint32(v))
	case *jnet.NetlinkSocket:
		v, err := netlinkIntOption(so, level, name)
		if err != nil {
			return 0, err
		}
		out = binary.LittleEndian.AppendUint32(nil, uint32(v))
	}
	out = out[:min(int(room), len(out))]
	if err := copyOut(t, a[3], out); err != nil {
		return 0, err
	}
	binary.LittleEndian.PutUint32(lb, uint32(len(out)))
	return 0, copyOut(t, a[4], lb) // *optlen
}

// unixIntOption reads the integer options a Unix stream socket has.
func unixIntOption(so *jnet.UnixSocket, level, name int) (int, error) {
	if level != unix.SOL_SOCKET {
		return 0, unix.EOPNOTSUPP
	}
	switch name {
	case unix.SO_ERROR, unix.SO_PROTOCOL:
		return 0, nil
	case unix.SO_TYPE:
		return unix.SOCK_STREAM, nil
	case unix.SO_DOMAIN:
		return unix.AF_UNIX, nil
	case unix.SO_ACCEPTCONN:
		return boolInt(so.Listening()), nil
	}
	return 0, unix.ENOPROTOOPT
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sysShutdown implements shutdown(2).
func sysShutdown(t *kernel.Task, a Args) (uint64, error) {
	f, _, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	switch so := f.(type) {
	case *jnet.Socket:
		return 0, so.Shutdown(int(a[1]))
	case *jnet.UnixSocket:
		return 0, so.Shutdown(int(a[1]))
	case *jnet.NetlinkSocket:
		return 0, unix.EOPNOTSUPP
	}
	return 0, unix.ENOTSOCK
}

// msghdr is struct msghdr on riscv64.
type msghdr struct {
	Name       uint64
	Namelen    uint32
	_          uint32
	Iov        uint64
	Iovlen     uint64
	Control    uint64
	Controllen uint64
	Flags      int32
	_          uint32
}

// cmsghdr is struct cmsghdr; its data follows, aligned to 8 bytes.
type cmsghdr struct {
	Len   uint64
	Level int32
	Type  int32
}

const cmsgHeader = 16

func cmsgAlign(n uint64) uint64 { return (n + 7) &^ 7 }

// Send and receive flags honoured; the others are refused with EOPNOTSUPP
// where Linux would act on them.
const (
	sendFlags = unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL | unix.MSG_MORE | unix.MSG_EOR
	recvFlags = unix.MSG_DONTWAIT | unix.MSG_PEEK | unix.MSG_CMSG_CLOEXEC | unix.MSG_WAITALL
)

// sendData sends the user buffers vs on the socket open on fd with the
// send(2) flags, to the address at (to, toLen) when there is one (TCP
// ignores it, as Linux does), and rights (Unix sockets) with the first byte.
func sendData(t *kernel.Task, fd uint64, vs []iovec, flags uint64, to, toLen uint64, rights []*fs.Description) (uint64, error) {
	f, d, err := sockFile(t, fd)
	if err != nil {
		return 0, err
	}
	if flags&^sendFlags != 0 {
		return 0, unix.EOPNOTSUPP
	}
	if so, ok := f.(*jnet.Socket); ok && so.Datagram() {
		return sendDatagram(t, d, so, vs, flags, to, toLen)
	}
	if so, ok := f.(*jnet.NetlinkSocket); ok {
		return sendNetlink(t, d, so, vs, to, toLen)
	}
	if _, ok := f.(*jnet.UnixSocket); ok && to != 0 {
		return 0, unix.EISCONN
	}
	write := f.Write
	if u, ok := f.(*jnet.UnixSocket); ok && len(rights) > 0 {
		write = func(b []byte) (int, error) {
			n, err := u.SendMsg(b, rights)
			if n > 0 || err == nil {
				rights = nil
				write = u.Write
			}
			return n, err
		}
	}
	return writeFrom(t, d, vs, func(b []byte) (int, error) { return write(b) },
		ioMode{nonblock: d.Nonblock() || flags&unix.MSG_DONTWAIT != 0})
}

// maxDatagram is the largest UDP payload over IPv4.
const maxDatagram = 65507

// sendDatagram sends vs as one datagram, to the address at (to, toLen) or
// to the connected peer; it waits for room unless non-blocking.
func sendDatagram(t *kernel.Task, d *fs.Description, so *jnet.Socket, vs []iovec, flags, to, toLen uint64) (uint64, error) {
	if !d.Writable() {
		return 0, unix.EBADF
	}
	send := so.Write
	if to != 0 {
		sa, err := readSockaddr(t, to, toLen, inetFamily(so))
		if err != nil {
			return 0, err
		}
		send = func(b []byte) (int, error) { return so.SendTo(b, sa.ip, sa.port) }
	}
	size := iovecsLen(vs)
	if size > maxDatagram {
		return 0, unix.EMSGSIZE
	}
	buf := make([]byte, size)
	if err := (&userSeq{t: t, vs: vs}).copyIn(buf); err != nil {
		return 0, err
	}
	n, err := send(buf)
	for err == unix.EAGAIN && !d.Nonblock() && flags&unix.MSG_DONTWAIT == 0 {
		if err = waitReady(t, d, unix.EPOLLOUT); err == nil {
			n, err = send(buf)
		}
	}
	return uint64(n), err
}

// received is what a receive call got besides the data.
type received struct {
	rights    []*fs.Description // Unix sockets: descriptions passed with SCM_RIGHTS
	from      *sockaddr         // datagrams: the sender
	truncated bool              // datagrams: part of it did not fit (MSG_TRUNC)
}

// recvData receives into the user buffers vs from the socket open on fd
// with the recv(2) flags.
func recvData(t *kernel.Task, fd uint64, vs []iovec, flags uint64) (uint64, received, error) {
	f, d, err := sockFile(t, fd)
	if err != nil {
		return 0, received{}, err
	}
	if so, ok := f.(*jnet.Socket); ok && so.Datagram() {
		if flags&^(recvFlags|unix.MSG_TRUNC) != 0 {
			return 0, received{}, unix.EOPNOTSUPP
		}
		return recvDatagram(t, d, so, vs, flags)
	}
	if so, ok := f.(*jnet.NetlinkSocket); ok {
		if flags&^(recvFlags|unix.MSG_TRUNC) != 0 {
			return 0, received{}, unix.EOPNOTSUPP
		}
		return recvNetlink(t, d, so, vs, flags)
	}
	if flags&^recvFlags != 0 {
		return 0, received{}, unix.EOPNOTSUPP
	}
	peek := flags&unix.MSG_PEEK != 0
	mode := ioMode{nonblock: d.Nonblock() || flags&unix.MSG_DONTWAIT != 0, waitAll: flags&unix.MSG_WAITALL != 0 && !peek}
	read := f.Read
	var rights []*fs.Description
	switch so := f.(type) {
	case *jnet.UnixSocket:
		read = func(b []byte) (int, error) {
			if rights != nil {
				return 0, nil // a read ends after the bytes that carried descriptions
			}
			n, r, err := so.RecvMsg(b, peek)
			rights = r
			return n, err
		}
	case *jnet.Socket:
		if peek {
			read = so.Peek
		}
	}
	if peek { // one look: later chunks would see the same bytes again
		look, looked := read, false
		read = func(b []byte) (int, error) {
			if looked {
				return 0, nil
			}
			n, err := look(b)
			looked = err == nil
			return n, err
		}
	}
	n, err := readTo(t, d, vs, read, mode)
	return n, received{rights: rights}, err
}

// recvDatagram takes one datagram into vs, waiting for one unless
// non-blocking. With MSG_TRUNC it returns the datagram's full length.
func recvDatagram(t *kernel.Task, d *fs.Description, so *jnet.Socket, vs []iovec, flags uint64) (uint64, received, error) {
	if !d.Readable() {
		return 0, received{}, unix.EBADF
	}
	buf := make([]byte, min(iovecsLen(vs), maxDatagram))
	peek := flags&unix.MSG_PEEK != 0
	n, total, ip, port, err := so.RecvFrom(buf, peek)
	for err == unix.EAGAIN && !d.Nonblock() && flags&unix.MSG_DONTWAIT == 0 {
		if err = waitReady(t, d, unix.EPOLLIN); err == nil {
			n, total, ip, port, err = so.RecvFrom(buf, peek)
		}
	}
	if err != nil {
		return 0, received{}, err
	}
	if err := (&userSeq{t: t, vs: vs}).copyOut(buf[:n]); err != nil {
		return 0, received{}, err
	}
	r := received{from: &sockaddr{family: inetFamily(so), ip: ip, port: port}, truncated: total > n}
	if flags&unix.MSG_TRUNC != 0 {
		return uint64(total), r, nil
	}
	return uint64(n), r, nil
}

// sysSendto implements sendto(2): to an address on datagram sockets, on
// connected stream sockets.
func sysSendto(t *kernel.Task, a Args) (uint64, error) {
	return sendData(t, a[0], oneIovec(a[1], a[2]), a[3], a[4], a[5], nil)
}

// sysRecvfrom implements recvfrom(2).
func sysRecvfrom(t *kernel.Task, a Args) (uint64, error) {
	n, r, err := recvData(t, a[0], oneIovec(a[1], a[2]), a[3])
	for _, d := range r.rights {
		d.DecRef()
	}
	if err != nil || a[4] == 0 {
		return n, err
	}
	return n, senderOut(t, a[0], r, a[4], a[5])
}

// senderOut writes where received data came from: a datagram's sender, or
// a stream socket's peer.
func senderOut(t *kernel.Task, fd uint64, r received, addr, lenAddr uint64) error {
	if r.from != nil {
		return writeSockaddr(t, addr, lenAddr, *r.from)
	}
	_, err := sockName(t, Args{fd, addr, lenAddr}, true)
	return err
}

// sysSendmsg implements sendmsg(2): data, and descriptions to pass with
// SCM_RIGHTS on Unix sockets.
func sysSendmsg(t *kernel.Task, a Args) (uint64, error) {
	var m msghdr
	if err := copyInStruct(t, a[1], &m); err != nil {
		return 0, err
	}
	vs, err := readIovecs(t, m.Iov, m.Iovlen)
	if err != nil {
		return 0, err
	}
	rights, err := readRights(t, m.Control, m.Controllen)
	if err != nil {
		return 0, err
	}
	if len(rights) > 0 {
		if _, d, err := sockFile(t, a[0]); err != nil {
			return 0, err
		} else if _, ok := d.File.(*jnet.UnixSocket); !ok {
			return 0, unix.EINVAL
		}
	}
	return sendData(t, a[0], vs, a[2], m.Name, uint64(m.Namelen), rights)
}

// maxRights is SCM_MAX_FD, the most descriptors one message passes.
const maxRights = 253

// readRights reads a control buffer: SCM_RIGHTS messages name descriptors
// of the caller; anything else is EINVAL.
func readRights(t *kernel.Task, addr, length uint64) ([]*fs.Description, error) {
	if length == 0 {
		return nil, nil
	}
	if length > 64<<10 {
		return nil, unix.ENOBUFS
	}
	buf := make([]byte, length)
	if err := copyIn(t, addr, buf); err != nil {
		return nil, err
	}
	var rights []*fs.Description
	for off := uint64(0); off+cmsgHeader <= length; {
		var h cmsghdr
		binary.Decode(buf[off:], binary.LittleEndian, &h)
		if h.Len < cmsgHeader || off+h.Len > length {
			return nil, unix.EINVAL
		}
		if h.Level != unix.SOL_SOCKET || h.Type != unix.SCM_RIGHTS {
			return nil, unix.EINVAL
		}
		data := buf[off+cmsgHeader : off+h.Len]
		for i := 0; i+4 <= len(data); i += 4 {
			d, err := t.Proc.Files.Get(int(int32(binary.LittleEndian.Uint32(data[i:]))))
			if err != nil {
				return nil, err
			}
			if len(rights) == maxRights {
				return nil, unix.EINVAL
			}
			rights = append(rights, d)
		}
		off += cmsgAlign(h.Len)
	}
	return rights, nil
}

// sysRecvmsg implements recvmsg(2): data, the peer's address, and the
// descriptions passed with SCM_RIGHTS, installed as new descriptors
// (MSG_CTRUNC, and those that do not fit closed, when the control buffer
// is too small).
func sysRecvmsg(t *kernel.Task, a Args) (uint64, error) {
	var m msghdr
	if err := copyInStruct(t, a[1], &m); err != nil {
		return 0, err
	}
	vs, err := readIovecs(t, m.Iov, m.Iovlen)
	if err != nil {
		return 0, err
	}
	n, r, err := recvData(t, a[0], vs, a[2])
	if err != nil {
		return 0, err
	}
	rights := r.rights
	var control []byte
	m.Flags = 0
	if r.truncated {
		m.Flags |= unix.MSG_TRUNC
	}
	if len(rights) > 0 {
		room := int((m.Controllen - min(m.Controllen, cmsgHeader)) / 4)
		var fds []byte
		for i, d := range rights {
			if i < room {
				fd, err := t.Proc.Files.Install(d, a[2]&unix.MSG_CMSG_CLOEXEC != 0, 0)
				if err == nil {
					fds = binary.LittleEndian.AppendUint32(fds, uint32(fd))
				} else {
					m.Flags |= unix.MSG_CTRUNC
				}
			} else {
				m.Flags |= unix.MSG_CTRUNC
			}
			d.DecRef()
		}
		if len(fds) > 0 {
			control, _ = binary.Append(nil, binary.LittleEndian, cmsghdr{Len: cmsgHeader + uint64(len(fds)), Level: unix.SOL_SOCKET, Type: unix.SCM_RIGHTS})
			control = append(control, fds...)
			if err := copyOut(t, m.Control, control); err != nil {
				return 0, err
			}
		}
	}
	m.Controllen = uint64(len(control))
	if m.Name != 0 {
		lenAddr := a[1] + 8 // &msg->msg_namelen
		if err := senderOut(t, a[0], r, m.Name, lenAddr); err != nil && err != unix.ENOTCONN {
			return 0, err
		}
		var back msghdr
		if err := copyInStruct(t, a[1], &back); err != nil {
			return 0, err
		}
		m.Namelen = back.Namelen
	}
	return n, copyOutStruct(t, a[1], m)
}

// mmsghdr is struct mmsghdr: a msghdr, then msg_len, padded to 8 bytes.
const (
	mmsghdrSize   = 64
	mmsgLenOff    = 56
	msgWaitForOne = 0x10000 // MSG_WAITFORONE
)

// putMsgLen stores how many bytes message i of the vector at vec moved.
func putMsgLen(t *kernel.Task, vec uint64, i int, n uint64) error {
	b := binary.LittleEndian.AppendUint32(nil, uint32(n))
	return copyOut(t, vec+uint64(i)*mmsghdrSize+mmsgLenOff, b)
}

// sysSendmmsg implements sendmmsg(2): sendmsg for each message in turn; an
// error after the first message ends the call with the count sent.
func sysSendmmsg(t *kernel.Task, a Args) (uint64, error) {
	count := int(min(uint64(uint32(a[2])), maxIovecs))
	for i := range count {
		n, err := sysSendmsg(t, Args{a[0], a[1] + uint64(i)*mmsghdrSize, a[3]})
		if err == nil {
			err = putMsgLen(t, a[1], i, n)
		}
		if err != nil {
			if i == 0 {
				return 0, err
			}
			return uint64(i), nil
		}
	}
	return uint64(count), nil
}

// sysRecvmmsg implements recvmmsg(2): recvmsg for each message in turn;
// with MSG_WAITFORONE only the first waits. An error after the first
// message ends the call with the count received. As on Linux, the timeout
// is checked after each message, never while waiting for one.
func sysRecvmmsg(t *kernel.Task, a Args) (uint64, error) {
	var deadline time.Time
	if a[4] != 0 {
		d, err := copyInTimespec(t, a[4])
		if err != nil {
			return 0, err
		}
		deadline = time.Now().Add(d)
	}
	count := int(min(uint64(uint32(a[2])), maxIovecs))
	flags := a[3] &^ msgWaitForOne
	for i := range count {
		if i > 0 && !deadline.IsZero() && !time.Now().Before(deadline) {
			return uint64(i), nil
		}
		n, err := sysRecvmsg(t, Args{a[0], a[1] + uint64(i)*mmsghdrSize, flags})
		if err == nil {
			err = putMsgLen(t, a[1], i, n)
		}
		if err != nil {
			if i == 0 {
				return 0, err
			}
			return uint64(i), nil
		}
		if a[3]&msgWaitForOne != 0 {
			flags |= unix.MSG_DONTWAIT
		}
	}
	return uint64(count), nil
}
