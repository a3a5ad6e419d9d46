package net

import (
	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
)

// The rtnetlink requests a NetlinkSocket serves, and its answers in
// Linux's message layout (linux/rtnetlink.h).

// serve answers each request in b, as netlink_rcv_skb walks them: a
// malformed header ends the walk; messages without NLM_F_REQUEST and
// control messages are only acknowledged when NLM_F_ACK asks for it.
func (so *NetlinkSocket) serve(b []byte, port uint32) [][]byte {
	var out [][]byte
	for len(b) >= unix.NLMSG_HDRLEN {
		h := parseNlmsghdr(b)
		if h.Len < unix.NLMSG_HDRLEN || int(h.Len) > len(b) {
			break
		}
		msg := b[:h.Len]
		var err error
		dumped := false
		if h.Flags&unix.NLM_F_REQUEST != 0 && h.Type >= unix.NLMSG_MIN_TYPE {
			var answers [][]byte
			answers, dumped, err = so.route(h, msg[unix.NLMSG_HDRLEN:], port)
			out = append(out, answers...)
		}
		if !dumped && (err != nil || h.Flags&unix.NLM_F_ACK != 0) {
			out = append(out, nlAck(h, msg, err, port))
		}
		b = b[min(nlmsgAlign(int(h.Len)), len(b)):]
	}
	return out
}

// route runs one rtnetlink request: the datagrams of its answer, whether
// it was a dump (which ends in NLMSG_DONE, never an acknowledgement), or
// the error to acknowledge.
func (so *NetlinkSocket) route(h linux.NlMsghdr, body []byte, port uint32) ([][]byte, bool, error) {
	if h.Type > unix.RTM_MAX {
		return nil, false, unix.EOPNOTSUPP
	}
	if h.Type&3 != 2 { // not a RTM_GET*: a change
		if !so.privileged {
			return nil, false, unix.EPERM
		}
		if h.Type == unix.RTM_NEWLINK && len(body) >= unix.SizeofIfInfomsg {
			return nil, false, so.setLink(body)
		}
		return nil, false, unix.EOPNOTSUPP
	}
	family := uint8(unix.AF_UNSPEC)
	if len(body) > 0 {
		family = body[0]
	}
	dump := h.Flags&unix.NLM_F_DUMP == unix.NLM_F_DUMP
	var msgs [][]byte
	switch {
	case h.Type == unix.RTM_GETLINK && dump:
		for _, ifc := range so.stack.Interfaces() {
			msgs = append(msgs, linkMessage(h, ifc, unix.NLM_F_MULTI, port))
		}
	case h.Type == unix.RTM_GETLINK:
		ifc, err := so.findLink(body)
		if err != nil {
			return nil, false, err
		}
		return [][]byte{linkMessage(h, ifc, 0, port)}, false, nil
	case h.Type == unix.RTM_GETADDR && dump:
		// IPv4 addresses of every interface, then IPv6 ones, as
		// rtnl_dump_all walks the families.
		for _, v4 := range []bool{true, false} {
			if !familyWanted(family, v4) {
				continue
			}
			for _, ifc := range so.stack.Interfaces() {
				for _, a := range ifc.Addrs {
					if a.Prefix.Addr().Is4() == v4 {
						msgs = append(msgs, addrMessage(h, ifc, a, port))
					}
				}
			}
		}
	case h.Type == unix.RTM_GETROUTE && dump:
		for _, r := range so.stack.Routes() {
			if familyWanted(family, r.Dst.Addr().Is4()) {
				msgs = append(msgs, routeMessage(h, r, port))
			}
		}
	default:
		return nil, false, unix.EOPNOTSUPP
	}
	return packDump(h, msgs, port), true, nil
}

// setLink serves RTM_NEWLINK's flag changes (ip link set dev up):
// ifi_flags under the mask ifi_change (all of them when it is 0).
func (so *NetlinkSocket) setLink(body []byte) error {
	ifc, err := so.findLink(body)
	if err != nil {
		return err
	}
	if len(body) > unix.SizeofIfInfomsg {
		return unix.EOPNOTSUPP // attributes: a name, an MTU, an address to set
	}
	var ifi linux.IfInfomsg
	linux.Decode(body, &ifi)
	flags, change := ifi.Flags, ifi.Change
	if change == 0 {
		change = ^uint32(0)
	}
	return ChangeFlags(ifc, flags, change)
}

// familyWanted reports whether a dump for family lists an IPv4 (or IPv6)
// entry: a family with no handler of its own gets all, as rtnl_dump_all.
func familyWanted(family uint8, v4 bool) bool {
	switch family {
	case unix.AF_INET:
		return v4
	case unix.AF_INET6:
		return !v4
	}
	return true
}

