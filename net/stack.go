// Package net owns networking: gVisor's netstack (pkg/tcpip) with a
// loopback interface and an Ethernet interface configured as the guest of
// QEMU's user network, and the sockets (TCP, UDP, Unix, netlink), each a
// Socket, the one interface the system call layer calls them by. Frames
// reach it from a link driver through Deliver and leave through the send
// function it was created with, so it is tested on the host with two stacks
// wired back to back.
package net

import (
	"fmt"
	"sync/atomic"
	"time"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/link/ethernet"
	"gvisor.dev/gvisor/pkg/tcpip/link/loopback"
	"gvisor.dev/gvisor/pkg/tcpip/network/arp"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv6"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
)

// Config is the interface's address: QEMU's user network gives the guest
// 10.0.2.15/24 behind the gateway 10.0.2.2.
type Config struct {
	MAC     [6]byte
	Addr    [4]byte
	Prefix  int
	Gateway [4]byte
	MTU     uint32
}

// QEMUUser is the configuration of QEMU's user networking.
func QEMUUser(mac [6]byte) Config {
	return Config{MAC: mac, Addr: [4]byte{10, 0, 2, 15}, Prefix: 24, Gateway: [4]byte{10, 0, 2, 2}, MTU: 1500}
}

// The loopback interface is always there, as Linux's lo is; the Ethernet
// interface comes with a network device.
const (
	loopbackNIC tcpip.NICID = 1
	ethernetNIC tcpip.NICID = 2
)

// Stack is a netstack with a loopback interface and, once AddEthernet has
// run, one Ethernet interface: a network namespace, with what Linux keeps
// per namespace beside the interfaces and routes (the abstract Unix
// socket names, the netlink port ids). Every socket is made on a stack
// and keeps it.
type Stack struct {
	Stack *stack.Stack
	link  *link  // nil until AddEthernet
	mtu   uint32 // the Ethernet interface's MTU, without its header
	acks  ackMerger
	tw    timeWaits

	abstract     abstractNames // unix.go
	inflight     inflight      // descriptions in Unix sockets' queues (unixgc.go)
	netlinkPorts netlinkPorts  // netlink.go
	socketIno    atomic.Uint64 // the last inode number a socket of the stack took
}

// newSocketIno numbers a new socket of the stack.
func (s *Stack) newSocketIno() uint64 { return s.socketIno.Add(1) }

// NewLoopback starts a stack with only the loopback interface: 127.0.0.1/8
// and ::1/128.
func NewLoopback() (*Stack, error) {
	s := stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, ipv6.NewProtocol, arp.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol, udp.NewProtocol},
		Clock:              stackClock{},
	})
	// TCP buffers as Linux sizes them (tcp_wmem, tcp_rmem: min, default,
	// max), growing with the connection: netstack's 1 MiB defaults let
	// each connection hold a whole megabyte of kernel memory, 100 MiB for
	// nginx sending a large file to 100 clients. SACK as Linux has it on.
	sack, moderateReceive := tcpip.TCPSACKEnabled(true), tcpip.TCPModerateReceiveBufferOption(true)
	for _, opt := range []tcpip.SettableTransportProtocolOption{
		&tcpip.TCPSendBufferSizeRangeOption{Min: 4096, Default: 16384, Max: 4 << 20},
		&tcpip.TCPReceiveBufferSizeRangeOption{Min: 4096, Default: 131072, Max: 6 << 20},
		&sack, &moderateReceive,
	} {
		if err := s.SetTransportProtocolOption(tcp.ProtocolNumber, opt); err != nil {
			return nil, fmt.Errorf("netstack: TCP option %T: %v", opt, err)
		}
	}
	lo := loopback.New()
	if err := s.CreateNICWithOptions(loopbackNIC, lo, stack.NICOptions{Name: nicName(loopbackNIC), QDisc: newDirectQueue(lo)}); err != nil {
		return nil, fmt.Errorf("netstack: create loopback: %v", err)
	}
	addrs := []tcpip.ProtocolAddress{
		{Protocol: ipv4.ProtocolNumber, AddressWithPrefix: tcpip.AddressWithPrefix{Address: tcpip.AddrFrom4([4]byte{127, 0, 0, 1}), PrefixLen: 8}},
		{Protocol: ipv6.ProtocolNumber, AddressWithPrefix: tcpip.AddressWithPrefix{Address: tcpip.AddrFrom16([16]byte{15: 1}), PrefixLen: 128}},
	}
	var routes []tcpip.Route
	for _, a := range addrs {
		if err := s.AddProtocolAddress(loopbackNIC, a, stack.AddressProperties{}); err != nil {
			return nil, fmt.Errorf("netstack: add loopback address %v: %v", a.AddressWithPrefix, err)
		}
		routes = append(routes, tcpip.Route{Destination: a.AddressWithPrefix.Subnet(), NIC: loopbackNIC})
	}
	s.SetRouteTable(routes)
	return &Stack{Stack: s,
		abstract:     abstractNames{bound: map[string]Socket{}},
		netlinkPorts: netlinkPorts{bound: map[uint32]*NetlinkSocket{}, rover: -4096},
		tw:           timeWaits{pruneEvery: 10 * time.Second},
	}, nil
}

