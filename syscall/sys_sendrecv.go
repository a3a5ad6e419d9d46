package syscall

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/abi/linux/sysno"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/kernel"
	jnet "github.com/jiege-go/jiege/net"
)

func init() {
	register(sysno.Sendto, sysSendto)
	register(sysno.Recvfrom, sysRecvfrom)
	register(sysno.Sendmsg, sysSendmsg)
	register(sysno.Recvmsg, sysRecvmsg)
	register(sysno.Sendmmsg, sysSendmmsg)
	register(sysno.Recvmmsg, sysRecvmmsg)
}

// Sending and receiving on sockets: a byte stream (the socket's
// MaxMessage is 0) moves chunk by chunk between user memory and the
// socket, as read and write do; a message socket's message is copied
// whole, to or from a buffer of at most its MaxMessage.

// Send and receive flags honoured; the others are refused with EOPNOTSUPP
// where Linux would act on them. MSG_NOSIGNAL means nothing to a receive,
// which Linux lets pass (glibc's mq_notify helper thread passes it).
const (
	sendFlags = unix.MSG_DONTWAIT | unix.MSG_NOSIGNAL | unix.MSG_MORE | unix.MSG_EOR
	recvFlags = unix.MSG_DONTWAIT | unix.MSG_PEEK | unix.MSG_CMSG_CLOEXEC | unix.MSG_WAITALL | unix.MSG_NOSIGNAL
)

// sendData sends the user buffers vs on the socket open on fd with the
// send(2) flags, to the address at (to, toLen) when there is one (a
// socket may refuse or ignore it), and ctl's control messages (Unix
// sockets) with the first byte.
func sendData(t *kernel.Task, fd uint64, vs []iovec, flags uint64, to, toLen uint64, ctl jnet.Control) (uint64, error) {
	so, d, err := sockFile(t, fd)
	if err != nil {
		return 0, err
	}
	defer d.DecRef()
	if flags&^sendFlags != 0 {
		return 0, unix.EOPNOTSUPP
	}
	if to != 0 {
		if err := so.CheckDestination(); err != nil {
			return 0, err
		}
	}
	if limit := so.MaxMessage(); limit > 0 {
		return sendMessage(t, d, so, limit, vs, flags, to, toLen, ctl)
	}
	more, holdsMore := so.(jnet.MoreSender)
	holdsMore = holdsMore && flags&unix.MSG_MORE != 0
	mode := ioMode{nonblock: d.Nonblock() || flags&unix.MSG_DONTWAIT != 0}
	if inet := so.Family() == unix.AF_INET || so.Family() == unix.AF_INET6; inet && !holdsMore {
		// A connection's send is its write: the bytes go from the user's
		// buffers straight into the stack's, with nothing staged.
		return writeFrom(t, d, vs, d.File.WriteFrom, mode)
	}
	write := func(b []byte) (int, error) {
		if holdsMore {
			return more.SendMore(b, nil)
		}
		n, err := so.SendMsg(b, nil, ctl, names{t})
		if n > 0 || err == nil {
			ctl.Rights = nil
		}
		return n, err
	}
	staged := func(src fs.UserIO) (int64, error) { return fs.WriteStaged(src, write) }
	return writeFrom(t, d, vs, staged, mode)
}

// sendMessage sends vs as one message of at most limit bytes, to the
// address at (to, toLen) or to the connected peer; it waits for room
// unless non-blocking.
func sendMessage(t *kernel.Task, d *fs.Description, so jnet.Socket, limit int, vs []iovec, flags, to, toLen uint64, ctl jnet.Control) (uint64, error) {
	if !d.Writable() {
		return 0, unix.EBADF
	}
	var dest *jnet.Addr
	if to != 0 {
		sa, err := readSockaddr(t, to, toLen, so.Family())
		if err != nil {
			return 0, err
		}
		dest = &sa
	}
	size := iovecsLen(vs)
	if size > uint64(limit) {
		return 0, unix.EMSGSIZE
	}
	buf := make([]byte, size)
	if err := copyInSeq(t, vs, buf); err != nil {
		return 0, err
	}
	send := func() (int, error) { return so.SendMsg(buf, dest, ctl, names{t}) }
	if more, ok := so.(jnet.MoreSender); ok && flags&unix.MSG_MORE != 0 {
		send = func() (int, error) { return more.SendMore(buf, dest) }
	}
	n, err := send()
	for err == unix.EAGAIN && !d.Nonblock() && flags&unix.MSG_DONTWAIT == 0 {
		if err = waitReady(t, d, unix.EPOLLOUT); err == nil {
			n, err = send()
		}
	}
	return uint64(n), err
}

