package net

import (
	"net/netip"
	"sort"

	"golang.org/x/sys/unix"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv6"
)

// Interface is a network interface as Linux describes it to programs
// (netlink, the SIOCGIF* ioctls, /proc/net): lo and eth0 with Linux's
// numbers, names, flags, queue length and queueing discipline.
type Interface struct {
	Index      int32
	Name       string
	Type       uint16 // ARPHRD_LOOPBACK or ARPHRD_ETHER
	Flags      uint32 // IFF_*
	Oper       uint8  // IF_OPER_*: lo's is "unknown", as on Linux
	MTU        uint32
	MAC        []byte // all zero for lo
	Broadcast  []byte // link-layer broadcast address
	TxQueueLen uint32
	Qdisc      string
	Addrs      []IfAddr
	Stats      LinkStats
}

// IfAddr is one address of an interface, with Linux's scope (RT_SCOPE_*).
type IfAddr struct {
	Prefix netip.Prefix
	Scope  uint8
}

// LinkStats are an interface's packet counters.
type LinkStats struct {
	RxPackets, TxPackets, RxBytes, TxBytes uint64
}

// Route is a route of the main table.
type Route struct {
	Dst      netip.Prefix
	Gateway  netip.Addr // invalid for a directly reached subnet
	Index    int32      // the outgoing interface
	Src      netip.Addr // the preferred source (RTA_PREFSRC), or invalid
	Scope    uint8      // RT_SCOPE_LINK for a subnet, RT_SCOPE_UNIVERSE via a gateway
	Protocol uint8      // RTPROT_KERNEL for a subnet, RTPROT_BOOT for a gateway
}

// The link properties Linux gives lo and a virtio-net interface.
const (
	txQueueLen    = 1000
	qdiscLoopback = "noqueue"
	qdiscEthernet = "fq_codel"

	operUnknown = 0 // IF_OPER_UNKNOWN (linux/if.h; x/sys/unix lacks it)
	operUp      = 6 // IF_OPER_UP
)

