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
	link stack.LinkWriter
	// list is the queue's own, for one send at a time (mu); a send that
	// finds it taken (another goroutine's, or one the link made while
	// delivering on the loopback) takes one of lists.
	mu    sync.Mutex
	list  stack.PacketBufferList
	lists sync.Pool // *stack.PacketBufferList
}

func newDirectQueue(link stack.LinkWriter) *directQueue {
	return &directQueue{link: link, lists: sync.Pool{New: func() any { return new(stack.PacketBufferList) }}}
}

// WritePacket sends pkt; the caller keeps its reference, so the list
// takes one of its own, which Reset drops.
func (q *directQueue) WritePacket(pkt *stack.PacketBuffer) tcpip.Error {
	offerLess(pkt)
	if q.mu.TryLock() {
		err := q.send(&q.list, pkt)
		q.mu.Unlock()
		return err
	}
	l := q.lists.Get().(*stack.PacketBufferList)
	err := q.send(l, pkt)
	q.lists.Put(l)
	return err
}

// send sends pkt to the link in the empty list l, and empties it.
func (q *directQueue) send(l *stack.PacketBufferList, pkt *stack.PacketBuffer) tcpip.Error {
	pkt.IncRef()
	l.PushBack(pkt)
	_, err := q.link.WritePackets(*l)
	l.Reset()
	return err
}

func (q *directQueue) Close() {}
