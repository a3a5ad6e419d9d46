// Command copyfile copies a 64 MiB file to a loopback TCP connection with
// io.Copy, as a Go server sends a file: TCPConn.ReadFrom tries sendfile,
// and when the socket's buffer is full waits for EPOLLOUT through the
// runtime's poller. It prints what the receiver got.
package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

const chunks = 64 // of 1 MiB

func main() {
	time.AfterFunc(2*time.Minute, func() {
		fmt.Println("io.Copy still running after 2 minutes")
		os.Exit(1)
	})
	f, err := os.Create("copysrc")
	if err != nil {
		fmt.Println("create:", err)
		os.Exit(1)
	}
	sent := sha256.New()
	for i := range chunks {
		chunk := bytes.Repeat([]byte{byte(i), byte(i * 7), byte(i * 13), 0xa5}, 1<<18)
		f.Write(chunk)
		sent.Write(chunk)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		fmt.Println("seek:", err)
		os.Exit(1)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	type result struct {
		n   int64
		sum []byte
		err error
	}
	got := make(chan result)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- result{err: err}
			return
		}
		// The receiver starts late and reads in small pieces, so the
		// sender meets a full socket buffer and waits for EPOLLOUT.
		time.Sleep(200 * time.Millisecond)
		h := sha256.New()
		buf := make([]byte, 4096)
		var n int64
		for {
			m, err := c.Read(buf)
			h.Write(buf[:m])
			n += int64(m)
			if err == io.EOF {
				err = nil
			}
			if err != nil || m == 0 {
				got <- result{n, h.Sum(nil), err}
				return
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		fmt.Println("dial:", err)
		os.Exit(1)
	}
	n, err := io.Copy(c, f)
	fmt.Println("copied:", n, err)
	c.Close()
	r := <-got
	fmt.Println("received:", r.n, r.err)
	fmt.Println("same bytes:", bytes.Equal(r.sum, sent.Sum(nil)))
}
