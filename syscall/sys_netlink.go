package syscall

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	jnet "github.com/jiege-go/jiege/net"
)

// maxNetlinkSend bounds one request datagram (Linux's default sk_sndbuf).
const maxNetlinkSend = 212992

// sendNetlink sends vs as one datagram of requests, to the kernel: to
// the address at (to, toLen) when there is one (AF_NETLINK, port 0).
func sendNetlink(t *kernel.Task, d *fs.Description, so *jnet.NetlinkSocket, vs []iovec, to, toLen uint64) (uint64, error) {
	if !d.Writable() {
		return 0, unix.EBADF
	}
	var port uint32
	if to != 0 {
		sa, err := readSockaddr(t, to, toLen, unix.AF_NETLINK)
		if err != nil {
			return 0, err
		}
		port = sa.nlPid
	}
	size := iovecsLen(vs)
	if size > maxNetlinkSend {
		return 0, unix.EMSGSIZE
	}
	buf := make([]byte, size)
	if err := (&userSeq{t: t, vs: vs}).copyIn(buf); err != nil {
		return 0, err
	}
	n, err := so.SendTo(buf, port)
	return uint64(n), err
}

// recvNetlink takes one datagram of answers into vs, waiting for one
// unless non-blocking; with MSG_TRUNC it returns the datagram's length.
// The sender is always the kernel.
func recvNetlink(t *kernel.Task, d *fs.Description, so *jnet.NetlinkSocket, vs []iovec, flags uint64) (uint64, received, error) {
	if !d.Readable() {
		return 0, received{}, unix.EBADF
	}
	buf := make([]byte, min(iovecsLen(vs), maxNetlinkSend))
	peek := flags&unix.MSG_PEEK != 0
	n, total, err := so.RecvFrom(buf, peek)
	for err == unix.EAGAIN && !d.Nonblock() && flags&unix.MSG_DONTWAIT == 0 {
		if err = waitReady(t, d, unix.EPOLLIN); err == nil {
			n, total, err = so.RecvFrom(buf, peek)
		}
	}
	if err != nil {
		return 0, received{}, err
	}
	if err := (&userSeq{t: t, vs: vs}).copyOut(buf[:n]); err != nil {
		return 0, received{}, err
	}
	r := received{from: &sockaddr{family: unix.AF_NETLINK}, truncated: total > n}
	if flags&unix.MSG_TRUNC != 0 {
		return uint64(total), r, nil
	}
	return uint64(n), r, nil
}

// setNetlinkOption accepts the options programs set on route sockets:
// buffer sizes and credentials at SOL_SOCKET, and SOL_NETLINK's flags
// (extended acknowledgements, strict checking, group membership), which
// change nothing here as no notification is ever sent.
func setNetlinkOption(level, name int) error {
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

// netlinkIntOption reads the integer options of a route socket.
func netlinkIntOption(so *jnet.NetlinkSocket, level, name int) (int, error) {
	switch level {
	case unix.SOL_SOCKET:
		switch name {
		case unix.SO_TYPE:
			return so.Type(), nil
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
