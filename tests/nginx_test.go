package tests

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/u-root/u-root/pkg/cpio"
)

// oursRootfs builds jiege's nginx root filesystem for our kernel (Debian's
// riscv64 nginx, fetched with apt) and returns the archive and the tree.
func oursRootfs(t *testing.T) (archive, tree string) {
	t.Helper()
	archive = filepath.Join(t.TempDir(), "rootfs.cpio")
	cmd := exec.Command("go", "run", "./tools/jiege", "rootfs", "--quiet", "--out", archive)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jiege rootfs: %v\n%s", err, out)
	}
	trees, _ := filepath.Glob(filepath.Join(repoRoot, "build/rootfs/ours-*/tree"))
	if len(trees) != 1 {
		t.Fatalf("want one ours rootfs tree, found %v", trees)
	}
	return archive, trees[0]
}

// TestNginx boots Debian's unmodified nginx on our kernel with jiege's
// root filesystem as it is (/init is nginx; master process, one worker as
// www-data) and checks real responses: the index page, nginx's own 404 page
// and its error log, and 1 MiB and 64 MiB files by sha256.
func TestNginx(t *testing.T) {
	initrd, tree := oursRootfs(t)
	port, console := startKernelWith(t, "512M", "", initrd, 80)
	client := &http.Client{Timeout: 2 * time.Minute}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	var resp *http.Response
	var err error
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err = client.Get(url + "/")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer from nginx: %v\nconsole:\n%s", err, console.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	index, _ := os.ReadFile(filepath.Join(tree, "var/www/html/index.html"))
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Server"), "nginx/1.") || !bytes.Equal(body, index) {
		t.Fatalf("GET /: %d, Server %q, body %q", resp.StatusCode, resp.Header.Get("Server"), body)
	}
	resp, err = client.Get(url + "/no/such/page")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(body), "<center>nginx/1.") {
		t.Errorf("GET missing page: %d %q", resp.StatusCode, body)
	}
	for _, name := range []string{"1m.bin", "64m.bin"} {
		want, err := os.ReadFile(filepath.Join(tree, "var/www/html", name))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Get(url + "/" + name)
		if err != nil {
			t.Fatalf("GET %s: %v", name, err)
		}
		h := sha256.New()
		n, err := io.Copy(h, resp.Body)
		resp.Body.Close()
		wantSum := sha256.Sum256(want)
		if err != nil || n != int64(len(want)) || hex.EncodeToString(h.Sum(nil)) != hex.EncodeToString(wantSum[:]) {
			t.Errorf("GET %s: %d of %d bytes, %v, sha256 mismatch", name, n, len(want), err)
		}
	}
	if !strings.Contains(console.String(), `open() "/var/www/html/no/such/page" failed`) {
		t.Errorf("nginx's error log on the console lacks the missing page:\n%s", console.String())
	}
	if !regexp.MustCompile(`\[error\] [2-9]#`).MatchString(console.String()) {
		t.Errorf("the request was not served by a worker process (pid > 1):\n%s", console.String())
	}
}

// proxyConf is an nginx.conf with the front end on [::]:80 taking IPv4 too
// (the host reaches it through hostfwd over IPv4) and two backends inside
// the guest, one on 127.0.0.1 and one on ::1, reached with proxy_pass.
const proxyConf = `user www-data;
worker_processes 2;
master_process on;
daemon off;
pid /run/nginx.pid;
error_log stderr;
events {
    worker_connections 256;
}
http {
    include /etc/nginx/mime.types;
    access_log off;
    server {
        listen [::]:80 ipv6only=off;
        location /v4/ {
            proxy_pass http://127.0.0.1:8081/;
        }
        location /v6/ {
            proxy_pass http://[::1]:8082/;
        }
    }
    server {
        listen 127.0.0.1:8081;
        listen [::1]:8082;
        root /var/www/html;
        add_header X-Backend $server_addr:$server_port;
    }
}
`

// TestNginxLoopbackProxy runs Debian's nginx with a dual-stack listener on
// [::]:80 that proxies to backends in the same guest over 127.0.0.1 and ::1:
// the loopback interface and IPv6 sockets under a real program.
func TestNginxLoopbackProxy(t *testing.T) {
	archive, tree := oursRootfs(t)
	base, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	// A second archive replaces nginx.conf (later archives override).
	var conf bytes.Buffer
	w := cpio.Newc.Writer(&conf)
	if err := cpio.WriteRecords(w, []cpio.Record{cpio.StaticFile("etc/nginx/nginx.conf", proxyConf, 0o644)}); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	initrd := filepath.Join(t.TempDir(), "initrd.cpio")
	if err := os.WriteFile(initrd, append(base, conf.Bytes()...), 0o644); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(tree, "var/www/html/index.html"))
	if err != nil {
		t.Fatal(err)
	}
	port, console := startKernelWith(t, "512M", "", initrd, 80)
	client := &http.Client{Timeout: time.Minute}
	get := func(path string) (*http.Response, []byte, error) {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp, body, err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, _, err := get("/v4/index.html")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer from nginx: %v\nconsole:\n%s", err, console.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, c := range []struct{ path, backend string }{
		{"/v4/index.html", "127.0.0.1:8081"},
		{"/v6/index.html", "::1:8082"},
	} {
		resp, body, err := get(c.path)
		if err != nil {
			t.Fatalf("GET %s: %v\nconsole:\n%s", c.path, err, console.String())
		}
		if resp.StatusCode != 200 || !bytes.Equal(body, index) || resp.Header.Get("X-Backend") != c.backend {
			t.Errorf("GET %s: %d, X-Backend %q (want %q), %d bytes (want the index, %d)",
				c.path, resp.StatusCode, resp.Header.Get("X-Backend"), c.backend, len(body), len(index))
		}
	}
	if t.Failed() {
		t.Logf("console:\n%s", console.String())
	}
}
