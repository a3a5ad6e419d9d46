// Command splice copies with io.Copy the ways Go's standard library hands
// to the kernel: a TCP connection into a file (os.File.ReadFrom: splice
// through a pipe), a file into a file (copy_file_range), and a TCP
// connection into another (TCPConn.ReadFrom: splice), and prints what
// arrived.
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

const size = 8 << 20

var data = bytes.Repeat([]byte("splice-me\n0123456789abcdef"), size/26+1)[:size]

// serve accepts one connection on ln and writes data to it.
func serve(ln net.Listener) {
	c, err := ln.Accept()
	if err != nil {
		return
	}
	c.Write(data)
	c.Close()
}

func listen() net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	return ln
}

func sum(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b))[:16] }

func main() {
	time.AfterFunc(2*time.Minute, func() {
		fmt.Println("still copying after 2 minutes")
		os.Exit(1)
	})
	fmt.Println("data:", sum(data))

	ln := listen()
	go serve(ln)
	c, _ := net.Dial("tcp", ln.Addr().String())
	f, _ := os.Create("fromtcp")
	n, err := io.Copy(f, c)
	f.Close()
	got, _ := os.ReadFile("fromtcp")
	fmt.Println("tcp to file:", n, err, sum(got))

	src, _ := os.Open("fromtcp")
	dst, _ := os.Create("copy")
	n, err = io.Copy(dst, src)
	dst.Close()
	got, _ = os.ReadFile("copy")
	fmt.Println("file to file:", n, err, sum(got))

	ln2 := listen()
	go serve(ln2)
	ln3 := listen()
	received := make(chan []byte)
	go func() {
		c, err := ln3.Accept()
		if err != nil {
			received <- nil
			return
		}
		b, _ := io.ReadAll(c)
		received <- b
	}()
	in, _ := net.Dial("tcp", ln2.Addr().String())
	out, _ := net.Dial("tcp", ln3.Addr().String())
	n, err = io.Copy(out, in)
	out.Close()
	fmt.Println("tcp to tcp:", n, err, sum(<-received))
}
