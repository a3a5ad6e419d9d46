package net

import (
	"net/netip"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/fs"
)

// Socket is what every socket family gives the system call layer: TCP and
// UDP over IPv4 and IPv6 (InetSocket), Unix stream sockets (UnixSocket)
// and NETLINK_ROUTE sockets (NetlinkSocket). An operation a family does
// not have returns the errno Linux returns for it. No call blocks: where
// one would wait it returns EAGAIN (EINPROGRESS for a stream connect), and
// the caller waits for readiness unless the description is non-blocking.
type Socket interface {
	fs.Waitable

	// Family is the socket's address family (AF_INET, AF_INET6, AF_UNIX,
	// AF_NETLINK), that of the addresses its calls take and give.
	Family() uint16
	// MaxMessage is the largest message a send takes whole (EMSGSIZE
	// beyond) and the most a receive returns of one; 0 for a byte stream,
	// whose sends and receives move what fits.
	MaxMessage() int
	// Pending returns how many bytes a read would return now (FIONREAD).
	Pending() (int, error)

	// Bind gives the socket a local address; a Unix socket bound to a path
	// creates its node in ns.
	Bind(a Addr, ns Namespace) error
	Listen(backlog int) error
	// Accept takes the next connection and its peer's address; EAGAIN
	// when none is waiting.
	Accept() (Socket, Addr, error)
	// Connect connects to (a datagram socket: sends by default to) to; a
	// Unix socket finds a path's listener in ns. EINPROGRESS while a
	// stream connection is under way: ConnectResult then tells how it
	// ended.
	Connect(to Addr, ns Namespace) error
	// UnspecDisconnects reports whether connect(2) to an AF_UNSPEC address
	// dissolves the socket's association (Connect of Addr{Family:
	// AF_UNSPEC}) rather than being refused as an address of another
	// family.
	UnspecDisconnects() bool
	// ConnectResult is the outcome of a connection attempt; it clears it.
	ConnectResult() error
	// Shutdown shuts down reading, writing or both (SHUT_RD, SHUT_WR,
	// SHUT_RDWR).
	Shutdown(how int) error
	// LocalAddr is the socket's own address (getsockname).
	LocalAddr() (Addr, error)
	// PeerAddr is the connected peer's address (getpeername).
	PeerAddr() (Addr, error)

	// CheckDestination is what a send that names a destination gets
	// before the address is read: an errno on a socket that refuses one,
	// nil where it is then used (datagrams) or ignored (TCP).
	CheckDestination() error
	// SendMsg sends b, to to (datagrams; nil: the connected peer), with
	// what ctl carries attached to its first byte (Unix sockets; the
	// socket takes references to the descriptions). A datagram goes whole;
	// a stream takes what fits. EAGAIN when nothing does. ns is the
	// sender: where a Unix destination's path is found, and who sends.
	SendMsg(b []byte, to *Addr, ctl Control, ns Namespace) (int, error)
	// RecvMsg receives into b (peek: leaves the data queued) and returns
	// how much b got and what came with it; EAGAIN when nothing is there,
	// 0 at the end of a stream.
	RecvMsg(b []byte, peek bool) (int, Received, error)

	// SetIntOption sets an integer option, level and name as setsockopt(2)
	// takes them: ENOPROTOOPT for one the socket does not have.
	SetIntOption(level, name, v int) error
	// IntOption reads an integer option, as getsockopt(2) names it.
	IntOption(level, name int) (int, error)
	// SetLinger sets SO_LINGER.
	SetLinger(l Linger) error
	// Linger reads SO_LINGER.
	Linger() (Linger, error)
}

// A MoreSender is a socket that honours send(2)'s MSG_MORE: it holds b
// to go with what a later send without MSG_MORE brings.
type MoreSender interface {
	SendMore(b []byte, to *Addr) (int, error)
}

// Addr is a socket address of any family, as a struct sockaddr holds it.
type Addr struct {
	Family uint16
	IP     netip.Addr // AF_INET, AF_INET6
	Port   uint16     // AF_INET, AF_INET6
	// AF_UNIX: a path, or an abstract name; none for an unbound socket.
	Path     string
	Abstract bool
	NlPort   uint32 // AF_NETLINK: the port id, nl_pid (0: the kernel)
	NlGroups uint32 // AF_NETLINK: multicast groups
}

// Received is what a receive got besides its bytes.
type Received struct {
	Total  int               // datagrams: the full length (more than read: truncated)
	From   Addr              // datagrams: the sender
	Rights []*fs.Description // Unix sockets: descriptions passed with SCM_RIGHTS
	Cred   *Ucred            // Unix sockets with SO_PASSCRED: the sender's SCM_CREDENTIALS
}

// Control is what a send carries besides its bytes: its control messages.
type Control struct {
	Rights []*fs.Description // SCM_RIGHTS
	Cred   *Ucred            // SCM_CREDENTIALS as the sender gave them (checked); nil: its own
}

