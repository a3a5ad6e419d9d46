//go:build riscv64

package virtio

import (
	"fmt"
	"sync"
	"time"
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
	// txPoll is how often a full transmit queue is looked at again; after
	// txStall without progress the device is taken as stuck.
	txPoll  = 50 * time.Microsecond
	txStall = time.Second
)

// Net is a virtio network device.
type Net struct {
	dev *Device
	MAC [6]byte

	rx     *Queue
	rxBufs map[uint16]Buffer // descriptor id -> buffer the device owns

	txMu   sync.Mutex
	tx     *Queue
	txBufs map[uint16]Buffer
	txFree []Buffer
}

// OpenNet initialises the network device at base and posts its receive buffers.
func OpenNet(base uintptr, irq int) (*Net, error) {
	d, feats, err := Open(base, irq, netFeatureMAC)
	if err != nil {
		return nil, err
	}
	n := &Net{dev: d, rxBufs: map[uint16]Buffer{}, txBufs: map[uint16]Buffer{}}
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

// Send transmits one Ethernet frame, waiting while the transmit queue is
// full as a driver stops its queue (netif_stop_queue): a frame dropped
// here would be a loss to TCP, and a burst of them stalls connections for
// seconds of retransmission timeouts. It reports false only when the
// device has taken no buffer back for txStall.
func (n *Net) Send(frame []byte) (bool, error) {
	if len(frame) > MaxFrame {
		return false, fmt.Errorf("virtio-net: %d-byte frame exceeds %d", len(frame), MaxFrame)
	}
	n.txMu.Lock()
	defer n.txMu.Unlock()
	n.reclaimTx()
	for waited := time.Duration(0); len(n.txFree) == 0; waited += txPoll {
		if waited >= txStall {
			return false, nil
		}
		n.txMu.Unlock()
		time.Sleep(txPoll) // QEMU sends from its own thread meanwhile
		n.txMu.Lock()
		n.reclaimTx()
	}
	b := n.txFree[len(n.txFree)-1]
	n.txFree = n.txFree[:len(n.txFree)-1]
	mem := b.Bytes()
	clear(mem[:netHeaderLen])
	copy(mem[netHeaderLen:], frame)
	id, err := n.tx.Submit(b, netHeaderLen+len(frame), false)
	if err != nil {
		n.txFree = append(n.txFree, b)
		return false, err
	}
	n.txBufs[id] = b
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
		delete(n.txBufs, id)
	}
}

// Receive runs forever in its own goroutine: it waits for the device's
// interrupt, hands every received frame to deliver (which must copy it),
// and gives the buffer back to the device.
func (n *Net) Receive(deliver func(frame []byte)) {
	for {
		reposted := false
		for {
			id, length, ok := n.rx.Used()
			if !ok {
				break
			}
			b := n.rxBufs[id]
			delete(n.rxBufs, id)
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
		n.txMu.Lock()
		n.reclaimTx()
		n.txMu.Unlock()
		n.dev.WaitInterrupt()
	}
}