// received is what a receive call got besides the data.
type received struct {
	rights    []*fs.Description // Unix sockets: descriptions passed with SCM_RIGHTS
	cred      *jnet.Ucred       // Unix sockets with SO_PASSCRED: the sender's SCM_CREDENTIALS
	from      *jnet.Addr        // messages: the sender
	truncated bool              // messages: part of it did not fit (MSG_TRUNC)
}

// recvData receives into the user buffers vs from the socket open on fd
// with the recv(2) flags.
func recvData(t *kernel.Task, fd uint64, vs []iovec, flags uint64) (uint64, received, error) {
	so, d, err := sockFile(t, fd)
	if err != nil {
		return 0, received{}, err
	}
	defer d.DecRef()
	inet := so.Family() == unix.AF_INET || so.Family() == unix.AF_INET6
	switch {
	case flags&unix.MSG_ERRQUEUE != 0 && inet:
		return 0, received{}, unix.EAGAIN // no errors queued
	case flags&unix.MSG_OOB != 0 && so.MaxMessage() == 0:
		return 0, received{}, unix.EINVAL // no urgent data
	}
	if limit := so.MaxMessage(); limit > 0 {
		if flags&^(recvFlags|unix.MSG_TRUNC) != 0 {
			return 0, received{}, unix.EOPNOTSUPP
		}
		return recvMessage(t, d, so, limit, vs, flags)
	}
	if flags&^recvFlags != 0 {
		return 0, received{}, unix.EOPNOTSUPP
	}
	peek := flags&unix.MSG_PEEK != 0
	mode := ioMode{nonblock: d.Nonblock() || flags&unix.MSG_DONTWAIT != 0, waitAll: flags&unix.MSG_WAITALL != 0 && !peek}
	if inet && !peek {
		// A connection's receive is its read: the bytes go from the
		// stack's buffers straight to the user's.
		n, err := readTo(t, d, vs, d.File.ReadTo, mode)
		return n, received{}, err
	}
	var rights []*fs.Description
	var cred *jnet.Ucred
	read := func(b []byte) (int, error) {
		if rights != nil {
			return 0, nil // a read ends after the bytes that carried descriptions
		}
		n, r, err := so.RecvMsg(b, peek)
		rights = r.Rights
		if r.Cred != nil {
			cred = r.Cred
		}
		return n, err
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
	staged := func(dst fs.UserIO) (int64, error) { return fs.ReadStaged(dst, read) }
	n, err := readTo(t, d, vs, staged, mode)
	return n, received{rights: rights, cred: cred}, err
}

// recvMessage takes one message (at most limit bytes of it) into vs,
// waiting for one unless non-blocking. With MSG_TRUNC it returns the
// message's full length.
func recvMessage(t *kernel.Task, d *fs.Description, so jnet.Socket, limit int, vs []iovec, flags uint64) (uint64, received, error) {
	if !d.Readable() {
		return 0, received{}, unix.EBADF
	}
	buf := make([]byte, min(iovecsLen(vs), uint64(limit)))
	peek := flags&unix.MSG_PEEK != 0
	n, r, err := so.RecvMsg(buf, peek)
	for err == unix.EAGAIN && !d.Nonblock() && flags&unix.MSG_DONTWAIT == 0 {
		if err = waitReady(t, d, unix.EPOLLIN); err == nil {
			n, r, err = so.RecvMsg(buf, peek)
		}
	}
	if err != nil {
		return 0, received{}, err
	}
	if err := copyOutSeq(t, vs, buf[:n]); err != nil {
		return 0, received{}, err
	}
	got := received{rights: r.Rights, cred: r.Cred, from: &r.From, truncated: r.Total > n}
	if flags&unix.MSG_TRUNC != 0 {
		return uint64(r.Total), got, nil
	}
	return uint64(n), got, nil
}

// sysSendto implements sendto(2): to an address on datagram sockets, on
// connected stream sockets.
func sysSendto(t *kernel.Task, a Args) (uint64, error) {
	return sendData(t, a[0], oneIovec(a[1], a[2]), a[3], a[4], a[5], jnet.Control{})
}

// sysRecvfrom implements recvfrom(2).
func sysRecvfrom(t *kernel.Task, a Args) (uint64, error) {
	n, r, err := recvData(t, a[0], oneIovec(a[1], a[2]), a[3])
	dropRefs(r.rights)
	if err != nil || a[4] == 0 {
		return n, err
	}
	return n, senderOut(t, a[0], r, a[4], a[5])
}

// senderOut writes where received data came from: a datagram's sender, a
// Unix stream socket's peer, no address (a length of 0) for TCP.
func senderOut(t *kernel.Task, fd uint64, r received, addr, lenAddr uint64) error {
	if r.from != nil {
		return writeSockaddr(t, addr, lenAddr, *r.from)
	}
	so, d, err := sockFile(t, fd)
	if err != nil {
		return err
	}
	d.DecRef()
	if so.Family() != unix.AF_UNIX {
		return writeSockaddr(t, addr, lenAddr, jnet.Addr{})
	}
	_, err = sockName(t, Args{fd, addr, lenAddr}, true)
	return err
}

// sysSendmsg implements sendmsg(2): data, and descriptions to pass with
// SCM_RIGHTS on Unix sockets. As Linux's, it finds the socket before it
// reads the message (EBADF and ENOTSOCK come before EFAULT).
func sysSendmsg(t *kernel.Task, a Args) (uint64, error) {
	so, d, err := sockFile(t, a[0])
	if err != nil {
		return 0, err
	}
	unixSocket := so.Family() == unix.AF_UNIX
	d.DecRef()
	var m linux.Msghdr
	if err := copyInStruct(t, a[1], &m); err != nil {
		return 0, err
	}
	if err := checkMsghdr(&m); err != nil {
		return 0, err
	}
	var few [fewIovecs]iovec
	vs, err := readIovecs(t, m.Iov, m.Iovlen, &few)
	if err != nil {
		return 0, err
	}
	ctl, err := readControl(t, m.Control, m.Controllen, unixSocket)
	if err != nil {
		return 0, err
	}
	// A message sent takes references of its own (net.UnixSocket.SendMsg).
	defer dropRefs(ctl.Rights)
	return sendData(t, a[0], vs, a[2], m.Name, uint64(m.Namelen), ctl)
}

// checkMsghdr refuses a msghdr as Linux's copy_msghdr_from_user: a
// negative name length with a name (EINVAL), more than UIO_MAXIOV
// buffers (EMSGSIZE).
func checkMsghdr(m *linux.Msghdr) error {
	if m.Name != 0 && int32(m.Namelen) < 0 {
		return unix.EINVAL
	}
	if m.Iovlen > maxIovecs {
		return unix.EMSGSIZE
	}
	return nil
}

// maxRights is SCM_MAX_FD, the most descriptors one message passes.
const maxRights = 253

// readControl reads a control buffer. For a Unix socket, as Linux's
// __scm_send: SCM_RIGHTS messages name descriptors of the caller, whose
// descriptions it returns with a reference each that the caller drops
// (dropRefs); SCM_CREDENTIALS gives credentials the caller may claim
// (EPERM otherwise). Another socket ignores both, unread, as Linux's
// __sock_cmsg_send. Other levels are skipped; another SOL_SOCKET type is
// EINVAL.
func readControl(t *kernel.Task, addr, length uint64, unixSocket bool) (ctl jnet.Control, err error) {
	if length == 0 {
		return ctl, nil
	}
	if length > 64<<10 {
		return ctl, unix.ENOBUFS
	}
	buf := make([]byte, length)
	if err := copyIn(t, addr, buf); err != nil {
		return ctl, err
	}
	defer func() {
		if err != nil {
			dropRefs(ctl.Rights)
			ctl.Rights = nil
		}
	}()
	for off := uint64(0); off+linux.SizeofCmsghdr <= length; {
		var h linux.Cmsghdr
		linux.Decode(buf[off:], &h)
		if h.Len < linux.SizeofCmsghdr || h.Len > length-off {
			return ctl, unix.EINVAL
		}
		data := buf[off+linux.SizeofCmsghdr : off+h.Len]
		off += linux.CmsgAlign(h.Len)
		if h.Level != unix.SOL_SOCKET {
			continue
		}
		if !unixSocket && (h.Type == unix.SCM_RIGHTS || h.Type == unix.SCM_CREDENTIALS) {
			continue
		}
		if h.Type == unix.SCM_CREDENTIALS {
			if uint64(len(data)) != linux.SizeofUcred {
				return ctl, unix.EINVAL
			}
			var uc linux.Ucred
			linux.Decode(data, &uc)
			if err := mayClaim(t, uc); err != nil {
				return ctl, err
			}
			// Kept by global id, given as the receiver's namespace numbers it.
			ctl.Cred = &jnet.Ucred{PID: int32(t.Proc.GlobalID(int(uc.Pid))), UID: uc.Uid, GID: uc.Gid}
			continue
		}
		if h.Type != unix.SCM_RIGHTS {
			return ctl, unix.EINVAL
		}
		fds := make([]int32, len(data)/4)
		copy(linux.SliceAsBytes(fds), data)
		for _, fd := range fds {
			d, err := t.Proc.Files.Get(int(fd))
			if err != nil {
				return ctl, err
			}
			ctl.Rights = append(ctl.Rights, d)
			if len(ctl.Rights) > maxRights {
				return ctl, unix.EINVAL
			}
		}
	}
	return ctl, nil
}

// mayClaim checks credentials a sender puts in SCM_CREDENTIALS, as
// Linux's scm_check_creds: its own process id and one of its real,
// effective or saved user and group ids, unless privileged; an id of -1
// is EINVAL.
func mayClaim(t *kernel.Task, uc linux.Ucred) error {
	p := t.Proc
	if uc.Uid == ^uint32(0) || uc.Gid == ^uint32(0) {
		return unix.EINVAL
	}
	if p.Cred().Privileged() {
		return nil
	}
	if uc.Pid != int32(p.Getpid()) || (uc.Uid != p.UID && uc.Uid != p.EUID && uc.Uid != p.SUID) ||
		(uc.Gid != p.GID && uc.Gid != p.EGID && uc.Gid != p.SGID) {
		return unix.EPERM
	}
	return nil
}

// sysRecvmsg implements recvmsg(2): data, the peer's address, and the
// descriptions passed with SCM_RIGHTS, installed as new descriptors
// (MSG_CTRUNC, and those that do not fit closed, when the control buffer
// is too small).
func sysRecvmsg(t *kernel.Task, a Args) (uint64, error) {
	var m linux.Msghdr
	if err := copyInStruct(t, a[1], &m); err != nil {
		return 0, err
	}
	if err := checkMsghdr(&m); err != nil {
		return 0, err
	}
	var few [fewIovecs]iovec
	vs, err := readIovecs(t, m.Iov, m.Iovlen, &few)
	if err != nil {
		return 0, err
	}
	n, r, err := recvData(t, a[0], vs, a[2])
	if err != nil {
		return 0, err
	}
	m.Flags = 0
	if r.truncated {
		m.Flags |= unix.MSG_TRUNC
	}
	c := cmsgs{room: m.Controllen}
	if m.Control == 0 {
		c.room = 0
	}
	if r.cred != nil {
		c.put(unix.SCM_CREDENTIALS, linux.AsBytes(&linux.Ucred{Pid: int32(t.Proc.NumberOf(int(r.cred.PID))), Uid: r.cred.UID, Gid: r.cred.GID}))
	}
	if len(r.rights) > 0 {
		room := int((c.room - min(c.room, linux.SizeofCmsghdr)) / 4)
		var fds []int32
		for i, d := range r.rights {
			if i < room {
				fd, err := t.Proc.Files.Install(d, a[2]&unix.MSG_CMSG_CLOEXEC != 0, 0)
				if err == nil {
					fds = append(fds, int32(fd))
				} else {
					c.truncated = true
				}
			} else {
				c.truncated = true
			}
			d.DecRef()
		}
		if len(fds) > 0 {
			c.put(unix.SCM_RIGHTS, linux.SliceAsBytes(fds))
		}
	}
	if c.truncated {
		m.Flags |= unix.MSG_CTRUNC
	}
	if len(c.out) > 0 {
		if err := copyOut(t, m.Control, c.out); err != nil {
			return 0, err
		}
	}
	m.Controllen = uint64(len(c.out))
	if m.Name != 0 {
		lenAddr := a[1] + linux.OffsetofMsghdrNamelen
		if err := senderOut(t, a[0], r, m.Name, lenAddr); err != nil && err != unix.ENOTCONN {
			return 0, err
		}
		var back linux.Msghdr
		if err := copyInStruct(t, a[1], &back); err != nil {
			return 0, err
		}
		m.Namelen = back.Namelen
	}
	return n, copyOutStruct(t, a[1], m)
}

// cmsgs is a control buffer recvmsg fills, as Linux's put_cmsg: a
// message that does not fit whole is cut to the room left, and
// MSG_CTRUNC said.
type cmsgs struct {
	out       []byte
	room      uint64 // bytes of the caller's buffer left
	truncated bool
}

// put appends a SOL_SOCKET control message of type typ.
func (c *cmsgs) put(typ int32, data []byte) {
	if c.room < linux.SizeofCmsghdr {
		c.truncated = true
		return
	}
	length := linux.SizeofCmsghdr + uint64(len(data))
	if length > c.room {
		c.truncated = true
		length = c.room
	}
	m := linux.Append(nil, linux.Cmsghdr{Len: length, Level: unix.SOL_SOCKET, Type: typ})
	m = append(m, data...)[:length]
	space := min(linux.CmsgAlign(length), c.room)
	m = append(m, make([]byte, space-length)...)
	c.out = append(c.out, m...)
	c.room -= space
}

const msgWaitForOne = 0x10000 // MSG_WAITFORONE

// putMsgLen stores how many bytes message i of the vector at vec moved.
func putMsgLen(t *kernel.Task, vec uint64, i int, n uint64) error {
	return copyOutStruct(t, vec+uint64(i)*linux.SizeofMmsghdr+linux.OffsetofMmsghdrLen, uint32(n))
}

// sysSendmmsg implements sendmmsg(2): sendmsg for each message in turn; an
// error after the first message ends the call with the count sent.
func sysSendmmsg(t *kernel.Task, a Args) (uint64, error) {
	count := int(min(uint64(uint32(a[2])), maxIovecs))
	for i := range count {
		n, err := sysSendmsg(t, Args{a[0], a[1] + uint64(i)*linux.SizeofMmsghdr, a[3]})
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
		n, err := sysRecvmsg(t, Args{a[0], a[1] + uint64(i)*linux.SizeofMmsghdr, flags})
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

// dropRefs drops a reference to each of ds.
func dropRefs(ds []*fs.Description) {
	for _, d := range ds {
		d.DecRef()
	}
}
