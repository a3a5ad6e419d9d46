// Command gohttp is a static Go net/http server for the kernel's tests:
// the host fetches from it with curl and compares with the same binary
// under qemu-riscv64. /quit shuts it down gracefully.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", ":8080", "listen address")
	flag.Parse()
	payload := make([]byte, 2<<20)
	x := uint32(1)
	for i := range payload {
		x = x*1664525 + 1013904223
		payload[i] = byte(x >> 24)
	}
	srv := &http.Server{Addr: *addr, ReadHeaderTimeout: time.Minute}
	quit := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from Go on %s/%s\n", runtime.GOOS, runtime.GOARCH)
	})
	mux.HandleFunc("GET /payload.bin", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "payload.bin", time.Unix(1700000000, 0), bytes.NewReader(payload))
	})
	mux.HandleFunc("POST /sha256", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d bytes, sha256 %x\n", n, h.Sum(nil))
	})
	mux.HandleFunc("GET /parallel", func(w http.ResponseWriter, r *http.Request) {
		// Goroutines sharing work, as a server's handlers do.
		var wg sync.WaitGroup
		sums := make([][32]byte, 16)
		for i := range sums {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sums[i] = sha256.Sum256(payload[i<<17 : (i+1)<<17])
			}()
		}
		wg.Wait()
		all := sha256.New()
		for _, s := range sums {
			all.Write(s[:])
		}
		fmt.Fprintf(w, "%x\n", all.Sum(nil))
	})
	mux.HandleFunc("GET /quit", func(w http.ResponseWriter, r *http.Request) {
		// The answer leaves before Shutdown starts closing connections.
		w.Header().Set("Connection", "close")
		fmt.Fprintln(w, "bye")
		w.(http.Flusher).Flush()
		close(quit)
	})
	srv.Handler = mux
	// Serve returns as soon as Shutdown starts; Shutdown itself
	// returns once /quit's answer is complete. Exiting before that cut the
	// answer short (its final chunk unsent) now and then.
	shutDown := make(chan struct{})
	go func() {
		<-quit
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		close(shutDown)
	}()
	// "listening" is printed once the socket listens: the test connects
	// as soon as it reads it, and a connection before listen(2) is reset.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.SetFlags(0)
	log.Printf("gohttp: listening on %s", *addr)
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		log.Fatal(err)
	}
	<-shutDown
	log.Print("gohttp: shut down")
}