// Interfaces lists the interfaces by index; a nil stack has none.
func (s *Stack) Interfaces() []Interface {
	if s == nil {
		return nil
	}
	var out []Interface
	for id, info := range s.Stack.NICInfo() {
		ifc := Interface{Index: int32(id), Name: info.Name, MTU: info.MTU, TxQueueLen: txQueueLen,
			Stats: LinkStats{
				RxPackets: info.Stats.Rx.Packets.Value(), RxBytes: info.Stats.Rx.Bytes.Value(),
				TxPackets: info.Stats.Tx.Packets.Value(), TxBytes: info.Stats.Tx.Bytes.Value(),
			}}
		if info.Flags.Up {
			ifc.Flags |= unix.IFF_UP
		}
		if info.Flags.Running {
			ifc.Flags |= unix.IFF_RUNNING | unix.IFF_LOWER_UP
		}
		if info.Flags.Loopback {
			ifc.Type, ifc.Qdisc, ifc.Oper = unix.ARPHRD_LOOPBACK, qdiscLoopback, operUnknown
			ifc.Flags |= unix.IFF_LOOPBACK
			ifc.MAC, ifc.Broadcast = make([]byte, 6), make([]byte, 6)
		} else {
			ifc.Type, ifc.Qdisc, ifc.Oper = unix.ARPHRD_ETHER, qdiscEthernet, operUp
			ifc.MTU = s.mtu // netstack's counts the Ethernet header
			ifc.Flags |= unix.IFF_BROADCAST | unix.IFF_MULTICAST
			ifc.MAC = []byte(info.LinkAddress)
			ifc.Broadcast = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		}
		for _, pa := range info.ProtocolAddresses {
			a, ok := netip.AddrFromSlice(pa.AddressWithPrefix.Address.AsSlice())
			if !ok || (pa.Protocol != ipv4.ProtocolNumber && pa.Protocol != ipv6.ProtocolNumber) {
				continue
			}
			ifc.Addrs = append(ifc.Addrs, IfAddr{Prefix: netip.PrefixFrom(a, pa.AddressWithPrefix.PrefixLen), Scope: addrScope(a)})
		}
		// IPv4 before IPv6, as Linux lists them.
		sort.SliceStable(ifc.Addrs, func(i, j int) bool { return ifc.Addrs[i].Prefix.Addr().Is4() && !ifc.Addrs[j].Prefix.Addr().Is4() })
		out = append(out, ifc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// addrScope is the scope Linux gives an address.
func addrScope(a netip.Addr) uint8 {
	switch {
	case a.IsLoopback():
		return unix.RT_SCOPE_HOST
	case a.IsLinkLocalUnicast():
		return unix.RT_SCOPE_LINK
	}
	return unix.RT_SCOPE_UNIVERSE
}

// Routes lists the main table: every route but the loopback interface's,
// which Linux keeps in its local table.
func (s *Stack) Routes() []Route {
	if s == nil {
		return nil
	}
	ifcs := s.Interfaces()
	var out []Route
	for _, r := range s.Stack.GetRouteTable() {
		if r.NIC == loopbackNIC {
			continue
		}
		id := r.Destination.ID()
		dst, ok := netip.AddrFromSlice(id.AsSlice())
		if !ok {
			continue
		}
		rt := Route{Dst: netip.PrefixFrom(dst, r.Destination.Prefix()), Index: int32(r.NIC)}
		if r.Gateway.BitLen() != 0 && !r.Gateway.Unspecified() {
			rt.Gateway, _ = netip.AddrFromSlice(r.Gateway.AsSlice())
			rt.Scope, rt.Protocol = unix.RT_SCOPE_UNIVERSE, unix.RTPROT_BOOT
		} else {
			rt.Scope, rt.Protocol = unix.RT_SCOPE_LINK, unix.RTPROT_KERNEL
			rt.Src = sourceFor(ifcs, rt)
		}
		out = append(out, rt)
	}
	// The order of a dump of Linux's FIB trie: by destination.
	sort.Slice(out, func(i, j int) bool {
		if c := out[i].Dst.Addr().Compare(out[j].Dst.Addr()); c != 0 {
			return c < 0
		}
		return out[i].Dst.Bits() < out[j].Dst.Bits()
	})
	return out
}

// sourceFor is the interface's address inside the route's subnet.
func sourceFor(ifcs []Interface, r Route) netip.Addr {
	for _, ifc := range ifcs {
		if ifc.Index != r.Index {
			continue
		}
		for _, a := range ifc.Addrs {
			if r.Dst.Contains(a.Prefix.Addr()) {
				return a.Prefix.Addr()
			}
		}
	}
	return netip.Addr{}
}

// nicName names the stack's interfaces as Linux names them.
func nicName(id tcpip.NICID) string {
	if id == loopbackNIC {
		return "lo"
	}
	return "eth0"
}

// settableFlags are the interface flags a program may set (Linux's
// dev_change_flags); the others are the kernel's to report.
const settableFlags = unix.IFF_UP | unix.IFF_DEBUG | unix.IFF_NOTRAILERS | unix.IFF_NOARP | unix.IFF_DYNAMIC |
	unix.IFF_MULTICAST | unix.IFF_PORTSEL | unix.IFF_AUTOMEDIA | unix.IFF_PROMISC | unix.IFF_ALLMULTI

// ChangeFlags sets the flags of ifc selected by mask to flags: a no-op
// when they are already so (bringing an interface that is up up), else
// EOPNOTSUPP, as the interfaces are configured at boot.
func ChangeFlags(ifc Interface, flags, mask uint32) error {
	mask &= settableFlags
	if (ifc.Flags^flags)&mask != 0 {
		return unix.EOPNOTSUPP
	}
	return nil
}
