// Package fakehttp owns in-process HTTP servers that imitate nginx, busybox
// httpd and a kernel's built-in server, for jiege's host-side tests. They
// are imitations written from recorded responses (nginx 1.22.1 and busybox
// 1.35.0 on this host, see ../testdata), not the real servers.
package fakehttp

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Flavor selects whose behaviour a server imitates.
type Flavor int

const (
	// Nginx imitates nginx serving static files: its header order, ETag
	// format, 404 page, Range, conditional requests and keep-alive.
	Nginx Flavor = iota
	// Busybox imitates busybox httpd 1.35: no Server header, "Connection:
	// close" always, its own 404 page, a body even for HEAD, no 304.
	Busybox
	// Pretender imitates a kernel's built-in server claiming to be nginx:
	// the right Server header and keep-alive, but a plain 404 body, no
	// ETag, no Range and no conditional requests.
	Pretender
)

// Options configures a server.
type Options struct {
	Flavor  Flavor
	Version string            // nginx version for Server headers; default "1.26.3"
	Files   map[string][]byte // URL path -> content; "/" serves "/index.html"
	ModTime time.Time         // Last-Modified of every file; default 2026-01-02 03:04:05 UTC
	// DieAfter, if > 0, makes the server close its listener and every
	// connection once it has answered that many requests.
	DieAfter int64
	// DieAccepting makes a server that dies (DieAfter) go on accepting
	// connections and close them at once, as QEMU's hostfwd does once the
	// guest's server is gone, instead of refusing them.
	DieAccepting bool
	// AcceptOnly makes the server accept connections and close them at
	// once without reading or answering, as QEMU's hostfwd does when the
	// guest has no network.
	AcceptOnly bool
	// Addr is the address to listen on; default a free loopback port.
	Addr string
	// KeepAliveRequests is how many requests one connection may carry
	// before the server answers "Connection: close" (nginx's
	// keepalive_requests); default 1000.
	KeepAliveRequests int
}

// bodyTimeout bounds the wait for a request body.
const bodyTimeout = 300 * time.Millisecond

// lingerTime bounds how long a closing connection reads and drops what
// the client still sends (nginx's lingering close).
const lingerTime = 2 * time.Second

// Server is a running imitation.
type Server struct {
	Addr string // 127.0.0.1:port

	o      Options
	ln     net.Listener
	served atomic.Int64
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	dead   bool
	wg     sync.WaitGroup
}

// Start listens on a free loopback port and serves until Close.
func Start(o Options) (*Server, error) {
	if o.Version == "" {
		o.Version = "1.26.3"
	}
	if o.ModTime.IsZero() {
		o.ModTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	if o.KeepAliveRequests <= 0 {
		o.KeepAliveRequests = 1000
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: ln.Addr().String(), o: o, ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Served returns how many requests the server has answered.
func (s *Server) Served() int64 { return s.served.Load() }

// Close stops the server and waits for its goroutines.
func (s *Server) Close() error {
	s.die()
	s.ln.Close()
	s.wg.Wait()
	return nil
}

// stopAccepting marks the server dead: connections accepted from now on
// are closed at once and, unless o.DieAccepting, the listener is closed.
func (s *Server) stopAccepting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopAcceptingLocked()
}

func (s *Server) stopAcceptingLocked() {
	if s.dead {
		return
	}
	s.dead = true
	if !s.o.DieAccepting {
		s.ln.Close()
	}
}

// die stops accepting and closes every connection.
func (s *Server) die() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopAcceptingLocked()
	for c := range s.conns {
		c.Close()
	}
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		if s.o.AcceptOnly {
			c.Close()
			continue
		}
		s.mu.Lock()
		if s.dead {
			s.mu.Unlock()
			c.Close()
			if s.o.DieAccepting {
				continue
			}
			return
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
			lingeringClose(c) // listed meanwhile: Close ends it at once
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

func (s *Server) serve(c net.Conn) {
	br := bufio.NewReader(c)
	bw := bufio.NewWriter(c)
	for n := 1; ; n++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		// A body nginx would refuse to wait for (chunked with a
		// Content-Length, say) must not hold the imitation forever.
		c.SetReadDeadline(time.Now().Add(bodyTimeout))
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		c.SetReadDeadline(time.Time{})
		keep := req.ProtoAtLeast(1, 1) && !req.Close && n < s.o.KeepAliveRequests
		switch s.o.Flavor {
		case Busybox:
			s.busybox(bw, req)
			keep = false
		case Pretender:
			s.pretender(bw, req, keep)
		default:
			s.nginx(bw, req, keep)
		}
		// Count before the client can see the answer, so that Served is
		// exact once the client has it.
		n := s.served.Add(1)
		last := s.o.DieAfter > 0 && n >= s.o.DieAfter
		if last {
			// Dead before the client has its last answer: a connection it
			// opens on reading the answer must not be served.
			s.stopAccepting()
		}
		if bw.Flush() != nil {
			return
		}
		if last {
			s.die()
			return
		}
		if !keep {
			return
		}
	}
}

// lingeringClose closes c as nginx does: the write side first, then
// what the client still sends (pipelined requests after the last answer)
// is read and dropped until it closes or lingerTime passes. A close with
// unread data would reset the connection, and the client could lose the
// end of the last answer still in flight.
func lingeringClose(c net.Conn) {
	defer c.Close()
	tc, ok := c.(*net.TCPConn)
	if !ok || tc.CloseWrite() != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(lingerTime))
	io.Copy(io.Discard, c)
}

func (s *Server) lookup(p string) ([]byte, bool) {
	if strings.HasSuffix(p, "/") {
		p += "index.html"
	}
	b, ok := s.o.Files[p]
	return b, ok
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".html", "":
		return "text/html"
	case ".txt":
		return "text/plain"
	}
	return "application/octet-stream"
}

