//go:build riscv64

package virtio

import (
	"fmt"
	"sync"
	"time"
	"unsafe"
)

// virtio-net (virtio 1.2, section 5.1): one receive and one transmit queue,
// no offloads. Every buffer is one page: the 12-byte virtio_net_hdr_v1 and a
// whole Ethernet frame.
const (
	netFeatureMAC = 1 << 5
	netHeaderLen  = 12
	netRxQueue    = 0
	netTxQueue    = 1
	netConfigMAC  = 0x100 // device configuration space: the MAC comes first
	// MaxFrame is the largest Ethernet frame without the FCS: 1500 + 14.
	MaxFrame = 1514
)

// Net is a virtio network device.
type Net struct {
	dev *Device
	MAC [6]byte

	rx     *Queue
	rxBufs [queueSize]Buffer // descriptor id -> buffer the device owns

	txMu   sync.Mutex
	tx     *Queue
	txBufs [queueSize]Buffer
	txFree []Buffer
	// txWaiters are the senders waiting for a transmit buffer: only
	// while there are some does the device interrupt for sent frames.
	txWaiters int
	// txDone receives a token each time Receive has taken back sent
	// buffers: Send waits on it while every buffer is in flight.
	txDone chan struct{}
}

// txWait is how long Send waits for a transmit buffer before it drops the
// frame: the device sends a queue's worth in far less, unless it is stuck.
const txWait = time.Second

// OpenNet initialises the network device at base and posts its receive buffers.
func OpenNet(base uintptr, irq int) (*Net, error) {
	d, feats, err := Open(base, irq, netFeatureMAC)
	if err != nil {
		return nil, err
	}
	n := &Net{dev: d, txDone: make(chan struct{}, 1)}
	if feats&netFeatureMAC != 0 {
		for i := range n.MAC {
			n.MAC[i] = readConfig8(d, netConfigMAC+uintptr(i))
		}
	} else {
		n.MAC = [6]byte{0x02, 0x4a, 0x49, 0x45, 0x47, 0x45} // locally administered
	}
	if n.rx, err = d.Queue(netRxQueue); err != nil {
		return nil, err
	}
	if n.tx, err = d.Queue(netTxQueue); err != nil {
		return nil, err
	}
	n.tx.SuppressInterrupts(true) // until a sender waits (waitForTx)
	n.rx.QuietOnInterrupt()
	for i := 0; i < queueSize; i++ {
		b, err := NewBuffer()
		if err != nil {
			return nil, err
		}
		id, err := n.rx.Submit(b, b.Size, true)
		if err != nil {
			return nil, err
		}
		n.rxBufs[id] = b
		tb, err := NewBuffer()
		if err != nil {
			return nil, err
		}
		n.txFree = append(n.txFree, tb)
	}
	d.Start()
	return n, nil
}

// Send queues one Ethernet frame, the concatenation of parts, copied
// into a transmit buffer; Flush tells the device. While every transmit
// buffer is in flight it waits for the device to finish one, as a NIC's
// full queue stops the stack rather than drop what it is given: dropped
// segments cost TCP a retransmission timeout each, and with several harts
// feeding the queue it was full often enough that connections backed off
// for tens of seconds. It reports false, dropping the frame, only when no
// buffer came back within txWait.
func (n *Net) Send(parts [][]byte) (bool, error) {
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	if size > MaxFrame {
		return false, fmt.Errorf("virtio-net: %d-byte frame exceeds %d", size, MaxFrame)
	}
	var timeout <-chan time.Time
	var poll *time.Ticker
	for {
		ok, err := n.trySend(parts, size)
		if ok || err != nil {
			return ok, err
		}
		if timeout == nil {
			// The device sends only what it was told of.
			n.Flush()
			n.waitForTx(true)
			defer n.waitForTx(false)
			t := time.NewTimer(txWait)
			defer t.Stop()
			timeout = t.C
			// Receive's goroutine signals txDone; the sender may be that
			// goroutine (a reply made while a frame is delivered).
			poll = time.NewTicker(time.Millisecond)
			defer poll.Stop()
			continue // a buffer sent before interrupts were on has none
		}
		select {
		case <-n.txDone:
		case <-poll.C:
		case <-timeout:
			return false, nil
		}
	}
}

