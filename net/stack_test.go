package net

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
)

// pair wires two stacks back to back, as a cable would.
func pair(t *testing.T) (a, b *Stack) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var toA, toB func([]byte) (bool, error)
	var err error
	ca := Config{MAC: [6]byte{2, 0, 0, 0, 0, 1}, Addr: [4]byte{10, 0, 2, 15}, Prefix: 24, Gateway: [4]byte{10, 0, 2, 2}, MTU: 1500}
	cb := Config{MAC: [6]byte{2, 0, 0, 0, 0, 2}, Addr: [4]byte{10, 0, 2, 2}, Prefix: 24, Gateway: [4]byte{10, 0, 2, 15}, MTU: 1500}
	a, err = New(ctx, ca, func(f []byte) (bool, error) { return toB(f) })
	if err != nil {
		t.Fatal(err)
	}
	b, err = New(ctx, cb, func(f []byte) (bool, error) { return toA(f) })
	if err != nil {
		t.Fatal(err)
	}
	toA = func(f []byte) (bool, error) { a.Deliver(append([]byte(nil), f...)); return true, nil }
	toB = func(f []byte) (bool, error) { b.Deliver(append([]byte(nil), f...)); return true, nil }
	return a, b
}

// TestTCPEchoBackToBack runs a TCP echo server on one stack and clients on
// the other, with ARP, the handshake, 1 MiB per connection and FIN.
func TestTCPEchoBackToBack(t *testing.T) {
	server, client := pair(t)
	ln, err := gonet.ListenTCP(server.Stack, tcpip.FullAddress{Port: 7}, ipv4.ProtocolNumber)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := gonet.DialContextTCP(ctx, client.Stack, tcpip.FullAddress{Addr: tcpip.AddrFrom4([4]byte{10, 0, 2, 15}), Port: 7}, ipv4.ProtocolNumber)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			data := make([]byte, 1<<20)
			rng := rand.New(rand.NewPCG(seed, seed))
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			go c.Write(data)
			got := make([]byte, len(data))
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.ReadFull(c, got); err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(got, data) {
				errs <- io.ErrUnexpectedEOF
			}
		}(uint64(i))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
