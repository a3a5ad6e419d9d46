package net

import (
	"bytes"
	"encoding/binary"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// request is a netlink request: a header and a struct rtgenmsg (or the
// body given).
func request(typ, flags uint16, seq uint32, body []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(unix.NLMSG_HDRLEN+len(body)))
	b = binary.LittleEndian.AppendUint16(b, typ)
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint32(b, seq)
	b = binary.LittleEndian.AppendUint32(b, 0)
	return append(b, body...)
}

// receive reads every queued datagram and parses its messages with
// the standard library's parser.
func receive(t *testing.T, so *NetlinkSocket) [][]syscall.NetlinkMessage {
	t.Helper()
	var out [][]syscall.NetlinkMessage
	for {
		buf := make([]byte, 8192)
		n, total, err := so.RecvFrom(buf, false)
		if err == unix.EAGAIN {
			return out
		}
		if err != nil || n != total {
			t.Fatalf("RecvFrom: %d of %d, %v", n, total, err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			t.Fatalf("ParseNetlinkMessage: %v", err)
		}
		out = append(out, msgs)
	}
}

func TestNetlinkLinkDump(t *testing.T) {
	s, err := NewLoopback()
	if err != nil {
		t.Fatal(err)
	}
	so := s.NewNetlink(unix.SOCK_RAW, 4242, false)
	defer so.Close()
	if so.Readiness(unix.EPOLLIN|unix.EPOLLOUT) != unix.EPOLLOUT {
		t.Errorf("readiness before a request: %#x, want EPOLLOUT only", so.Readiness(unix.EPOLLIN|unix.EPOLLOUT))
	}
	woken := 0
	cancel := so.Watch(func() { woken++ })
	defer cancel()
	req := request(unix.RTM_GETLINK, unix.NLM_F_REQUEST|unix.NLM_F_DUMP, 9, []byte{unix.AF_PACKET, 0, 0, 0})
	if n, err := so.SendTo(req, 0); n != len(req) || err != nil {
		t.Fatalf("SendTo: %d, %v", n, err)
	}
	if port, _ := so.Name(); port != 4242 {
		t.Errorf("autobound port %d, want the process id 4242", port)
	}
	if woken != 1 || so.Readiness(unix.EPOLLIN) != unix.EPOLLIN {
		t.Errorf("after a request: woken %d times, readiness %#x", woken, so.Readiness(unix.EPOLLIN))
	}
	dgrams := receive(t, so)
	if len(dgrams) != 2 || len(dgrams[0]) != 1 || len(dgrams[1]) != 1 {
		t.Fatalf("want a datagram with lo's RTM_NEWLINK, then one with NLMSG_DONE; got %+v", dgrams)
	}
	link, done := dgrams[0][0], dgrams[1][0]
	if link.Header.Type != unix.RTM_NEWLINK || link.Header.Seq != 9 || link.Header.Pid != 4242 || link.Header.Flags != unix.NLM_F_MULTI {
		t.Errorf("link header %+v", link.Header)
	}
	ifi := (*unix.IfInfomsg)(unsafePointer(link.Data))
	if ifi.Index != 1 || ifi.Type != unix.ARPHRD_LOOPBACK || ifi.Flags != unix.IFF_UP|unix.IFF_LOOPBACK|unix.IFF_RUNNING|unix.IFF_LOWER_UP {
		t.Errorf("ifinfomsg %+v", *ifi)
	}
	attrs, err := syscall.ParseNetlinkRouteAttr(&link)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint16][]byte{}
	for _, a := range attrs {
		seen[a.Attr.Type] = a.Value
	}
	if got := string(seen[unix.IFLA_IFNAME]); got != "lo\x00" {
		t.Errorf("IFLA_IFNAME %q", got)
	}
	if got := binary.LittleEndian.Uint32(seen[unix.IFLA_MTU]); got != 65536 {
		t.Errorf("IFLA_MTU %d", got)
	}
	if got := seen[unix.IFLA_ADDRESS]; !bytes.Equal(got, make([]byte, 6)) {
		t.Errorf("IFLA_ADDRESS %x", got)
	}
	if done.Header.Type != unix.NLMSG_DONE || done.Header.Len != 20 || done.Header.Flags != unix.NLM_F_MULTI {
		t.Errorf("done %+v", done.Header)
	}
}

