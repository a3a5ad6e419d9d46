// Package net owns networking: gVisor's netstack (pkg/tcpip) configured as
// the guest of QEMU's user network, and, later, the socket layer. Frames
// reach it from a link driver through Deliver and leave through the send
// function it was created with, so it is tested on the host with two stacks
// wired back to back.
package net

import (
	"context"
	"fmt"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/link/channel"
	"gvisor.dev/gvisor/pkg/tcpip/link/ethernet"
	"gvisor.dev/gvisor/pkg/tcpip/network/arp"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
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

const nicID tcpip.NICID = 1

// Stack is a netstack with one Ethernet interface.
type Stack struct {
	Stack *stack.Stack
	link  *channel.Endpoint
}

// New starts a stack whose outgoing frames go to send. A frame send cannot
// take (it returns false) is dropped, as a full NIC queue drops it.
func New(ctx context.Context, c Config, send func(frame []byte) (bool, error)) (*Stack, error) {
	s := stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, arp.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol, udp.NewProtocol},
	})
	link := channel.New(512, c.MTU, tcpip.LinkAddress(c.MAC[:]))
	if err := s.CreateNIC(nicID, ethernet.New(link)); err != nil {
		return nil, fmt.Errorf("netstack: create NIC: %v", err)
	}
	addr := tcpip.ProtocolAddress{
		Protocol:          ipv4.ProtocolNumber,
		AddressWithPrefix: tcpip.AddressWithPrefix{Address: tcpip.AddrFrom4(c.Addr), PrefixLen: c.Prefix},
	}
	if err := s.AddProtocolAddress(nicID, addr, stack.AddressProperties{}); err != nil {
		return nil, fmt.Errorf("netstack: add address: %v", err)
	}
	subnet := addr.AddressWithPrefix.Subnet()
	s.SetRouteTable([]tcpip.Route{
		{Destination: subnet, NIC: nicID},
		{Destination: header0(), Gateway: tcpip.AddrFrom4(c.Gateway), NIC: nicID},
	})
	st := &Stack{Stack: s, link: link}
	go st.transmit(ctx, send)
	return st, nil
}

// header0 is the default route's destination, 0.0.0.0/0.
func header0() tcpip.Subnet {
	s, _ := tcpip.NewSubnet(tcpip.AddrFrom4([4]byte{}), tcpip.MaskFromBytes([]byte{0, 0, 0, 0}))
	return s
}

func (s *Stack) transmit(ctx context.Context, send func([]byte) (bool, error)) {
	for {
		pkt := s.link.ReadContext(ctx)
		if pkt == nil {
			return
		}
		v := pkt.ToView()
		send(v.AsSlice())
		v.Release()
		pkt.DecRef()
	}
}

// Deliver hands a received Ethernet frame to the stack; the stack copies it.
func (s *Stack) Deliver(frame []byte) {
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buffer.MakeWithData(frame)})
	s.link.InjectInbound(0, pkt)
	pkt.DecRef()
}
