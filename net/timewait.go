package net

import (
	"slices"
	"sync"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// TIME-WAIT, bounded as Linux bounds it. A connection this side closed
// first waits 60 s in TIME-WAIT, and netstack keeps its whole endpoint
// (about 8 KiB) meanwhile: a minute of fresh connections to nginx at 400
// a second kept 24,000 of them, which every GC marked, and the rate fell
// by a third within the minute (by half at -m 128M). Linux keeps at most
// tcp_max_tw_buckets of them (half its established hash, which has a
// slot per 128 KiB of RAM) and closes a connection past that without
// TIME-WAIT. Here a closed socket's endpoint joins a queue, and the
// oldest still in TIME-WAIT past the bound is aborted; netstack then
// sends a RST, which the link drops, since Linux sends nothing. A timer
// forgets the endpoints that have closed, so that the last connections
// of a load do not stay in the queue, and in the heap, once it ends.

// timeWaits bounds the stack's closed TCP endpoints in TIME-WAIT.
type timeWaits struct {
	mu     sync.Mutex
	max    int             // 0: no bound
	closed []*tcp.Endpoint // endpoints closed by their sockets, oldest first
	prune  *time.Timer     // set while endpoints are queued
	// pruneEvery is how often a stack with queued endpoints forgets
	// those that have closed: each is then forgotten at most this long
	// after its TIME-WAIT (10 s; less in the tests).
	pruneEvery time.Duration

	abortMu sync.Mutex // one abort at a time: the link drops one RST
}

// SetMaxTimeWait bounds the connections in TIME-WAIT (Linux's
// tcp_max_tw_buckets); 0 leaves them unbounded.
func (s *Stack) SetMaxTimeWait(n int) {
	s.tw.mu.Lock()
	s.tw.max = n
	s.tw.mu.Unlock()
}

// examined is how many endpoints at the queue's front a close looks at:
// the queue is in the order of closing, so the front leaves TIME-WAIT
// (or is aborted) first.
const examined = 4

// add queues ep, closed by its socket, and aborts the oldest endpoints in
// TIME-WAIT while more than the bound are queued.
func (w *timeWaits) add(ep *tcp.Endpoint, l *link) {
	var victims []*tcp.Endpoint
	w.mu.Lock()
	if w.max == 0 {
		w.mu.Unlock()
		return
	}
	w.closed = append(w.closed, ep)
	if w.prune == nil {
		w.prune = time.AfterFunc(w.pruneEvery, w.forgetClosed)
	}
	for i := 0; i < examined && len(w.closed) > 0; i++ {
		front := w.closed[0]
		switch front.EndpointState() {
		case tcp.StateClose, tcp.StateError:
		case tcp.StateTimeWait:
			if len(w.closed) <= w.max {
				i = examined
				continue
			}
			victims = append(victims, front)
		default:
			// Still closing (FIN-WAIT, LAST-ACK): to the back.
			w.closed = append(w.closed, front)
		}
		w.closed[0] = nil
		w.closed = w.closed[1:]
	}
	w.mu.Unlock()
	for _, ep := range victims {
		w.abort(ep, l)
	}
}

// forgetClosed drops the endpoints that have closed from the queue, and
// runs again while some are left.
func (w *timeWaits) forgetClosed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = slices.DeleteFunc(w.closed, func(ep *tcp.Endpoint) bool {
		st := ep.EndpointState()
		return st == tcp.StateClose || st == tcp.StateError
	})
	if len(w.closed) > 0 {
		w.prune.Reset(w.pruneEvery)
	} else {
		w.prune = nil
	}
}

// abort ends ep's TIME-WAIT without a RST on the wire.
func (w *timeWaits) abort(ep *tcp.Endpoint, l *link) {
	w.abortMu.Lock()
	defer w.abortMu.Unlock()
	if k, ok := endpointConnKey(ep); ok && l != nil {
		l.silence(k, true)
		defer l.silence(k, false)
	}
	ep.Abort()
}

// silence makes the link drop c's RST frames, or stop dropping them.
func (l *link) silence(c connKey, on bool) {
	l.txMu.Lock()
	l.silenced, l.silent = c, on
	l.txMu.Unlock()
}

// silentRST says whether frame, a TCP segment seg, is a RST the link drops.
func (l *link) silentRST(frame []byte, seg tcpSeg) bool {
	return l.silent && seg.flags&header.TCPFlagRst != 0 && frameConn(frame) == l.silenced
}