func TestNetlinkErrors(t *testing.T) {
	s, err := NewLoopback()
	if err != nil {
		t.Fatal(err)
	}
	so := s.NewNetlink(unix.SOCK_DGRAM, 4243, false)
	defer so.Close()
	other := s.NewNetlink(unix.SOCK_DGRAM, 4243, false)
	defer other.Close()
	if err := so.Bind(Addr{Family: unix.AF_NETLINK}, nil); err != nil {
		t.Fatal(err)
	}
	// A second socket of the process gets a negative id, as on Linux.
	if err := other.Bind(Addr{Family: unix.AF_NETLINK}, nil); err != nil {
		t.Fatal(err)
	}
	if p, _ := other.Name(); int32(p) >= 0 {
		t.Errorf("second autobind took port %d", int32(p))
	}
	if err := other.Bind(Addr{Family: unix.AF_NETLINK, NlPort: 4243}, nil); err != unix.EINVAL {
		t.Errorf("rebinding to another port: %v, want EINVAL", err)
	}
	for _, c := range []struct {
		name  string
		req   []byte
		errno unix.Errno
	}{
		{"unknown type", request(0x7ff, unix.NLM_F_REQUEST, 1, []byte{0, 0, 0, 0}), unix.EOPNOTSUPP},
		{"change without privilege", request(unix.RTM_NEWADDR, unix.NLM_F_REQUEST, 2, make([]byte, 8)), unix.EPERM},
		{"no such link", request(unix.RTM_GETLINK, unix.NLM_F_REQUEST, 3, ifinfomsg(99)), unix.ENODEV},
		{"acknowledged", request(unix.RTM_GETLINK, unix.NLM_F_REQUEST|unix.NLM_F_ACK, 4, ifinfomsg(1)), 0},
	} {
		so.SendTo(c.req, 0)
		dgrams := receive(t, so)
		last := dgrams[len(dgrams)-1]
		m := last[len(last)-1]
		if m.Header.Type != unix.NLMSG_ERROR {
			t.Errorf("%s: last message %+v, want NLMSG_ERROR", c.name, m.Header)
			continue
		}
		if got := -int32(binary.LittleEndian.Uint32(m.Data)); unix.Errno(got) != c.errno {
			t.Errorf("%s: error %d, want %d", c.name, got, c.errno)
		}
		// An error echoes the whole request; an acknowledgement only its header.
		echo := len(c.req)
		if c.errno == 0 {
			echo = unix.NLMSG_HDRLEN
		}
		if !bytes.Equal(m.Data[4:], c.req[:echo]) {
			t.Errorf("%s: echoed %x, want %x", c.name, m.Data[4:], c.req[:echo])
		}
	}
	if _, err := so.SendTo(request(unix.RTM_GETLINK, unix.NLM_F_REQUEST|unix.NLM_F_DUMP, 5, []byte{0}), 77); err != unix.ECONNREFUSED {
		t.Errorf("sending to a user port: %v, want ECONNREFUSED", err)
	}
}

func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }

// ifinfomsg is a struct ifinfomsg naming an interface by index.
func ifinfomsg(index uint32) []byte {
	b := make([]byte, unix.SizeofIfInfomsg)
	binary.LittleEndian.PutUint32(b[4:], index)
	return b
}

func TestNetlinkSetLinkUp(t *testing.T) {
	s, err := NewLoopback()
	if err != nil {
		t.Fatal(err)
	}
	so := s.NewNetlink(unix.SOCK_RAW, 4244, true)
	defer so.Close()
	setFlags := func(flags, change uint32) unix.Errno {
		body := ifinfomsg(1)
		binary.LittleEndian.PutUint32(body[8:], flags)
		binary.LittleEndian.PutUint32(body[12:], change)
		so.SendTo(request(unix.RTM_NEWLINK, unix.NLM_F_REQUEST|unix.NLM_F_ACK, 1, body), 0)
		dgrams := receive(t, so)
		if len(dgrams) != 1 || dgrams[0][0].Header.Type != unix.NLMSG_ERROR {
			t.Fatalf("answer %+v", dgrams)
		}
		return unix.Errno(-int32(binary.LittleEndian.Uint32(dgrams[0][0].Data)))
	}
	if e := setFlags(unix.IFF_UP, unix.IFF_UP); e != 0 {
		t.Errorf("lo up: %v, want success (it is up)", e)
	}
	if e := setFlags(0, unix.IFF_UP); e != unix.EOPNOTSUPP {
		t.Errorf("lo down: %v, want EOPNOTSUPP", e)
	}
}
