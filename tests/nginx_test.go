package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jiege-go/jiege/qemu"
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
	recordProgram(t)
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

// TestNginxFreshConnectionsSMP boots Debian's nginx on four harts
// (worker_processes auto: four workers, each with its own epoll instance
// on the shared listening socket) and makes 3000 requests for /, each on a
// fresh connection, 50 at a time: every one must be answered in full.
// Until epoll's notification stopped taking the instance's lock, a
// worker's epoll_ctl on one hart and netstack's notification of a new
// connection on another deadlocked, and nginx stopped answering for good,
// usually within the first thousand connections (DESIGN.md, SMP).
func TestNginxFreshConnectionsSMP(t *testing.T) {
	nginxLoadSMP(t, ownFirmware, "index.html", "/", 3000, 50)
}

// TestNginxConcurrentDownloadsSMP fetches a 1 MiB file on 100 connections
// at once from nginx on four harts; each body must arrive whole, and no
// connection may go a minute without data. While sockets used netstack's
// TCP_CORK (nginx's tcp_nopush), a few connections in every such round
// never got their first full segments sent and stalled for good.
func TestNginxConcurrentDownloadsSMP(t *testing.T) {
	nginxLoadSMP(t, ownFirmware, "1m.bin", "/1m.bin", 100, 100)
}

// nginxLoadSMP boots nginx with jiege's root filesystem on four harts and
// makes total requests for path, each on a fresh connection, concurrency
// at a time; every answer must be the file name of the web root. boot
// is the firmware and kernel (ownFirmware, sbiFirmware).
func nginxLoadSMP(t *testing.T, boot []string, name, path string, total, concurrency int) {
	initrd, tree := oursRootfs(t)
	want, err := os.ReadFile(filepath.Join(tree, "var/www/html", name))
	if err != nil {
		t.Fatal(err)
	}
	port, console, _, pid := startKernelFirmware(t, boot, 10*time.Minute, "512M", "", initrd, 80, "4")
	url := fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
	// A whole answer may take minutes on a busy host; a connection that
	// gets nothing for a minute has stalled.
	dialer := &net.Dialer{Timeout: time.Minute}
	client := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return idleTimeoutConn{c, time.Minute}, nil
		},
	}}
	get := func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return fmt.Errorf("%v after %d body bytes", err, len(body))
		}
		if resp.StatusCode != 200 || !bytes.Equal(body, want) {
			return fmt.Errorf("status %d, a %d-byte body that is not the %d bytes of %s", resp.StatusCode, len(body), len(want), name)
		}
		return nil
	}
	for deadline := time.Now().Add(2 * time.Minute); get() != nil; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no answer from nginx:\n%s", console.String())
		}
	}
	if !strings.Contains(console.String(), "4 of 4 harts running") {
		t.Fatalf("the kernel does not run four harts:\n%s", console.String())
	}
	// QEMU's hostfwd listens with a backlog of 1: many connects at once
	// would overflow the host's accept queue whatever the guest does.
	if err := qemu.WidenBacklog(pid, port, qemu.Backlog); err != nil {
		t.Fatalf("widening the hostfwd backlog: %v", err)
	}
	var next, failed atomic.Int64
	var first sync.Once
	var firstErr error
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(total) && failed.Load() == 0 {
				if err := get(); err != nil {
					failed.Add(1)
					first.Do(func() { firstErr = err })
				}
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d requests for %s failed, the first: %v\nconsole:\n%s", n, total, path, firstErr, console.String())
	}
}

// idleTimeoutConn fails a read that waits longer than idle.
type idleTimeoutConn struct {
	net.Conn
	idle time.Duration
}

func (c idleTimeoutConn) Read(b []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	return c.Conn.Read(b)
}

