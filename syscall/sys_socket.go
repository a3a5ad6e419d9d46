package syscall

import (
	"bytes"
	iofs "io/fs"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	jnet "github.com/jiege-go/jiege/net"
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
	register(sysno.Shutdown, sysShutdown)
	register(sysno.Socketpair, sysSocketpair)
}

// Sockets: TCP and UDP over IPv4 and IPv6, Unix stream sockets and
// NETLINK_ROUTE sockets, each a jnet.Socket. Handlers decode the
// arguments, call the socket through that interface, and wait where it
// says it would block. Options are in sys_sockopt.go, sends and receives
// in sys_sendrecv.go.

// readSockaddr reads a struct sockaddr of the socket's family.
func readSockaddr(t *kernel.Task, addr, length uint64, family uint16) (jnet.Addr, error) {
	if int32(length) < 2 || length > 128 {
		return jnet.Addr{}, unix.EINVAL
	}
	b := make([]byte, length)
	if err := copyIn(t, addr, b); err != nil {
		return jnet.Addr{}, err
	}
	var saFamily uint16
	linux.Decode(b, &saFamily)
	sa := jnet.Addr{Family: saFamily}
	// Linux checks an inet or netlink address's length before its family.
	if (family == unix.AF_INET && length < unix.SizeofSockaddrInet4) || (family == unix.AF_INET6 && length < linux.SizeofSockaddrInet6Min) ||
		(family == unix.AF_NETLINK && length < unix.SizeofSockaddrNetlink) {
		return jnet.Addr{}, unix.EINVAL
	}
	if sa.Family != family {
		if family == unix.AF_UNIX || family == unix.AF_NETLINK {
			return jnet.Addr{}, unix.EINVAL
		}
		return jnet.Addr{}, unix.EAFNOSUPPORT
	}
	switch family {
	case unix.AF_INET:
		var in linux.SockaddrInet4
		linux.Decode(b, &in)
		sa.IP, sa.Port = netip.AddrFrom4(in.Addr), linux.Ntohs(in.Port)
	case unix.AF_INET6:
		var in6 linux.SockaddrInet6
		linux.Decode(b, &in6)
		sa.IP, sa.Port = netip.AddrFrom16(in6.Addr), linux.Ntohs(in6.Port)
	case unix.AF_NETLINK:
		var nl linux.SockaddrNetlink
		linux.Decode(b, &nl)
		sa.NlPort, sa.NlGroups = nl.Pid, nl.Groups
	case unix.AF_UNIX:
		var un linux.SockaddrUnix
		name := un.Path[:linux.Decode(b, &un)-2]
		if len(name) > 0 && name[0] == 0 {
			sa.Abstract, sa.Path = true, string(name[1:])
		} else {
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			sa.Path = string(name)
		}
	}
	return sa, nil
}

// writeSockaddr writes sa where addr points, truncated to the caller's
// length at lenAddr, and stores the full length there.
func writeSockaddr(t *kernel.Task, addr, lenAddr uint64, sa jnet.Addr) error {
	if addr == 0 {
		return nil
	}
	var max int32
	if err := copyInStruct(t, lenAddr, &max); err != nil {
		return err
	}
	if max < 0 {
		return unix.EINVAL
	}
	var b []byte
	switch sa.Family {
	case unix.AF_INET:
		in := linux.SockaddrInet4{Family: sa.Family, Port: linux.Htons(sa.Port)}
		if sa.IP.Is4() {
			in.Addr = sa.IP.As4()
		}
		b = linux.AsBytes(&in)
	case unix.AF_INET6:
		in6 := linux.SockaddrInet6{Family: sa.Family, Port: linux.Htons(sa.Port), Addr: sa.IP.As16()}
		b = linux.AsBytes(&in6)
	case unix.AF_NETLINK:
		nl := linux.SockaddrNetlink{Family: sa.Family, Pid: sa.NlPort, Groups: sa.NlGroups}
		b = linux.AsBytes(&nl)
	case unix.AF_UNIX:
		// sun_path as long as the name: a path and its NUL, or an
		// abstract name after its NUL.
		b = linux.Append(nil, sa.Family)
		if sa.Abstract {
			b = append(append(b, 0), sa.Path...)
		} else if sa.Path != "" {
			b = append(append(b, sa.Path...), 0)
		}
	case 0: // no address: a datagram from an unbound Unix socket
	default:
		b = linux.AsBytes(&sa.Family)
	}
	if err := copyOut(t, addr, b[:min(int(max), len(b))]); err != nil {
		return err
	}
	return copyOutStruct(t, lenAddr, uint32(len(b)))
}

