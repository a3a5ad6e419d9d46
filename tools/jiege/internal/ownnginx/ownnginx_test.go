package ownnginx

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/u-root/u-root/pkg/cpio"

	"github.com/jiege-go/jiege/tools/jiege/internal/rootfs"
)

// newc builds a cpio archive of records.
func newc(t *testing.T, recs ...cpio.Record) []byte {
	var b bytes.Buffer
	w := cpio.Newc.Writer(&b)
	if err := cpio.WriteRecordsAndDirs(w, recs); err != nil {
		t.Fatal(err)
	}
	if err := cpio.WriteTrailer(w); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Archives one after the other, later entries replacing earlier ones;
// links resolved inside the tree, never on the host; names that climb
// out of the tree kept inside it.
func TestExtractNewc(t *testing.T) {
	host := t.TempDir()
	a := newc(t,
		cpio.StaticFile("etc/x.conf", "one", 0o644),
		cpio.Symlink("sbin", "/usr/sbin"),
		cpio.Symlink("escape", host),
	)
	b := newc(t,
		cpio.StaticFile("etc/x.conf", "two", 0o644),
		cpio.StaticFile("sbin/tool", "in usr/sbin", 0o755),
		cpio.StaticFile("escape/owned", "must stay in the tree", 0o644),
		cpio.StaticFile("../../up", "climbs", 0o644),
	)
	dir := t.TempDir()
	if err := extractNewc(append(append(a, 0, 0, 0, 0), b...), dir); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"etc/x.conf": "two", "usr/sbin/tool": "in usr/sbin", "up": "climbs"} {
		if got, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", rel, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(host, "owned")); err == nil {
		t.Error("an absolute link wrote outside the tree")
	}
	if got, err := os.ReadFile(filepath.Join(dir, host, "owned")); err != nil || string(got) != "must stay in the tree" {
		t.Errorf("absolute link not taken inside the tree: %q %v", got, err)
	}
	if err := extractNewc([]byte("not an archive"), t.TempDir()); err == nil {
		t.Error("garbage extracted")
	}
}

const debianConf = `user www-data;
worker_processes auto;
pid /run/nginx.pid;
error_log /var/log/nginx/error.log;
include /etc/nginx/modules-enabled/*.conf;
events { worker_connections 768; }
http {
	include mime.types;
	sendfile on;
	keepalive_timeout 0;
	access_log /var/log/nginx/access.log;
	log_format x '$remote_addr "${request}" ;{}';
	include /etc/nginx/sites-enabled/*;
}
`

const siteConf = `server {
	listen 80 default_server;
	listen [::]:80 default_server ipv6only=on;
	listen 8443;
	root /var/www/html; # the site
	index index.html;
}
`

func TestRewriteConf(t *testing.T) {
	tree := t.TempDir()
	for rel, text := range map[string]string{
		"etc/nginx/mime.types":                   "types { text/html html; }\n",
		"etc/nginx/sites-enabled/default":        siteConf,
		"etc/nginx/modules-enabled/.placeholder": "",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(tree, rel)), 0o755)
		os.WriteFile(filepath.Join(tree, rel), []byte(text), 0o644)
	}
	free := 9000
	got, err := rewriteConf(debianConf, confRewrite{tree: tree, confDir: "/etc/nginx", guestPort: 80, port: 7777,
		free: func() (int, error) { free++; return free, nil }, tmp: "/T", asRoot: true, without: map[string]bool{"http_uwsgi": true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(got)
	for _, want := range []string{
		"daemon off;\npid /T/nginx.pid;\nerror_log /T/error.log;\nuser root root;\nworker_processes auto;\n",
		"    client_body_temp_path /T/client_body_temp_path;\n    proxy_temp_path /T/proxy_temp_path;\n    fastcgi_temp_path /T/fastcgi_temp_path;\n    scgi_temp_path /T/scgi_temp_path;\n",
		"    types {\n        text/html html;\n    }\n",
		"    keepalive_timeout 0;\n    access_log /T/access.log;\n",
		`log_format x '$remote_addr "${request}" ;{}';`,
		"        listen 127.0.0.1:7777 default_server;\n        listen 127.0.0.1:9001;\n        root /var/www/html;\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten configuration lacks %q", want)
		}
	}
	for _, gone := range []string{"www-data", "/run/nginx.pid", "/var/log", "ipv6only", "include", "uwsgi"} {
		if strings.Contains(got, gone) {
			t.Errorf("rewritten configuration still has %q", gone)
		}
	}
	if _, err := rewriteConf("http { server { listen 8080; } }", confRewrite{tree: tree, guestPort: 80, free: func() (int, error) { return 1, nil }}); err == nil {
		t.Error("no listen on the guest port: no error")
	}
	if _, err := rewriteConf("http { server {", confRewrite{tree: tree}); err == nil {
		t.Error("unterminated block: no error")
	}
}