// New starts a stack with the loopback interface and an Ethernet interface
// on dev.
func New(c Config, dev Device) (*Stack, error) {
	s, err := NewLoopback()
	if err != nil {
		return nil, err
	}
	return s, s.AddEthernet(c, dev)
}

// HasEthernet reports whether the stack has its Ethernet interface.
func (s *Stack) HasEthernet() bool { return s.link != nil }

// AddEthernet adds the Ethernet interface, configured by c, on dev.
func (s *Stack) AddEthernet(c Config, dev Device) error {
	if s.link != nil {
		return fmt.Errorf("netstack: Ethernet interface already added")
	}
	link := newLink(dev, c.MTU, tcpip.LinkAddress(c.MAC[:]))
	eth := ethernet.New(link)
	if err := s.Stack.CreateNICWithOptions(ethernetNIC, eth, stack.NICOptions{Name: nicName(ethernetNIC), QDisc: newDirectQueue(eth)}); err != nil {
		return fmt.Errorf("netstack: create NIC: %v", err)
	}
	addr := tcpip.ProtocolAddress{
		Protocol:          ipv4.ProtocolNumber,
		AddressWithPrefix: tcpip.AddressWithPrefix{Address: tcpip.AddrFrom4(c.Addr), PrefixLen: c.Prefix},
	}
	if err := s.Stack.AddProtocolAddress(ethernetNIC, addr, stack.AddressProperties{}); err != nil {
		return fmt.Errorf("netstack: add address: %v", err)
	}
	// Most specific first: loopback, the local subnet, then the default route.
	routes := append(s.Stack.GetRouteTable(),
		tcpip.Route{Destination: addr.AddressWithPrefix.Subnet(), NIC: ethernetNIC},
		tcpip.Route{Destination: header0(), Gateway: tcpip.AddrFrom4(c.Gateway), NIC: ethernetNIC})
	s.Stack.SetRouteTable(routes)
	s.link, s.mtu = link, c.MTU
	return nil
}

// header0 is the default route's destination, 0.0.0.0/0.
func header0() tcpip.Subnet {
	s, _ := tcpip.NewSubnet(tcpip.AddrFrom4([4]byte{}), tcpip.MaskFromBytes([]byte{0, 0, 0, 0}))
	return s
}

// Deliver hands a received Ethernet frame to the stack, which copies it;
// a pure ACK may be held until the next frame or EndOfBatch (ackmerge.go).
// The frames of one card come from one goroutine.
func (s *Stack) Deliver(frame []byte) { s.acks.add(frame, s.deliverNow) }

// EndOfBatch is called when the card has no more frames for now: the
// ACK held goes up.
func (s *Stack) EndOfBatch() { s.acks.flush(s.deliverNow) }

func (s *Stack) deliverNow(frame []byte) {
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buffer.MakeWithData(frame)})
	s.link.deliver(pkt)
	pkt.DecRef()
}