// sockFile returns the socket open on fd and its description, with the
// reference the caller drops when done (FDTable.Get): ENOTSOCK for any
// other file, EBADF for an O_PATH description (Linux's sockfd_lookup
// does not take one).
func sockFile(t *kernel.Task, fd uint64) (jnet.Socket, *fs.Description, error) {
	d, err := t.Proc.Files.Get(int(int32(fd)))
	if err != nil {
		return nil, nil, err
	}
	if d.Flags()&unix.O_PATH != 0 {
		d.DecRef()
		return nil, nil, unix.EBADF
	}
	so, ok := d.File.(jnet.Socket)
	if !ok {
		d.DecRef()
		return nil, nil, unix.ENOTSOCK
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
	// Every socket lives on t.Kernel().Network, whose namespace holds the
	// abstract Unix names and the netlink ports too: ENETDOWN without it.
	var f fs.File
	switch a[0] {
	case unix.AF_INET, unix.AF_INET6:
		dgram, err := inetType(typ, a[2])
		if err != nil {
			return 0, err
		}
		if t.Kernel().Network == nil {
			return 0, unix.ENETDOWN
		}
		so, err := t.Kernel().Network.NewInet(dgram, a[0] == unix.AF_INET6)
		if err != nil {
			return 0, err
		}
		f = so
	case unix.AF_UNIX:
		typ, err := unixType(typ, a[2])
		if err != nil {
			return 0, err
		}
		if t.Kernel().Network == nil {
			return 0, unix.ENETDOWN
		}
		if typ == unix.SOCK_DGRAM {
			f = t.Kernel().Network.NewUnixDgram()
		} else {
			f = t.Kernel().Network.NewUnixStream(typ == unix.SOCK_SEQPACKET, names{t}.Caller())
		}
	case unix.AF_NETLINK:
		if typ != unix.SOCK_RAW && typ != unix.SOCK_DGRAM {
			return 0, unix.ESOCKTNOSUPPORT
		}
		if a[2] != unix.NETLINK_ROUTE {
			return 0, unix.EPROTONOSUPPORT
		}
		if t.Kernel().Network == nil {
			return 0, unix.ENETDOWN
		}
		f = t.Kernel().Network.NewNetlink(int(typ), uint32(t.Proc.PID), t.Proc.Cred().Privileged())
	default:
		return 0, unix.EAFNOSUPPORT
	}
	fd, err := t.Proc.Files.Open(f, flags, cloexec)
	return uint64(fd), err
}

// inetType checks an inet socket's type and protocol: TCP or UDP, the
// protocol 0 or its own; it reports whether it is UDP.
func inetType(typ, proto uint64) (dgram bool, err error) {
	switch {
	case typ == unix.SOCK_STREAM && (proto == 0 || proto == unix.IPPROTO_TCP):
		return false, nil
	case typ == unix.SOCK_DGRAM && (proto == 0 || proto == unix.IPPROTO_UDP):
		return true, nil
	}
	return false, unix.EPROTONOSUPPORT
}

// unixType is the type of a Unix socket made with type typ and protocol
// proto, as Linux's unix_create: SOCK_RAW stands for SOCK_DGRAM, the
// protocol is 0 or PF_UNIX.
func unixType(typ, proto uint64) (uint64, error) {
	if proto != 0 && proto != unix.PF_UNIX {
		return 0, unix.EPROTONOSUPPORT
	}
	switch typ {
	case unix.SOCK_STREAM, unix.SOCK_DGRAM, unix.SOCK_SEQPACKET:
		return typ, nil
	case unix.SOCK_RAW:
		return unix.SOCK_DGRAM, nil
	}
	return 0, unix.ESOCKTNOSUPPORT
}

// sysSocketpair implements socketpair(2) for Unix sockets (EOPNOTSUPP
// for IPv4, as Linux's inet sockets have no pairs).
func sysSocketpair(t *kernel.Task, a Args) (uint64, error) {
	typ, flags, cloexec, err := socketFlags(a[1])
	if err != nil {
		return 0, err
	}
	switch a[0] {
	case unix.AF_UNIX:
	case unix.AF_INET, unix.AF_INET6:
		if _, err := inetType(typ, a[2]); err != nil {
			return 0, err
		}
		return 0, unix.EOPNOTSUPP
	default:
		return 0, unix.EAFNOSUPPORT
	}
	if typ, err = unixType(typ, a[2]); err != nil {
		return 0, err
	}
	if t.Kernel().Network == nil {
		return 0, unix.ENETDOWN
	}
	caller := names{t}.Caller()
	if typ == unix.SOCK_DGRAM {
		x, y := t.Kernel().Network.UnixDgramPair(caller)
		return 0, installPair(t, x, y, flags, flags, cloexec, a[3])
	}
	x, y := t.Kernel().Network.UnixStreamPair(typ == unix.SOCK_SEQPACKET, caller)
	return 0, installPair(t, x, y, flags, flags, cloexec, a[3])
}

// sysBind implements bind(2). A Unix socket bound to a path appears in
// the tree as a socket node.
func sysBind(t *kernel.Task, a Args) (uint64, error) {
	so, d, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	sa, err := readSockaddr(t, a[1], a[2], so.Family())
	if err != nil {
		return 0, err
	}
	// Ports below ip_unprivileged_port_start (1024) need
	// CAP_NET_BIND_SERVICE.
	if err := landlockPort(t, so, sa, fs.LandlockBindTCP); err != nil {
		return 0, err
	}
	if (sa.Family == unix.AF_INET || sa.Family == unix.AF_INET6) && sa.Port > 0 && sa.Port < 1024 && !t.Proc.Cred().Privileged() {
		return 0, unix.EACCES
	}
	return 0, so.Bind(sa, names{t})
}

// landlockPort checks the caller's Landlock domain grants access (bind or
// connect) on a TCP socket's port: EACCES, as Linux's LSM hook does
// before the protocol looks at the address.
func landlockPort(t *kernel.Task, so jnet.Socket, sa jnet.Addr, access uint64) error {
	d := t.Proc.Landlock()
	if d == nil {
		return nil
	}
	if in, ok := so.(*jnet.InetSocket); !ok || !in.TCP() || sa.Family != unix.AF_INET && sa.Family != unix.AF_INET6 {
		return nil
	}
	if !d.AllowsPort(sa.Port, access) {
		return unix.EACCES
	}
	return nil
}

// names is the file tree as the task sees it, where Unix sockets are
// bound to paths and found by them.
type names struct{ t *kernel.Task }

// MakeSocketNode creates the socket node of a bind(2), with the task's
// umask.
func (ns names) MakeSocketNode(path string, so jnet.Socket) error {
	t := ns.t
	p, err := resolve(t, unix.AT_FDCWD, path)
	if err != nil {
		return err
	}
	n := &fs.Node{Mode: iofs.ModeSocket | iofs.FileMode(0o777&^t.Proc.Umask()), Bound: so}
	n.Touch()
	if err := t.Proc.Root.Create(t.Proc.Cred(), p, n); err != nil {
		if err == fs.ErrExist {
			return unix.EADDRINUSE
		}
		return err
	}
	return nil
}

// BoundSocket finds what is bound to the node at path, which the task
// must be allowed to write to, as connect(2) does.
func (ns names) BoundSocket(path string) (any, error) {
	t := ns.t
	p, err := resolve(t, unix.AT_FDCWD, path)
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
	return n.Bound, nil
}

// Caller is the task's process with its ids and its bound on
// descriptions in flight.
func (ns names) Caller() jnet.Caller {
	p := ns.t.Proc
	limit := p.Limit(unix.RLIMIT_NOFILE).Cur
	if p.Caps.Effective&(1<<unix.CAP_SYS_RESOURCE|1<<unix.CAP_SYS_ADMIN) != 0 {
		limit = jnet.NoInflightLimit
	}
	return jnet.Caller{PID: int32(p.PID), UID: p.UID, GID: p.GID, EUID: p.EUID, EGID: p.EGID, Landlock: p.Landlock(),
		InflightLimit: limit}
}

// sysListen implements listen(2).
func sysListen(t *kernel.Task, a Args) (uint64, error) {
	so, d, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return 0, so.Listen(int(int32(a[1])))
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
	so, d, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	conn, peer, err := so.Accept()
	for err == unix.EAGAIN && !d.Nonblock() {
		if err = waitReady(t, d, unix.EPOLLIN); err == nil {
			conn, peer, err = so.Accept()
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
	so, d, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if so.UnspecDisconnects() && unspecified(t, a[1], a[2]) {
		return 0, so.Connect(jnet.Addr{Family: unix.AF_UNSPEC}, names{t})
	}
	sa, err := readSockaddr(t, a[1], a[2], so.Family())
	if err != nil {
		return 0, err
	}
	if err := landlockPort(t, so, sa, fs.LandlockConnectTCP); err != nil {
		return 0, err
	}
	err = so.Connect(sa, names{t})
	if err != unix.EINPROGRESS || d.Nonblock() {
		return 0, err
	}
	if err := waitReady(t, d, unix.EPOLLOUT); err != nil {
		return 0, err
	}
	return 0, so.ConnectResult()
}

// unspecified reports whether the address at addr is AF_UNSPEC, which
// dissolves a datagram socket's association.
func unspecified(t *kernel.Task, addr, length uint64) bool {
	var family uint16
	return length >= 2 && copyInStruct(t, addr, &family) == nil && family == unix.AF_UNSPEC
}

// sysGetsockname implements getsockname(2).
func sysGetsockname(t *kernel.Task, a Args) (uint64, error) { return sockName(t, a, false) }

// sysGetpeername implements getpeername(2).
func sysGetpeername(t *kernel.Task, a Args) (uint64, error) { return sockName(t, a, true) }

// sockName writes the socket's own or its peer's address to (a[1], a[2]):
// EFAULT without a buffer, as Linux's move_addr_to_user.
func sockName(t *kernel.Task, a Args, peer bool) (uint64, error) {
	so, d, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if a[1] == 0 {
		return 0, unix.EFAULT
	}
	name := so.LocalAddr
	if peer {
		name = so.PeerAddr
	}
	sa, err := name()
	if err != nil {
		return 0, err
	}
	return 0, writeSockaddr(t, a[1], a[2], sa)
}

// sysShutdown implements shutdown(2).
func sysShutdown(t *kernel.Task, a Args) (uint64, error) {
	so, d, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	return 0, so.Shutdown(int(a[1]))
}