// Debian's nginx from jiege's root filesystem, packed as an attempt
// would: gzip'd as its -initrd with its own configuration appended
// (keep-alive off), and embedded in a kernel image. Find extracts it
// from both; Inspect and Official name it Debian's build; a changed
// binary is not; Start serves the attempt's files with its
// configuration.
func TestOwnNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the root filesystem (cached) and runs nginx under qemu-riscv64")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, err := rootfs.Build(ctx, rootfs.Options{Flavor: rootfs.Ours})
	if err != nil {
		t.Fatal(err)
	}
	archive, err := os.ReadFile(img.CPIO)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile(filepath.Join(img.Dir, "etc/nginx/nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	own := strings.Replace(string(conf), "keepalive_timeout 65;", "keepalive_timeout 0;", 1)
	if own == string(conf) {
		t.Fatalf("no keepalive_timeout 65 in %s", conf)
	}
	archive = append(archive, newc(t, cpio.StaticFile("etc/nginx/nginx.conf", own, 0o644))...)
	dir := t.TempDir()
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	zw.Write(archive)
	zw.Close()
	initrd := filepath.Join(dir, "initrd.gz")
	os.WriteFile(initrd, gz.Bytes(), 0o644)
	noise := make([]byte, 8192)
	rand.Read(noise)
	kernel := filepath.Join(dir, "kernel.bin")
	os.WriteFile(kernel, append(noise, archive...), 0o644)

	if _, err := Find([]Source{{Path: filepath.Join(dir, "none"), Option: "-bios"}, {Path: img.Kernel + "-missing", Option: "-kernel"}}); err == nil {
		t.Error("found nginx in files that do not exist")
	}
	emb, err := Find([]Source{{Path: kernel, Option: "-kernel"}})
	if err != nil {
		t.Fatal(err)
	}
	emb.Remove()
	if emb.Offset != int64(len(noise)) || emb.Nginx != "usr/sbin/nginx" {
		t.Errorf("embedded: offset %d, nginx %s", emb.Offset, emb.Nginx)
	}
	tree, err := Find([]Source{{Path: initrd, Option: "-initrd"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Remove()
	b, err := tree.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != img.NginxVersion || b.ConfPath != "/etc/nginx/nginx.conf" {
		t.Errorf("nginx -V: %+v", b)
	}
	deb := Debian{Version: img.NginxVersion, Binary: filepath.Join(img.Dir, "usr/sbin/nginx")}
	if o := tree.Official(b, deb); !strings.HasPrefix(o, "the official Debian build (sha256 ") {
		t.Errorf("official: %s", o)
	}
	if o := tree.Official(b, Debian{Version: "9.9.9", Binary: deb.Binary}); !strings.Contains(o, "unknown: nginx "+img.NginxVersion) || !strings.Contains(o, "look like a Debian build") {
		t.Errorf("another version: %s", o)
	}

	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	stop, err := tree.Start(ctx, b, 80, port)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get("http://127.0.0.1:" + strconv.Itoa(port) + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	index, _ := os.ReadFile(filepath.Join(img.Dir, "var/www/html/index.html"))
	if resp.StatusCode != 200 || resp.Header.Get("Server") != "nginx/"+img.NginxVersion || !resp.Close || !bytes.Equal(body, index) {
		t.Errorf("GET /: %d %q close=%v, body equal %v", resp.StatusCode, resp.Header.Get("Server"), resp.Close, bytes.Equal(body, index))
	}

	// One changed byte is no longer Debian's binary.
	p := filepath.Join(tree.Dir, tree.Nginx)
	bin, _ := os.ReadFile(p)
	bin[len(bin)-1] ^= 1
	os.WriteFile(p, bin, 0o755)
	if o := tree.Official(b, deb); !strings.HasPrefix(o, "not Debian's build: nginx "+img.NginxVersion) {
		t.Errorf("changed binary: %s", o)
	}
}

// Debian's nginx, its loader and libraries, its configuration and mime
// types, laid one after the other at odd offsets in a kernel image as
// include_bytes! does: carved, named Debian's build, and serving the
// attempt's "/" under qemu-riscv64 with that configuration.
func TestOwnNginxCarved(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the root filesystem (cached) and runs nginx under qemu-riscv64")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, err := rootfs.Build(ctx, rootfs.Options{Flavor: rootfs.Ours})
	if err != nil {
		t.Fatal(err)
	}
	kernel := make([]byte, 4097)
	rand.Read(kernel)
	for _, rel := range []string{"usr/sbin/nginx", "usr/lib/riscv64-linux-gnu/ld-linux-riscv64-lp64d.so.1", "usr/lib/riscv64-linux-gnu/libc.so.6",
		"usr/lib/riscv64-linux-gnu/libcrypt.so.1", "usr/lib/riscv64-linux-gnu/libpcre2-8.so.0", "usr/lib/riscv64-linux-gnu/libssl.so.3",
		"usr/lib/riscv64-linux-gnu/libcrypto.so.3", "usr/lib/riscv64-linux-gnu/libz.so.1", "usr/lib/riscv64-linux-gnu/libzstd.so.1", "etc/nginx/nginx.conf", "etc/nginx/mime.types"} {
		b, err := os.ReadFile(filepath.Join(img.Dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		kernel = append(append(kernel, 0, 3, 5), b...)
	}
	path := filepath.Join(t.TempDir(), "kernel.bin")
	os.WriteFile(path, kernel, 0o644)
	tree, err := Find([]Source{{Path: path, Option: "-kernel"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Remove()
	if !tree.Carved {
		t.Fatalf("not carved: %+v", tree)
	}
	b, err := tree.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deb := Debian{Version: img.NginxVersion, Binary: filepath.Join(img.Dir, "usr/sbin/nginx")}
	if o := tree.Official(b, deb); !strings.HasPrefix(o, "the official Debian build (sha256 ") {
		t.Errorf("official: %s", o)
	}
	index := []byte("<p>the attempt's own page</p>\n")
	mtime := time.Unix(1700000000, 0)
	if err := tree.PlaceIndex(b, 80, index, mtime); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	stop, err := tree.Start(ctx, b, 80, port)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get("http://127.0.0.1:" + strconv.Itoa(port) + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Server") != "nginx/"+img.NginxVersion || resp.Header.Get("Last-Modified") != mtime.UTC().Format(http.TimeFormat) || !bytes.Equal(body, index) {
		t.Errorf("GET /: %d %q %q %q", resp.StatusCode, resp.Header.Get("Server"), resp.Header.Get("Last-Modified"), body)
	}
}
