package probe

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jiege-go/jiege/tools/jiege/internal/probe/fakehttp"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

func TestExplain(t *testing.T) {
	tg, files := fixture(t)

	// nginx with keep-alive off fails the fingerprint, and Explain says why.
	s := start(t, fakehttp.Options{Files: files, KeepAliveRequests: 1})
	tg.Addr = s.Addr
	wantStage(t, Fingerprint(ctxFor(t, 20*time.Second), tg), report.Fail, report.ClassFingerprint)
	got := Explain(ctxFor(t, 20*time.Second), s.Addr, "1.26.3")
	if len(got) != 1 || !strings.Contains(got[0], "keep-alive is off") || !strings.Contains(got[0], "`Connection: close`") {
		t.Errorf("keep-alive off: %q", got)
	}

	// Another nginx version.
	s = start(t, fakehttp.Options{Files: files, Version: "1.28.3"})
	if got := Explain(ctxFor(t, 20*time.Second), s.Addr, "1.26.3"); len(got) != 1 || got[0] != "it is nginx 1.28.3, not the root filesystem's nginx 1.26.3" {
		t.Errorf("another version: %q", got)
	}

	// busybox httpd: no Server header, and it closes every connection.
	s = start(t, fakehttp.Options{Files: files, Flavor: fakehttp.Busybox})
	if got := strings.Join(Explain(ctxFor(t, 20*time.Second), s.Addr, "1.26.3"), "; "); !strings.HasPrefix(got, "no Server header; keep-alive is off") {
		t.Errorf("busybox: %q", got)
	}

	// The nginx the fingerprint expects: nothing to explain.
	s = start(t, fakehttp.Options{Files: files})
	if got := Explain(ctxFor(t, 20*time.Second), s.Addr, "1.26.3"); len(got) != 0 {
		t.Errorf("stock nginx: %q", got)
	}

	// server_tokens off and gzip on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "nginx")
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Write([]byte("x"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	all := strings.Join(Explain(ctxFor(t, 20*time.Second), ln.Addr().String(), "1.26.3"), "; ")
	if !strings.Contains(all, "`Server: nginx` without a version (nginx with server_tokens off)") || !strings.Contains(all, "`Content-Encoding: gzip`") {
		t.Errorf("server_tokens off, gzip on: %q", all)
	}

	// Nothing listening: nothing to say.
	if got := Explain(ctxFor(t, 2*time.Second), "127.0.0.1:1", "1.26.3"); len(got) != 0 {
		t.Errorf("no server: %q", got)
	}
}

func TestDeviations(t *testing.T) {
	_, files := fixture(t)
	for _, c := range []struct {
		name string
		o    fakehttp.Options
		want string
	}{
		{"stock", fakehttp.Options{Files: files}, ""},
		{"another version is the binary's", fakehttp.Options{Files: files, Version: "1.28.3"}, ""},
		{"keepalive_timeout 0", fakehttp.Options{Files: files, KeepAliveRequests: 1}, DevKeepAliveOff},
	} {
		s := start(t, c.o)
		got, err := Deviations(ctxFor(t, 10*time.Second), s.Addr)
		if err != nil || strings.Join(got, ", ") != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}

	// gzip on, server_tokens off and an error page of its own.
	addr := serveConns(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			if req.URL.Path == "/" {
				c.Write([]byte("HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html\r\nConnection: keep-alive\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\nzz"))
				continue
			}
			page := "<html><body>gone fishing</body></html>\n"
			fmt.Fprintf(c, "HTTP/1.1 404 Not Found\r\nServer: nginx\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(page), page)
			return
		}
	})
	got, err := Deviations(ctxFor(t, 10*time.Second), addr)
	if want := []string{DevGzip, DevServerTokens, DevErrorPages}; err != nil || strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}
