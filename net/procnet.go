package net

import (
	"bytes"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
)

// The files of /proc/net that ifconfig, route and netstat read, in the
// formats of Linux's net/core/net-procfs.c, net/ipv4/fib_trie.c and
// net/ipv6/addrconf.c.

// ProcNetDev is /proc/net/dev: the interfaces' counters.
func (s *Stack) ProcNetDev() []byte {
	var b bytes.Buffer
	b.WriteString("Inter-|   Receive                                                |  Transmit\n")
	b.WriteString(" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n")
	for _, ifc := range s.Interfaces() {
		st := ifc.Stats
		fmt.Fprintf(&b, "%6s:%8d %7d %4d %4d %4d %5d %10d %9d %8d %7d %4d %4d %4d %5d %7d %10d\n",
			ifc.Name, st.RxBytes, st.RxPackets, 0, 0, 0, 0, 0, 0, st.TxBytes, st.TxPackets, 0, 0, 0, 0, 0, 0)
	}
	return b.Bytes()
}

// ProcNetRoute is /proc/net/route: the IPv4 main table, addresses as the
// hexadecimal of their bytes read as a little-endian word, each line
// padded to 127 characters.
func (s *Stack) ProcNetRoute() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-127s\n", "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT")
	names := map[int32]string{}
	for _, ifc := range s.Interfaces() {
		names[ifc.Index] = ifc.Name
	}
	for _, r := range s.Routes() {
		if !r.Dst.Addr().Is4() {
			continue
		}
		flags := unix.RTF_UP
		var gw uint32
		if r.Gateway.IsValid() {
			flags |= unix.RTF_GATEWAY
			gw = linux.InAddrWord(r.Gateway.As4())
		}
		mask := linux.InAddrWord(linux.Inet4Mask(r.Dst.Bits()))
		line := fmt.Sprintf("%s\t%08X\t%08X\t%04X\t%d\t%d\t%d\t%08X\t%d\t%d\t%d",
			names[r.Index], linux.InAddrWord(r.Dst.Addr().As4()), gw, flags, 0, 0, 0, mask, 0, 0, 0)
		fmt.Fprintf(&b, "%-127s\n", line)
	}
	return b.Bytes()
}

// ProcNetIfInet6 is /proc/net/if_inet6: each IPv6 address with its
// interface index, prefix length, scope (IPV6_ADDR_SCOPE bits) and flags.
func (s *Stack) ProcNetIfInet6() []byte {
	var b bytes.Buffer
	for _, ifc := range s.Interfaces() {
		for _, a := range ifc.Addrs {
			if a.Prefix.Addr().Is4() {
				continue
			}
			scope := 0x00 // global
			switch a.Scope {
			case unix.RT_SCOPE_HOST:
				scope = 0x10
			case unix.RT_SCOPE_LINK:
				scope = 0x20
			}
			ip := a.Prefix.Addr().As16()
			fmt.Fprintf(&b, "%x %02x %02x %02x %02x %8s\n", ip[:], ifc.Index, a.Prefix.Bits(), scope, ifaFlagPermanent, ifc.Name)
		}
	}
	return b.Bytes()
}
