package net

import (
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// timeWaitCount counts s's endpoints in TIME-WAIT.
func timeWaitCount(s *Stack) int {
	n := 0
	for _, ep := range s.Stack.RegisteredEndpoints() {
		if e, ok := ep.(*tcp.Endpoint); ok && e.EndpointState() == tcp.StateTimeWait {
			n++
		}
	}
	return n
}

// settledTimeWaitCount is timeWaitCount once it has not changed for
// 50 ms (the last connections' FINs may still be on their way).
func settledTimeWaitCount(s *Stack) int {
	n := timeWaitCount(s)
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		m := timeWaitCount(s)
		if m == n {
			break
		}
		n = m
	}
	return n
}

// TestTimeWaitIsBounded: the server closes first, so each connection
// leaves it in TIME-WAIT; past the bound the oldest go, silently, as
// Linux's tcp_max_tw_buckets lets none past it. Below the bound they stay.
func TestTimeWaitIsBounded(t *testing.T) {
	srv, cli, toClient := pairWithCable(t)
	srv.SetMaxTimeWait(16)
	freshConnections(t, srv, cli, 10)
	if n := settledTimeWaitCount(srv); n != 10 {
		t.Fatalf("%d connections in TIME-WAIT after 10, below the bound of 16", n)
	}
	freshConnections(t, srv, cli, 200)
	if n := settledTimeWaitCount(srv); n < 12 || n > 16 {
		t.Errorf("%d connections in TIME-WAIT after 210, bound 16", n)
	}
	for _, s := range toClient.segments() {
		if s.flags&header.TCPFlagRst != 0 {
			t.Fatalf("the server sent a RST (%v)", s.flags)
		}
	}
}

// TestClosedEndpointsAreForgotten: once their TIME-WAIT is over, the
// endpoints of the last connections leave the bound's queue, which would
// otherwise keep them, and their memory, until later closes look at them.
func TestClosedEndpointsAreForgotten(t *testing.T) {
	srv, cli, _ := pairWithCable(t)
	srv.tw.pruneEvery = 100 * time.Millisecond
	wait := tcpip.TCPTimeWaitTimeoutOption(200 * time.Millisecond)
	if err := srv.Stack.SetTransportProtocolOption(tcp.ProtocolNumber, &wait); err != nil {
		t.Fatal(err)
	}
	srv.SetMaxTimeWait(16)
	freshConnections(t, srv, cli, 10)
	queued := func() int {
		srv.tw.mu.Lock()
		defer srv.tw.mu.Unlock()
		return len(srv.tw.closed)
	}
	if n := queued(); n < 10 { // and the listener's
		t.Fatalf("%d endpoints queued after 10 connections, want 10 or more", n)
	}
	for end := time.Now().Add(5 * time.Second); queued() > 0; {
		if time.Now().After(end) {
			t.Fatalf("%d endpoints still queued 5 s after their TIME-WAIT of 200 ms", queued())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
