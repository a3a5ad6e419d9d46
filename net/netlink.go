package net

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// NetlinkSocket is a NETLINK_ROUTE socket: it answers RTM_GETLINK,
// RTM_GETADDR and RTM_GETROUTE requests from the stack's interfaces and
// routes, with Linux's message layout (linux/rtnetlink.h). Every answer is
// queued as datagrams at once: a dump's messages, then NLMSG_DONE in a
// datagram of its own, as Linux sends them. Changing links, addresses or
// routes is refused, and no multicast notifications are sent.
type NetlinkSocket struct {
	stack      *Stack
	ino        uint64
	typ        int // SOCK_RAW or SOCK_DGRAM
	tgid       uint32
	privileged bool // the opener's CAP_NET_ADMIN

	mu       sync.Mutex
	port     uint32 // nl_pid, 0 until bound
	groups   uint32
	queue    [][]byte
	notifier fs.Notifier
	Timeouts
}

var _ Socket = (*NetlinkSocket)(nil)

// netlinkGoodSize is NLMSG_GOODSIZE on riscv64 (a page less the skb's
// shared info): the most a dump puts in one datagram.
const netlinkGoodSize = 4096 - 320

// netlinkPorts holds a stack's bound NETLINK_ROUTE sockets by port id.
type netlinkPorts struct {
	sync.Mutex
	bound map[uint32]*NetlinkSocket
	rover int32 // the next negative id autobind tries, as Linux's
}

// NewNetlink opens a NETLINK_ROUTE socket on s of type SOCK_RAW or
// SOCK_DGRAM for the process tgid; privileged means it may change the
// network.
func (s *Stack) NewNetlink(typ int, tgid uint32, privileged bool) *NetlinkSocket {
	return &NetlinkSocket{stack: s, ino: s.newSocketIno(), typ: typ, tgid: tgid, privileged: privileged}
}

// Family is AF_NETLINK.
func (so *NetlinkSocket) Family() uint16 { return unix.AF_NETLINK }

// maxNetlinkSend bounds one request datagram (Linux's default sk_sndbuf).
const maxNetlinkSend = 212992

// MaxMessage bounds a request datagram, and what a receive takes of an
// answer.
func (so *NetlinkSocket) MaxMessage() int { return maxNetlinkSend }

// Name returns the socket's port id and multicast groups.
func (so *NetlinkSocket) Name() (port, groups uint32) {
	so.mu.Lock()
	defer so.mu.Unlock()
	return so.port, so.groups
}

// LocalAddr is the socket's port id and multicast groups.
func (so *NetlinkSocket) LocalAddr() (Addr, error) {
	port, groups := so.Name()
	return Addr{Family: unix.AF_NETLINK, NlPort: port, NlGroups: groups}, nil
}

// PeerAddr is the kernel's address: the only peer.
func (so *NetlinkSocket) PeerAddr() (Addr, error) { return Addr{Family: unix.AF_NETLINK}, nil }

// Bind binds the socket to a port id (0: the process id if free, else a
// negative id, as Linux's autobind) and joins multicast groups. A bound
// socket may only be bound again to its own port.
func (so *NetlinkSocket) Bind(a Addr, _ Namespace) error { return so.bind(a.NlPort, a.NlGroups) }

func (so *NetlinkSocket) bind(port, groups uint32) error {
	so.mu.Lock()
	defer so.mu.Unlock()
	if so.port != 0 {
		if port != 0 && port != so.port {
			return unix.EINVAL
		}
	} else if err := so.bindLocked(port); err != nil {
		return err
	}
	so.groups = groups
	return nil
}

// bindLocked takes a port id for the socket; so.mu is held.
func (so *NetlinkSocket) bindLocked(port uint32) error {
	ports := &so.stack.netlinkPorts
	ports.Lock()
	defer ports.Unlock()
	if port == 0 {
		port = so.tgid
		for _, taken := ports.bound[port]; taken || port == 0; _, taken = ports.bound[port] {
			port = uint32(ports.rover)
			if ports.rover--; ports.rover > -4096 {
				ports.rover = -4096
			}
		}
	} else if _, taken := ports.bound[port]; taken {
		return unix.EADDRINUSE
	}
	ports.bound[port] = so
	so.port = port
	return nil
}