// TestNginxWorkers runs nginx as Linux runs it: worker_processes 4, a
// reload, a worker killed with SIGKILL and a graceful quit. The signals come
// from inside the guest: /init is testdata/nginxctl.c, which starts nginx,
// counts the workers in /proc and, on each cue the host sends as a request
// for /cue/NAME, rewrites the configuration and runs `nginx -s reload`,
// kills a worker, or runs `nginx -s quit`; it prints the pids it sees. The
// host checks every response's X-Phase (the configuration that answered)
// and X-Worker (nginx's $pid: the serving process) against them.
func TestNginxWorkers(t *testing.T) {
	recordProgram(t)
	rootfs, tree := oursRootfs(t)
	ctl := crossCompile(t, "nginxctl.c")
	initrd := withFiles(t, rootfs, map[string][]byte{"nginxctl": ctl})
	port, console, exited := startKernelExit(t, 5*time.Minute, "512M", "init=/nginxctl", initrd, 80)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}

	waitFor := func(pattern string) []string {
		t.Helper()
		re := regexp.MustCompile(`(?m)^` + pattern + `\r?$`)
		deadline := time.Now().Add(3 * time.Minute)
		for {
			c := console.String()
			if m := re.FindStringSubmatch(c); m != nil {
				return m
			}
			if strings.Contains(c, "nginxctl: FAIL") || time.Now().After(deadline) {
				t.Fatalf("no line %q on the console:\n%s", pattern, c)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	pids := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, p := range strings.Fields(s) {
			m[p] = true
		}
		return m
	}
	// fetch GETs path on a fresh connection and checks the status, the
	// phase and that one of workers served it; it returns the worker's pid.
	fetch := func(path string, status int, phase string, workers map[string]bool) string {
		t.Helper()
		resp, err := client.Get(url + path)
		if err != nil {
			t.Fatalf("GET %s: %v\nconsole:\n%s", path, err, console.String())
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		w := resp.Header.Get("X-Worker")
		if resp.StatusCode != status || resp.Header.Get("X-Phase") != phase || !workers[w] {
			t.Fatalf("GET %s: status %d, X-Phase %q, X-Worker %q; want %d, %q, one of %v",
				path, resp.StatusCode, resp.Header.Get("X-Phase"), w, status, phase, workers)
		}
		return w
	}
	serve := func(phase string, workers map[string]bool) {
		t.Helper()
		served := map[string]bool{}
		for i := 0; i < 8; i++ {
			served[fetch("/", 200, phase, workers)] = true
		}
		fetch("/phase/"+phase, 200, phase, workers)
		t.Logf("phase %s: 8 requests served by workers %v", phase, served)
	}

	m := waitFor(`nginxctl: master (\d+) workers ((?:\d+ ?){4}) uid (\d+)`)
	master, first := m[1], pids(m[2])
	if len(first) != 4 || first[master] || m[3] != "33" {
		t.Fatalf("want 4 workers other than master %s running as www-data (33): %q", master, m[0])
	}
	serve("one", first)
	fetch("/phase/two", 404, "one", first)

	// startDownload GETs the 64 MiB file and reads its first MiB; then the
	// host stops reading, so the serving worker cannot finish before
	// finishDownload reads the rest and checks its sha256.
	want, err := os.ReadFile(filepath.Join(tree, "var/www/html/64m.bin"))
	if err != nil {
		t.Fatal(err)
	}
	wantSum := sha256.Sum256(want)
	type download struct {
		resp   *http.Response
		sum    hash.Hash
		worker string
	}
	startDownload := func(phase string, workers map[string]bool) download {
		t.Helper()
		resp, err := client.Get(url + "/64m.bin")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		d := download{resp, sha256.New(), resp.Header.Get("X-Worker")}
		if resp.StatusCode != 200 || resp.Header.Get("X-Phase") != phase || !workers[d.worker] {
			t.Fatalf("GET /64m.bin: %d, X-Phase %q, X-Worker %q", resp.StatusCode, resp.Header.Get("X-Phase"), d.worker)
		}
		if _, err := io.CopyN(d.sum, resp.Body, 1<<20); err != nil {
			t.Fatal(err)
		}
		return d
	}
	finishDownload := func(d download, across string) {
		t.Helper()
		n, err := io.Copy(d.sum, d.resp.Body)
		if err != nil || n+1<<20 != int64(len(want)) || !bytes.Equal(d.sum.Sum(nil), wantSum[:]) {
			t.Fatalf("download across the %s: %d of %d bytes, %v, or sha256 mismatch", across, n+1<<20, len(want), err)
		}
	}

	// Reload with a download in flight: its worker must finish it.
	d := startDownload("one", first)
	fetch("/cue/reload", 404, "one", first)
	m = waitFor(`nginxctl: reloaded: workers ((?:\d+ ?){4}); old workers still running: ([\d ]*)`)
	second := pids(m[1])
	for w := range second {
		if first[w] || w == master {
			t.Fatalf("worker %s after reload is not new: %q", w, m[0])
		}
	}
	if !pids(m[2])[d.worker] {
		t.Fatalf("worker %s, serving the download, did not outlive the reload: %q", d.worker, m[0])
	}
	// nginx's own log: the master got SIGHUP with the sender's pid
	// (siginfo), and each old worker closed its listening socket. Only then
	// must every new connection go to a new worker: the master signals the
	// old ones 100 ms after it started the new ones.
	signaller := waitFor(`.*\[notice\] (\d+)#\d+: signal process started`)[1]
	if from := waitFor(`.*\[notice\] ` + master + `#` + master + `: signal 1 \(SIGHUP\) received from (\d+), reconfiguring`)[1]; from != signaller {
		t.Fatalf("SIGHUP from %s, want %s (nginx -s reload)", from, signaller)
	}
	for w := range first {
		waitFor(`.*\[notice\] ` + w + `#` + w + `: gracefully shutting down`)
	}
	serve("two", second)
	if strings.Contains(console.String(), "nginxctl: old workers gone") {
		t.Fatalf("the old workers exited with the download unfinished:\n%s", console.String())
	}
	finishDownload(d, "reload")
	waitFor(`nginxctl: old workers gone`)
	serve("two", second)

	// A worker killed with SIGKILL is replaced.
	fetch("/cue/kill", 404, "two", second)
	m = waitFor(`nginxctl: killed (\d+): workers ((?:\d+ ?){4})`)
	third := pids(m[2])
	if !second[m[1]] || third[m[1]] {
		t.Fatalf("killed %s, which was not a worker or is still one: %q", m[1], m[0])
	}
	respawned := 0
	for w := range third {
		if !second[w] {
			respawned++
		}
	}
	if respawned != 1 {
		t.Fatalf("want one new worker after the kill, have %d: %q", respawned, m[0])
	}
	waitFor(`.*\[alert\] ` + master + `#` + master + `: worker process ` + m[1] + ` exited on signal 9`)
	serve("two", third)

	// Graceful quit, again with a download in flight: the worker finishes
	// it, then the master exits 0 and so does init; the guest powers off.
	d = startDownload("two", third)
	fetch("/cue/quit", 404, "two", third)
	waitFor(`nginxctl: nginx -s quit exited 0`)
	time.Sleep(time.Second)
	if strings.Contains(console.String(), "nginxctl: master exited") {
		t.Fatalf("the master exited with the download unfinished:\n%s", console.String())
	}
	finishDownload(d, "quit")
	waitFor(`.*\[notice\] ` + master + `#` + master + `: signal 3 \(SIGQUIT\) received from \d+, shutting down`)
	waitFor(`nginxctl: master exited 0`)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("QEMU: %v, want exit status 0\n%s", err, console.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("the guest did not power off after quit:\n%s", console.String())
	}
	if !strings.Contains(console.String(), "kernel: init exited with status 0") {
		t.Errorf("no power-off line:\n%s", console.String())
	}
	for _, l := range strings.Split(console.String(), "\n") {
		if strings.HasPrefix(l, "nginxctl: ") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

// proxyConf is an nginx.conf with 4 workers, the front end on [::]:80
// taking IPv4 too (the host reaches it through hostfwd over IPv4; /dual/
// comes back to it over ::1) and two backends inside the guest, one on
// 127.0.0.1 and one on ::1, reached with proxy_pass. X-Front names the
// front end's local address of each connection.
const proxyConf = `user www-data;
worker_processes 4;
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
        add_header X-Front $server_addr always;
        location /dual/ {
            proxy_pass http://[::1]:80/v4/;
        }
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

// TestNginxLoopbackProxy runs Debian's nginx with 4 workers and a
// dual-stack listener on [::]:80, which the host reaches over IPv4 and
// nginx itself over ::1, that proxies to backends in the same guest over
// 127.0.0.1 and ::1: the loopback interface and IPv6 sockets under a real
// program.
func TestNginxLoopbackProxy(t *testing.T) {
	recordProgram(t)
	archive, tree := oursRootfs(t)
	initrd := withFiles(t, archive, map[string][]byte{"etc/nginx/nginx.conf": []byte(proxyConf)})
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
	// The host's IPv4 connections reach [::]:80 as IPv4-mapped addresses;
	// /dual/ adds the same listener's answer to an IPv6 connection from ::1.
	const mapped = "::ffff:10.0.2.15"
	for _, c := range []struct {
		path, backend string
		front         []string
	}{
		{"/v4/index.html", "127.0.0.1:8081", []string{mapped}},
		{"/v6/index.html", "::1:8082", []string{mapped}},
		{"/dual/index.html", "127.0.0.1:8081", []string{"::1", mapped}},
	} {
		resp, body, err := get(c.path)
		if err != nil {
			t.Fatalf("GET %s: %v\nconsole:\n%s", c.path, err, console.String())
		}
		front := resp.Header.Values("X-Front")
		if resp.StatusCode != 200 || !bytes.Equal(body, index) || resp.Header.Get("X-Backend") != c.backend ||
			strings.Join(front, " ") != strings.Join(c.front, " ") {
			t.Errorf("GET %s: %d, X-Backend %q (want %q), X-Front %q (want %q), %d bytes (want the index, %d)",
				c.path, resp.StatusCode, resp.Header.Get("X-Backend"), c.backend, front, c.front, len(body), len(index))
		}
	}
	if t.Failed() {
		t.Logf("console:\n%s", console.String())
	}
}