// findLink finds the interface a RTM_GETLINK request names by index or by
// IFLA_IFNAME: ENODEV when there is none, EINVAL when it names none.
func (so *NetlinkSocket) findLink(body []byte) (Interface, error) {
	if len(body) < unix.SizeofIfInfomsg {
		return Interface{}, unix.EINVAL
	}
	var ifi linux.IfInfomsg
	linux.Decode(body, &ifi)
	index := ifi.Index
	var name string
	for attrs := body[unix.SizeofIfInfomsg:]; len(attrs) >= unix.SizeofRtAttr; {
		var rta linux.RtAttr
		linux.Decode(attrs, &rta)
		l := int(rta.Len)
		if l < unix.SizeofRtAttr || l > len(attrs) {
			break
		}
		if rta.Type == unix.IFLA_IFNAME {
			name = cString(attrs[unix.SizeofRtAttr:l])
		}
		attrs = attrs[min(rtaAlign(l), len(attrs)):]
	}
	if index <= 0 && name == "" {
		return Interface{}, unix.EINVAL
	}
	for _, ifc := range so.stack.Interfaces() {
		if (index > 0 && ifc.Index == index) || (index <= 0 && ifc.Name == name) {
			return ifc, nil
		}
	}
	return Interface{}, unix.ENODEV
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// packDump puts a dump's messages into datagrams of at most
// netlinkGoodSize bytes, and NLMSG_DONE into one more.
func packDump(h linux.NlMsghdr, msgs [][]byte, port uint32) [][]byte {
	var out [][]byte
	var cur []byte
	for _, m := range msgs {
		if len(cur) > 0 && len(cur)+len(m) > netlinkGoodSize {
			out, cur = append(out, cur), nil
		}
		cur = append(cur, m...)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	done := newMessage(unix.NLMSG_DONE, unix.NLM_F_MULTI, h.Seq, port)
	done.put(make([]byte, 4)) // the dump's status: 0
	return append(out, done.bytes())
}

// nlAck is an NLMSG_ERROR message for the request msg: the error (0: an
// acknowledgement) and the request, whole after an error, its header only
// (NLM_F_CAPPED) after success.
func nlAck(h linux.NlMsghdr, msg []byte, err error, port uint32) []byte {
	var errno int32
	flags := uint16(unix.NLM_F_CAPPED)
	echo := msg[:unix.NLMSG_HDRLEN]
	if e, ok := err.(unix.Errno); ok {
		errno, flags, echo = -int32(e), 0, msg
	} else if err != nil {
		errno, flags, echo = -int32(unix.EINVAL), 0, msg
	}
	m := newMessage(unix.NLMSG_ERROR, flags, h.Seq, port)
	m.put(linux.Append(nil, errno)) // struct nlmsgerr: the error, then the request
	m.put(echo)
	return m.bytes()
}

// linkMessage is RTM_NEWLINK for ifc, its attributes in the order
// rtnl_fill_ifinfo writes them (those a program reads).
func linkMessage(h linux.NlMsghdr, ifc Interface, flags uint16, port uint32) []byte {
	m := newMessage(unix.RTM_NEWLINK, flags, h.Seq, port)
	m.put(linux.Append(nil, linux.IfInfomsg{Family: unix.AF_UNSPEC, Type: ifc.Type, Index: ifc.Index, Flags: ifc.Flags}))
	m.attr(unix.IFLA_IFNAME, append([]byte(ifc.Name), 0))
	m.attr(unix.IFLA_TXQLEN, u32(ifc.TxQueueLen))
	m.attr(unix.IFLA_OPERSTATE, []byte{ifc.Oper})
	m.attr(unix.IFLA_LINKMODE, []byte{0})
	m.attr(unix.IFLA_MTU, u32(ifc.MTU))
	m.attr(unix.IFLA_GROUP, u32(0))
	m.attr(unix.IFLA_PROMISCUITY, u32(0))
	m.attr(unix.IFLA_NUM_TX_QUEUES, u32(1))
	m.attr(unix.IFLA_NUM_RX_QUEUES, u32(1))
	m.attr(unix.IFLA_CARRIER, []byte{1})
	m.attr(unix.IFLA_QDISC, append([]byte(ifc.Qdisc), 0))
	m.attr(unix.IFLA_ADDRESS, ifc.MAC)
	m.attr(unix.IFLA_BROADCAST, ifc.Broadcast)
	s := ifc.Stats
	// Packets and bytes; the error counters zero.
	m.attr(unix.IFLA_STATS64, linux.Append(nil, linux.RtnlLinkStats64{RxPackets: s.RxPackets, TxPackets: s.TxPackets,
		RxBytes: s.RxBytes, TxBytes: s.TxBytes}))
	m.attr(unix.IFLA_STATS, linux.Append(nil, linux.RtnlLinkStats{RxPackets: uint32(s.RxPackets), TxPackets: uint32(s.TxPackets),
		RxBytes: uint32(s.RxBytes), TxBytes: uint32(s.TxBytes)}))
	return m.bytes()
}

// ifaFlagPermanent is IFA_F_PERMANENT: an address no one configured with
// a lifetime.
const ifaFlagPermanent = 0x80

// addrMessage is RTM_NEWADDR for one address of ifc, its attributes in
// the order inet_fill_ifaddr (IPv4) and inet6_fill_ifaddr write them.
func addrMessage(h linux.NlMsghdr, ifc Interface, a IfAddr, port uint32) []byte {
	m := newMessage(unix.RTM_NEWADDR, unix.NLM_F_MULTI, h.Seq, port)
	family := byte(unix.AF_INET6)
	if a.Prefix.Addr().Is4() {
		family = unix.AF_INET
	}
	m.put(linux.Append(nil, linux.IfAddrmsg{Family: family, Prefixlen: byte(a.Prefix.Bits()), Flags: ifaFlagPermanent,
		Scope: a.Scope, Index: uint32(ifc.Index)}))
	addr := a.Prefix.Addr().AsSlice()
	// Preferred and valid lifetimes forever; created and updated at boot.
	cache := linux.Append(nil, linux.IfaCacheinfo{Prefered: ^uint32(0), Valid: ^uint32(0)})
	m.attr(unix.IFA_ADDRESS, addr)
	if family == unix.AF_INET {
		m.attr(unix.IFA_LOCAL, addr)
		m.attr(unix.IFA_LABEL, append([]byte(ifc.Name), 0))
		m.attr(unix.IFA_FLAGS, u32(ifaFlagPermanent))
		m.attr(unix.IFA_CACHEINFO, cache)
	} else {
		m.attr(unix.IFA_CACHEINFO, cache)
		m.attr(unix.IFA_FLAGS, u32(ifaFlagPermanent))
	}
	return m.bytes()
}

// routeMessage is RTM_NEWROUTE for a route of the main table, its
// attributes in fib_dump_info's order.
func routeMessage(h linux.NlMsghdr, r Route, port uint32) []byte {
	m := newMessage(unix.RTM_NEWROUTE, unix.NLM_F_MULTI, h.Seq, port)
	family := byte(unix.AF_INET6)
	if r.Dst.Addr().Is4() {
		family = unix.AF_INET
	}
	m.put(linux.Append(nil, linux.RtMsg{Family: family, DstLen: byte(r.Dst.Bits()), Table: unix.RT_TABLE_MAIN,
		Protocol: r.Protocol, Scope: r.Scope, Type: unix.RTN_UNICAST}))
	m.attr(unix.RTA_TABLE, u32(unix.RT_TABLE_MAIN))
	if r.Dst.Bits() > 0 {
		m.attr(unix.RTA_DST, r.Dst.Addr().AsSlice())
	}
	if r.Src.IsValid() {
		m.attr(unix.RTA_PREFSRC, r.Src.AsSlice())
	}
	if r.Gateway.IsValid() {
		m.attr(unix.RTA_GATEWAY, r.Gateway.AsSlice())
	}
	m.attr(unix.RTA_OIF, u32(uint32(r.Index)))
	return m.bytes()
}

func u32(v uint32) []byte { return linux.Append(nil, v) }

func parseNlmsghdr(b []byte) linux.NlMsghdr {
	var h linux.NlMsghdr
	linux.Decode(b, &h)
	return h
}

func nlmsgAlign(n int) int { return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }
func rtaAlign(n int) int   { return (n + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1) }

// message builds one netlink message; bytes fills in its length.
type message struct{ b []byte }

func newMessage(typ, flags uint16, seq, port uint32) *message {
	b := linux.Append(make([]byte, 0, 256), linux.NlMsghdr{Type: typ, Flags: flags, Seq: seq, Pid: port})
	return &message{b: b}
}

// put appends a fixed part, padded to the netlink alignment.
func (m *message) put(p []byte) {
	m.b = append(m.b, p...)
	m.b = append(m.b, make([]byte, nlmsgAlign(len(m.b))-len(m.b))...)
}

// attr appends a struct rtattr and its data, padded.
func (m *message) attr(typ uint16, data []byte) {
	m.b = linux.Append(m.b, linux.RtAttr{Len: uint16(unix.SizeofRtAttr + len(data)), Type: typ})
	m.put(data)
}

func (m *message) bytes() []byte {
	h := parseNlmsghdr(m.b)
	h.Len = uint32(len(m.b))
	copy(m.b, linux.AsBytes(&h))
	return m.b
}