func date() string { return time.Now().UTC().Format(http.TimeFormat) }

func connection(keep bool) string {
	if keep {
		return "keep-alive"
	}
	return "close"
}

// nginxErrorPage returns nginx's built-in error page for status 404, as
// nginx writes it (CRLF line ends, version in the tail).
func nginxErrorPage(version string) string {
	return "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n" +
		"<center><h1>404 Not Found</h1></center>\r\n" +
		"<hr><center>nginx/" + version + "</center>\r\n</body>\r\n</html>\r\n"
}

// nginx answers in nginx's header order: Server, Date, Content-Type,
// Content-Length, Last-Modified, Connection, then ETag and Accept-Ranges
// or Content-Range.
func (s *Server) nginx(w *bufio.Writer, req *http.Request, keep bool) {
	server := "nginx/" + s.o.Version
	body, ok := s.lookup(req.URL.Path)
	if !ok {
		page := nginxErrorPage(s.o.Version)
		fmt.Fprintf(w, "HTTP/1.1 404 Not Found\r\nServer: %s\r\nDate: %s\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: %s\r\n\r\n",
			server, date(), len(page), connection(keep))
		if req.Method != http.MethodHead {
			w.WriteString(page)
		}
		return
	}
	lm := s.o.ModTime.UTC().Format(http.TimeFormat)
	etag := fmt.Sprintf("\"%x-%x\"", s.o.ModTime.Unix(), len(body))
	if req.Header.Get("If-None-Match") == etag || req.Header.Get("If-Modified-Since") == lm {
		fmt.Fprintf(w, "HTTP/1.1 304 Not Modified\r\nServer: %s\r\nDate: %s\r\nLast-Modified: %s\r\nConnection: %s\r\nETag: %s\r\n\r\n",
			server, date(), lm, connection(keep), etag)
		return
	}
	status, tail, part := "200 OK", "Accept-Ranges: bytes\r\n", body
	if lo, hi, ok := parseRange(req.Header.Get("Range"), len(body)); ok {
		status, part = "206 Partial Content", body[lo:hi+1]
		tail = fmt.Sprintf("Content-Range: bytes %d-%d/%d\r\n", lo, hi, len(body))
	}
	fmt.Fprintf(w, "HTTP/1.1 %s\r\nServer: %s\r\nDate: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nLast-Modified: %s\r\nConnection: %s\r\nETag: %s\r\n%s\r\n",
		status, server, date(), contentType(req.URL.Path), len(part), lm, connection(keep), etag, tail)
	if req.Method != http.MethodHead {
		w.Write(part)
	}
}

// busybox answers as busybox httpd 1.35 does (recorded on this host).
func (s *Server) busybox(w *bufio.Writer, req *http.Request) {
	body, ok := s.lookup(req.URL.Path)
	if !ok {
		fmt.Fprintf(w, "HTTP/1.1 404 Not Found\r\nDate: %s\r\nConnection: close\r\nContent-type: text/html\r\n\r\n"+
			"<HTML><HEAD><TITLE>404 Not Found</TITLE></HEAD>\n<BODY><H1>404 Not Found</H1>\n"+
			"The requested URL was not found\n</BODY></HTML>\n", date())
		return
	}
	lm := s.o.ModTime.UTC().Format(http.TimeFormat)
	etag := fmt.Sprintf("\"%x-%x\"", s.o.ModTime.Unix(), len(body))
	status, rng, part := "200 OK", "", body
	if lo, hi, ok := parseRange(req.Header.Get("Range"), len(body)); ok {
		status, part = "206 Partial Content", body[lo:hi+1]
		rng = fmt.Sprintf("Content-Range: bytes %d-%d/%d\r\n", lo, hi, len(body))
	}
	fmt.Fprintf(w, "HTTP/1.1 %s\r\nDate: %s\r\nConnection: close\r\nContent-type: %s\r\n%sAccept-Ranges: bytes\r\nLast-Modified: %s\r\nETag: %s\r\nContent-Length: %d\r\n\r\n",
		status, date(), contentType(req.URL.Path), rng, lm, etag, len(part))
	w.Write(part) // busybox sends the body for HEAD too
}

// pretender claims to be nginx but implements only the basics.
func (s *Server) pretender(w *bufio.Writer, req *http.Request, keep bool) {
	body, ok := s.lookup(req.URL.Path)
	status := "200 OK"
	if !ok {
		status, body = "404 Not Found", []byte("Not Found\n")
	}
	fmt.Fprintf(w, "HTTP/1.1 %s\r\nServer: nginx/%s\r\nDate: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: %s\r\n\r\n",
		status, s.o.Version, date(), contentType(req.URL.Path), len(body), connection(keep))
	if req.Method != http.MethodHead {
		w.Write(body)
	}
}

// parseRange parses a single "bytes=lo-hi" range within size.
func parseRange(h string, size int) (lo, hi int, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false
	}
	a, b, found := strings.Cut(spec, "-")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || lo > hi || lo >= size {
		return 0, 0, false
	}
	return lo, min(hi, size-1), true
}
