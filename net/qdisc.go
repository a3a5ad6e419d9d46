package net

import (
	"sync"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// directQueue is the queueing discipline of our interfaces: each packet
// goes to the link at once, as with netstack's default, but in a list the
// queue reuses, where the default makes a list, an allocation, for every
// packet sent. A TCP segment's window is lowered on the way (window.go).
type directQueue struct {
	link  stack.LinkWriter
	lists sync.Pool // *stack.PacketBufferList
}

func newDirectQueue(link stack.LinkWriter) *directQueue {
	return &directQueue{link: link, lists: sync.Pool{New: func() any { return new(stack.PacketBufferList) }}}
}

// WritePacket sends pkt; the caller keeps its reference, so the list
// takes one of its own, which Reset drops.
func (q *directQueue) WritePacket(pkt *stack.PacketBuffer) tcpip.Error {
	offerLess(pkt)
	l := q.lists.Get().(*stack.PacketBufferList)
	pkt.IncRef()
	l.PushBack(pkt)
	_, err := q.link.WritePackets(*l)
	l.Reset()
	q.lists.Put(l)
	return err
}

func (q *directQueue) Close() {}