// Ucred is struct ucred: a process and its user and group, as
// SO_PEERCRED and SCM_CREDENTIALS report them.
type Ucred struct {
	PID      int32
	UID, GID uint32
}

// NoPeerCred is what SO_PEERCRED reports on a socket whose peer left no
// credentials (unconnected, or a datagram socket connected by connect).
var NoPeerCred = Ucred{PID: 0, UID: ^uint32(0), GID: ^uint32(0)}

// noScmCred is what SCM_CREDENTIALS reports for a message sent while
// neither end asked for credentials: Linux's invalid ids read as the
// overflow ids.
var noScmCred = Ucred{PID: 0, UID: 65534, GID: 65534}

// Caller is the process making a call: its id and credentials.
type Caller struct {
	PID        int32
	UID, GID   uint32 // real: what SCM_CREDENTIALS carries
	EUID, EGID uint32 // effective: what SO_PEERCRED reports
	// Landlock is the caller's Landlock domain (nil: unrestricted).
	Landlock *fs.LandlockDomain
	// InflightLimit is how many descriptions in flight (passed with
	// SCM_RIGHTS, not yet received) its user may have before the caller
	// passes no more: its RLIMIT_NOFILE, or NoInflightLimit with
	// CAP_SYS_RESOURCE or CAP_SYS_ADMIN, as Linux's too_many_unix_fds.
	InflightLimit uint64
}

// NoInflightLimit is the InflightLimit of a caller that has none.
const NoInflightLimit = ^uint64(0)

// Peer is the caller as SO_PEERCRED shows it to the other end.
func (c Caller) Peer() Ucred { return Ucred{PID: c.PID, UID: c.EUID, GID: c.EGID} }

// Scm is the caller as SCM_CREDENTIALS shows it to the receiver.
func (c Caller) Scm() Ucred { return Ucred{PID: c.PID, UID: c.UID, GID: c.GID} }

// Linger is SO_LINGER: with On, close waits up to Seconds for unsent data
// (0: resets the connection).
type Linger struct {
	On      bool
	Seconds int
}

// Namespace is the file tree Unix sockets are bound in by path, as the
// calling process sees it: its root, working directory, credentials and
// umask.
type Namespace interface {
	// MakeSocketNode creates a socket node at path that holds s:
	// EADDRINUSE when the path exists.
	MakeSocketNode(path string, s Socket) error
	// BoundSocket is what is bound to the socket node at path, once the
	// caller may write to it.
	BoundSocket(path string) (any, error)
	// Caller is the process that makes the call.
	Caller() Caller
}

// Timeouts are SO_RCVTIMEO and SO_SNDTIMEO: how long a blocking receive
// or send waits before it fails with EAGAIN (0: for ever). A socket
// embeds them, so it satisfies TimeoutSocket.
type Timeouts struct{ recv, send atomic.Int64 }

// SetTimeout sets SO_SNDTIMEO (send) or SO_RCVTIMEO.
func (t *Timeouts) SetTimeout(send bool, d time.Duration) {
	if send {
		t.send.Store(int64(d))
	} else {
		t.recv.Store(int64(d))
	}
}

// Timeout reads SO_SNDTIMEO (send) or SO_RCVTIMEO.
func (t *Timeouts) Timeout(send bool) time.Duration {
	if send {
		return time.Duration(t.send.Load())
	}
	return time.Duration(t.recv.Load())
}

// A TimeoutSocket keeps SO_RCVTIMEO and SO_SNDTIMEO.
type TimeoutSocket interface {
	SetTimeout(send bool, d time.Duration)
	Timeout(send bool) time.Duration
}

// QuietErrno is an errno whose failure raises no signal: EPIPE from a
// send on a Unix datagram or seqpacket socket, which Linux's
// unix_dgram_sendmsg returns without SIGPIPE.
type QuietErrno unix.Errno

func (e QuietErrno) Error() string { return unix.Errno(e).Error() }

// Errno is the errno the call returns.
func (e QuietErrno) Errno() unix.Errno { return unix.Errno(e) }

// Linux's socket buffer sizes, for every family: setsockopt clamps a
// request to wmem_max or rmem_max and doubles it (for the kernel's own
// overhead), and never goes below SOCK_MIN_SNDBUF or SOCK_MIN_RCVBUF.
const (
	maxSocketBuffer = 212992
	minSndbuf       = 4608
	minRcvbuf       = 2304
)

// socketBufferSize is the size setsockopt gives a buffer asked to be v
// bytes: v as an unsigned value clamped to the maximum, doubled, and
// raised to least if below it.
func socketBufferSize(v, least int) int {
	if v < 0 || v > maxSocketBuffer {
		v = maxSocketBuffer
	}
	return max(2*v, least)
}

// forcedBufferSize is the size SO_SNDBUFFORCE or SO_RCVBUFFORCE gives a
// buffer asked to be v bytes: no maximum but Linux's INT_MAX/2, doubled,
// and raised to least if below it.
func forcedBufferSize(v, least int) int {
	return max(2*min(max(v, 0), 1<<30-1), least)
}