// waitForTx counts a sender that starts (or stops) waiting for a transmit
// buffer; the device interrupts for sent frames only while one waits.
func (n *Net) waitForTx(start bool) {
	n.txMu.Lock()
	defer n.txMu.Unlock()
	if start {
		n.txWaiters++
	} else {
		n.txWaiters--
	}
	n.tx.SuppressInterrupts(n.txWaiters == 0)
}

// Flush notifies the device of the frames Send queued.
func (n *Net) Flush() {
	n.txMu.Lock()
	n.tx.Notify()
	n.txMu.Unlock()
}

// trySend queues the frame if a transmit buffer is free.
func (n *Net) trySend(parts [][]byte, size int) (bool, error) {
	n.txMu.Lock()
	defer n.txMu.Unlock()
	n.reclaimTx()
	if len(n.txFree) == 0 {
		return false, nil
	}
	whole := n.txFree[len(n.txFree)-1]
	n.txFree = n.txFree[:len(n.txFree)-1]
	// The frame starts where its largest part (a segment's payload) lands
	// on the same offset in a word as its source: Go's memmove copies a
	// byte at a time between buffers whose offsets in a word differ.
	shift, off, largest := 0, netHeaderLen, 0
	for _, p := range parts {
		if len(p) > largest {
			largest = len(p)
			shift = int(uintptr(unsafe.Pointer(unsafe.SliceData(p)))-uintptr(off)) & 7
		}
		off += len(p)
	}
	b := Buffer{PA: whole.PA + uintptr(shift), Size: whole.Size - shift}
	mem := b.Bytes()
	clear(mem[:netHeaderLen])
	off = netHeaderLen
	for _, p := range parts {
		off += copy(mem[off:], p)
	}
	id, err := n.tx.Add(b, netHeaderLen+size, false)
	if err != nil {
		n.txFree = append(n.txFree, whole)
		return false, err
	}
	n.txBufs[id] = whole
	return true, nil
}

// reclaimTx takes back the buffers the device has sent. txMu is held.
func (n *Net) reclaimTx() {
	for {
		id, _, ok := n.tx.Used()
		if !ok {
			return
		}
		n.txFree = append(n.txFree, n.txBufs[id])
	}
}

// Receive runs forever in its own goroutine: it waits for the device's
// interrupt, hands every received frame to deliver (which must copy it),
// gives the buffer back to the device, and calls endOfBatch when the
// device has none left (the stack may hold a frame back until then).
// While it works through the received frames the device does not
// interrupt for more (as Linux's NAPI polls): each interrupt is a trap
// and several device accesses.
func (n *Net) Receive(deliver func(frame []byte), endOfBatch func()) {
	for {
		n.rx.SuppressInterrupts(true)
		reposted := false
		for {
			id, length, ok := n.rx.Used()
			if !ok {
				break
			}
			b := n.rxBufs[id]
			if length > netHeaderLen && length <= b.Size {
				deliver(b.Bytes()[netHeaderLen:length])
			}
			nid, err := n.rx.Add(b, b.Size, true)
			if err != nil {
				panic(fmt.Sprintf("virtio-net: reposting a receive buffer: %v", err))
			}
			n.rxBufs[nid] = b
			reposted = true
		}
		if reposted { // one notification for the batch: each is a trap into QEMU
			n.rx.Notify()
		}
		endOfBatch()
		n.txMu.Lock()
		n.reclaimTx()
		n.txMu.Unlock()
		select {
		case n.txDone <- struct{}{}:
		default:
		}
		n.rx.SuppressInterrupts(false)
		if !n.rx.HasUsed() { // else a frame came before interrupts were on
			n.dev.WaitInterrupt()
		}
	}
}