// SendTo takes requests to the kernel (port 0); a message for another
// socket's port is refused, as this kernel keeps no user-to-user netlink.
func (so *NetlinkSocket) SendTo(b []byte, port uint32) (int, error) {
	if port != 0 {
		return 0, unix.ECONNREFUSED
	}
	so.mu.Lock()
	if so.port == 0 {
		if err := so.bindLocked(0); err != nil {
			so.mu.Unlock()
			return 0, err
		}
	}
	own := so.port
	so.mu.Unlock()
	if answers := so.serve(b, own); len(answers) > 0 {
		so.Deliver(answers...)
	}
	return len(b), nil
}

// Deliver queues datagrams from the kernel: answers, and mq_notify's
// cookies (any netlink socket takes them, as Linux's netlink_sendskb).
func (so *NetlinkSocket) Deliver(datagrams ...[]byte) {
	so.mu.Lock()
	so.queue = append(so.queue, datagrams...)
	fns := so.notifier.Changed()
	so.mu.Unlock()
	fs.Notify(fns)
}

// Write sends requests (write(2) on the socket).
func (so *NetlinkSocket) Write(b []byte) (int, error) { return so.SendTo(b, 0) }

// CheckDestination lets a send name the port it goes to.
func (so *NetlinkSocket) CheckDestination() error { return nil }

// SendMsg sends requests, to the port to names (nil: the kernel).
func (so *NetlinkSocket) SendMsg(b []byte, to *Addr, _ Control, _ Namespace) (int, error) {
	var port uint32
	if to != nil {
		port = to.NlPort
	}
	return so.SendTo(b, port)
}

// RecvMsg receives one datagram of answers, whose sender is the kernel.
func (so *NetlinkSocket) RecvMsg(b []byte, peek bool) (int, Received, error) {
	n, total, err := so.RecvFrom(b, peek)
	return n, Received{Total: total, From: Addr{Family: unix.AF_NETLINK}}, err
}

// Connect binds the socket: only the kernel can be the peer
// (ECONNREFUSED for another port).
func (so *NetlinkSocket) Connect(to Addr, _ Namespace) error {
	if to.NlPort != 0 {
		return unix.ECONNREFUSED
	}
	return so.bind(0, 0)
}

// UnspecDisconnects is false: AF_UNSPEC is refused as another family.
func (so *NetlinkSocket) UnspecDisconnects() bool { return false }

// ConnectResult is nil: a connect ends at once.
func (so *NetlinkSocket) ConnectResult() error { return nil }

// Listen is EOPNOTSUPP: a netlink socket has no connections.
func (so *NetlinkSocket) Listen(int) error { return unix.EOPNOTSUPP }

// Accept is ENOTSOCK, as this kernel has always answered it (Linux says
// EOPNOTSUPP).
func (so *NetlinkSocket) Accept() (Socket, Addr, error) { return nil, Addr{}, unix.ENOTSOCK }

// Shutdown is EOPNOTSUPP: a netlink socket has no connection.
func (so *NetlinkSocket) Shutdown(int) error { return unix.EOPNOTSUPP }

// RecvFrom takes the next datagram into p (peek: leaves it queued) and
// returns how much p got and the datagram's length; EAGAIN when none is
// queued. What does not fit is lost, as on Linux.
func (so *NetlinkSocket) RecvFrom(p []byte, peek bool) (n, total int, err error) {
	so.mu.Lock()
	defer so.mu.Unlock()
	if len(so.queue) == 0 {
		return 0, 0, unix.EAGAIN
	}
	d := so.queue[0]
	if !peek {
		so.queue[0] = nil
		so.queue = so.queue[1:]
	}
	return copy(p, d), len(d), nil
}

// ReadTo receives one datagram into dst, staged through a buffer.
func (so *NetlinkSocket) ReadTo(dst fs.UserIO) (int64, error) { return fs.ReadStaged(dst, so.Read) }

// WriteFrom sends src's bytes as one request, staged through a buffer.
func (so *NetlinkSocket) WriteFrom(src fs.UserIO) (int64, error) {
	return fs.WriteStaged(src, so.Write)
}

// Read receives one datagram (read(2) on the socket).
func (so *NetlinkSocket) Read(p []byte) (int, error) {
	n, _, err := so.RecvFrom(p, false)
	return n, err
}

// Pending is the length of the next datagram (FIONREAD).
func (so *NetlinkSocket) Pending() (int, error) {
	so.mu.Lock()
	defer so.mu.Unlock()
	if len(so.queue) == 0 {
		return 0, nil
	}
	return len(so.queue[0]), nil
}

