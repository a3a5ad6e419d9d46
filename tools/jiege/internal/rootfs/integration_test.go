package rootfs

import (
	"bytes"
	"context"
	"debug/elf"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// freePort asks the kernel for a loopback port that is free right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp, body
}

// TestBuildFromMirror builds both flavours from the real Debian mirror (the
// first time; later runs use the cache in <module>/build/rootfs), checks the
// tree, and serves it with the qemu-user oracle.
func TestBuildFromMirror(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var log bytes.Buffer
	img, err := Build(ctx, Options{Flavor: Ours, Nonce: true, Log: &log})
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(img.CPIO)

	// nginx is a RISC-V ELF using glibc's loader; libzstd is there.
	f, err := elf.Open(filepath.Join(img.Dir, "usr/sbin/nginx"))
	if err != nil {
		t.Fatal(err)
	}
	var interp string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, _ := io.ReadAll(p.Open())
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	f.Close()
	if f.Machine != elf.EM_RISCV || interp != "/lib/ld-linux-riscv64-lp64d.so.1" {
		t.Errorf("nginx: machine %v, interpreter %q", f.Machine, interp)
	}
	if _, err := os.Stat(filepath.Join(img.Dir, "lib/ld-linux-riscv64-lp64d.so.1")); err != nil {
		t.Errorf("loader not reachable through /lib: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(img.Dir, "usr/lib/riscv64-linux-gnu/libzstd.so.1*")); len(m) == 0 {
		t.Error("libzstd missing")
	}
	if !strings.HasPrefix(img.NginxVersion, "1.26.") {
		t.Errorf("nginx version %q", img.NginxVersion)
	}

	// Every package file in the cache matches the lock.
	lk, err := loadLock(sourceLockFile())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range lk.For(Ours) {
		if err := e.VerifyFile(filepath.Join(DefaultBuildDir(), "rootfs", "debs", e.Filename())); err != nil {
			t.Error(err)
		}
	}

	// The archive holds the tree and, appended, the nonce.
	recs, archives := readArchive(t, img.CPIO)
	if archives != 2 {
		t.Errorf("%d archives in %s, want base + nonce", archives, img.CPIO)
	}
	for _, name := range []string{"usr/sbin/nginx", "etc/nginx/nginx.conf", "var/www/html/64m.bin", "var/www/html" + img.Nonce.URLPath} {
		if _, ok := recs[name]; !ok {
			t.Errorf("%s missing from the archive", name)
		}
	}

	// A second build is served from the cache, and a new nonce does not
	// rebuild the base archive.
	start := time.Now()
	img2, err := Build(ctx, Options{Flavor: Ours, Nonce: true})
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(img2.CPIO)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cached build took %v", d)
	}
	if img2.Nonce.URLPath == img.Nonce.URLPath {
		t.Error("second build reused the nonce")
	}
	base := filepath.Join(filepath.Dir(img.Dir), "rootfs-base.cpio")
	st1, err := os.Stat(base)
	if err != nil {
		t.Fatal(err)
	}
	if st1.ModTime().After(start) {
		t.Error("base archive rebuilt for a new nonce")
	}

	// The oracle serves our content with Debian's nginx.
	port := freePort(t)
	stop, err := StartOracle(ctx, img, port)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	resp, body := get(t, url+"/index.html")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Server"), "nginx/1.26.") {
		t.Errorf("index: %s, Server %q", resp.Status, resp.Header.Get("Server"))
	}
	for _, file := range img.Files {
		if file.Content != nil {
			if _, b := get(t, url+file.URLPath); !bytes.Equal(b, file.Content) {
				t.Errorf("%s: content differs", file.URLPath)
			}
		}
	}
	if _, b := get(t, url+img.Nonce.URLPath); !bytes.Equal(b, img.Nonce.Content) {
		t.Errorf("nonce %s not served byte-exact", img.Nonce.URLPath)
	}
	if resp, _ := get(t, url+"/docs/missing.html"); resp.StatusCode != 404 {
		t.Errorf("missing path: %s, want 404", resp.Status)
	}
	if resp, b := get(t, url+"/files/"); resp.StatusCode != 200 || !strings.Contains(string(b), "Index of /files/") {
		t.Errorf("autoindex: %s %q", resp.Status, b)
	}
	if resp, _ := get(t, url+"/"); resp.StatusCode != 200 || !strings.Contains(string(body), "Jiege") {
		t.Errorf("/: %s", resp.Status)
	}
	stopped = true
	if err := stop(); err != nil {
		t.Error(err)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
		c.Close()
		t.Error("the oracle still listens after stop")
	}

	t.Run("linux", func(t *testing.T) {
		img, err := Build(ctx, Options{Flavor: Linux, Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		if err := checkImage(img.Kernel); err != nil {
			t.Error(err)
		}
		want := map[string]bool{"virtio_mmio": true, "failover": true, "net_failover": true, "virtio_net": true}
		for _, m := range img.Modules {
			delete(want, m)
		}
		if len(want) != 0 {
			t.Errorf("modules %v lack %v", img.Modules, want)
		}
		recs, _ := readArchive(t, img.CPIO)
		init := content(t, recs["init"])
		for _, m := range img.Modules {
			if !strings.Contains(init, "/"+m+".ko") {
				t.Errorf("/init does not load %s:\n%s", m, init)
			}
		}
		var kos int
		for name := range recs {
			if strings.HasSuffix(name, ".ko") {
				kos++
			}
		}
		if kos != len(img.Modules) {
			t.Errorf("%d .ko files in the archive, want %d", kos, len(img.Modules))
		}
		for _, name := range []string{"usr/bin/busybox", "dev/console", "usr/sbin/nginx"} {
			if _, ok := recs[name]; !ok {
				t.Errorf("%s missing", name)
			}
		}
		// A negative control's /init replaces ours in its own archive only.
		ctl, err := Build(ctx, Options{Flavor: Linux, Init: []byte("#!/usr/bin/busybox sh\nexec /usr/bin/busybox httpd -f\n")})
		if err != nil {
			t.Fatal(err)
		}
		if ctl.CPIO == img.CPIO || ctl.Dir != img.Dir {
			t.Errorf("variant archive %s, base %s; trees %s, %s", ctl.CPIO, img.CPIO, ctl.Dir, img.Dir)
		}
		if recs, _ := readArchive(t, ctl.CPIO); !strings.Contains(content(t, recs["init"]), "httpd") {
			t.Error("Init override not in the variant archive")
		}
	})
}

// TestLockChecksAgainstMirror runs the real apt against a lock that pins a
// version the mirror no longer offers, and one whose sha256 is wrong.
func TestLockChecksAgainstMirror(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	real, err := loadLock(sourceLockFile())
	if err != nil {
		t.Fatal(err)
	}
	nginx, ok := real.Find(setOurs, "nginx")
	if !ok {
		t.Fatal("rootfs.lock has no nginx")
	}
	dir := t.TempDir()
	build := func(e LockEntry) error {
		lock := filepath.Join(dir, "rootfs.lock")
		if err := os.WriteFile(lock, (&Lock{Entries: []LockEntry{e}}).Format(), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Build(ctx, Options{BuildDir: filepath.Join(dir, "build"), LockFile: lock})
		return err
	}

	stale := nginx
	stale.Version = "1.26.3-0~jiege1"
	err = build(stale)
	if err == nil {
		t.Fatal("stale version: want an error")
	}
	for _, want := range []string{"package nginx", stale.Version, nginx.Version, "jiege rootfs --update-lock"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("stale version message lacks %q: %v", want, err)
		}
	}

	wrong := nginx
	wrong.SHA256 = strings.Repeat("0", 64)
	err = build(wrong)
	if err == nil || !strings.Contains(err.Error(), "does not match rootfs.lock") {
		t.Fatalf("wrong sha256: want a mismatch error, got %v", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "build", "rootfs", "debs", nginx.Filename())); serr == nil {
		t.Error("the mismatching download was kept")
	}
}
