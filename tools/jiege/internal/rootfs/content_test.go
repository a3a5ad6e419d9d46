package rootfs

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func TestDeployedNginxConf(t *testing.T) {
	conf := etcFiles()["/etc/nginx/nginx.conf"]
	for _, want := range []string{
		"user www-data;", "worker_processes auto;", "master_process on;", "daemon off;",
		"pid /run/nginx.pid;", "error_log stderr;", "sendfile on;", "tcp_nopush on;",
		"keepalive_timeout 65;", "access_log /var/log/nginx/access.log;", "listen 80 default_server;",
		"root /var/www/html;", "location /files/ {\n            autoindex on;",
		"include /etc/nginx/mime.types;",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q:\n%s", want, conf)
		}
	}
	for _, bad := range []string{"sites-enabled", "conf.d", "temp_path"} {
		if strings.Contains(conf, bad) {
			t.Errorf("nginx.conf has %q", bad)
		}
	}
	if strings.Count(conf, "{") != strings.Count(conf, "}") {
		t.Errorf("unbalanced braces:\n%s", conf)
	}
}

func TestOracleNginxConf(t *testing.T) {
	conf := NginxConf(ConfParams{WorkerProcesses: "1", Listen: "127.0.0.1:8081", Pid: "/t/pid", ErrorLog: "/t/e",
		AccessLog: "/t/a", Root: "/tree/var/www/html", MimeTypes: "/tree/etc/nginx/mime.types", TempDir: "/t",
		ExactFiles: map[string]string{"/nonce-1.txt": "/t/nonce"}})
	for _, want := range []string{"listen 127.0.0.1:8081;", "client_body_temp_path /t/client_body;", "scgi_temp_path /t/scgi;",
		"location = /nonce-1.txt {\n            root /t/nonce;", "pid /t/pid;", "error_log /t/e;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("oracle conf lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "user ") {
		t.Errorf("no user given, but conf has a user directive:\n%s", conf)
	}
}

func TestBigFileDeterministic(t *testing.T) {
	f := bigFile{path: "/x", size: 3<<20 + 5, seed: "s"}
	var a, b strings.Builder
	s1, err := f.write(&a)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := f.write(&b)
	sum := sha256.Sum256([]byte(a.String()))
	if s1 != s2 || s1 != hex.EncodeToString(sum[:]) || int64(a.Len()) != f.size {
		t.Fatalf("not deterministic or wrong sum: %s %s len %d", s1, s2, a.Len())
	}
	g := f
	g.seed = "t"
	if s3, _ := g.write(&strings.Builder{}); s3 == s1 {
		t.Error("different seeds gave the same content")
	}
}

func TestNonceFresh(t *testing.T) {
	a, b := newNonce(), newNonce()
	if a.URLPath == b.URLPath || string(a.Content) == string(b.Content) {
		t.Fatal("two nonces are equal")
	}
	if !strings.HasPrefix(a.URLPath, "/nonce-") || a.Size != int64(len(a.Content)) {
		t.Fatalf("bad nonce %+v", a)
	}
}

func TestCacheKey(t *testing.T) {
	e := LockEntry{Set: setOurs, Package: "nginx", Version: "1", Arch: "riscv64", SHA256: sumA}
	b := &builder{o: Options{Flavor: Ours}, entries: []LockEntry{e}}
	k := b.key()
	if k != b.key() {
		t.Fatal("key not stable")
	}
	e2 := e
	e2.Version = "2"
	if (&builder{o: Options{Flavor: Ours}, entries: []LockEntry{e2}}).key() == k {
		t.Error("a new package version keeps the key")
	}
	if (&builder{o: Options{Flavor: Linux}, entries: []LockEntry{e}}).key() == k {
		t.Error("the flavour is not in the key")
	}
	// Init and Extra only select an archive variant, not a new tree.
	if (&builder{o: Options{Flavor: Ours, Init: []byte("x")}, entries: []LockEntry{e}}).key() != k {
		t.Error("Init changed the tree key")
	}
	if variantKey(nil) != "base" || variantKey(map[string]override{"init": {data: []byte("a")}}) == variantKey(map[string]override{"init": {data: []byte("b")}}) {
		t.Error("variant keys do not follow the overrides")
	}
}