// Readiness returns the poll events in mask that hold: always writable.
func (so *NetlinkSocket) Readiness(mask uint32) uint32 {
	so.mu.Lock()
	defer so.mu.Unlock()
	r := uint32(unix.EPOLLOUT | unix.EPOLLWRNORM)
	if len(so.queue) > 0 {
		r |= unix.EPOLLIN | unix.EPOLLRDNORM
	}
	return r & mask
}

// Watch calls notify whenever an answer is queued, until cancelled.
func (so *NetlinkSocket) Watch(notify func()) func() { return so.notifier.Watch(&so.mu, notify) }

// Close frees the port id.
func (so *NetlinkSocket) Close() error {
	so.mu.Lock()
	port := so.port
	so.queue = nil
	so.mu.Unlock()
	if port != 0 {
		ports := &so.stack.netlinkPorts
		ports.Lock()
		if ports.bound[port] == so {
			delete(ports.bound, port)
		}
		ports.Unlock()
	}
	return nil
}

// Stat describes the socket as a file.
func (so *NetlinkSocket) Stat() fs.Stat {
	return fs.Stat{Dev: devSockets, Ino: so.ino, Mode: unix.S_IFSOCK | 0o777, Nlink: 1, Blksize: 4096}
}

// SetIntOption accepts the options programs set on route sockets: buffer
// sizes and credentials at SOL_SOCKET, and SOL_NETLINK's flags (extended
// acknowledgements, strict checking, group membership), which change
// nothing here as no notification is ever sent.
func (so *NetlinkSocket) SetIntOption(level, name, _ int) error {
	switch level {
	case unix.SOL_SOCKET:
		switch name {
		case unix.SO_RCVBUF, unix.SO_SNDBUF, unix.SO_RCVBUFFORCE, unix.SO_SNDBUFFORCE,
			unix.SO_PASSCRED, unix.SO_TIMESTAMP, unix.SO_REUSEADDR, unix.SO_PRIORITY:
			return nil
		}
		return unix.ENOPROTOOPT
	case unix.SOL_NETLINK:
		switch name {
		case unix.NETLINK_ADD_MEMBERSHIP, unix.NETLINK_DROP_MEMBERSHIP, unix.NETLINK_PKTINFO,
			unix.NETLINK_BROADCAST_ERROR, unix.NETLINK_NO_ENOBUFS, unix.NETLINK_LISTEN_ALL_NSID,
			unix.NETLINK_CAP_ACK, unix.NETLINK_EXT_ACK, unix.NETLINK_GET_STRICT_CHK:
			return nil
		}
		return unix.ENOPROTOOPT
	}
	return unix.ENOPROTOOPT
}

// netlinkRcvbuf is the receive and send buffer size a route socket
// reports (Linux's net.core.rmem_default doubled, as it keeps them).
const netlinkRcvbuf = 212992

// IntOption reads the integer options of a route socket.
func (so *NetlinkSocket) IntOption(level, name int) (int, error) {
	switch level {
	case unix.SOL_SOCKET:
		switch name {
		case unix.SO_TYPE:
			return so.typ, nil
		case unix.SO_PROTOCOL:
			return unix.NETLINK_ROUTE, nil
		case unix.SO_DOMAIN:
			return unix.AF_NETLINK, nil
		case unix.SO_ERROR, unix.SO_PASSCRED:
			return 0, nil
		case unix.SO_RCVBUF, unix.SO_SNDBUF:
			return netlinkRcvbuf, nil
		}
		return 0, unix.ENOPROTOOPT
	case unix.SOL_NETLINK:
		switch name {
		case unix.NETLINK_PKTINFO, unix.NETLINK_BROADCAST_ERROR, unix.NETLINK_NO_ENOBUFS,
			unix.NETLINK_LISTEN_ALL_NSID, unix.NETLINK_CAP_ACK, unix.NETLINK_EXT_ACK, unix.NETLINK_GET_STRICT_CHK:
			return 0, nil
		}
	}
	return 0, unix.ENOPROTOOPT
}

// SetLinger is accepted and changes nothing: a netlink socket has nothing
// to send at close.
func (so *NetlinkSocket) SetLinger(Linger) error { return nil }

// Linger is ENOPROTOOPT: SO_LINGER is not kept.
func (so *NetlinkSocket) Linger() (Linger, error) { return Linger{}, unix.ENOPROTOOPT }
