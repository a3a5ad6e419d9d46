package ownnginx

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A program that answers -V as nginx does, and a kernel that carries it,
// glibc's loader and C library, a configuration and mime types in its
// .rodata at odd offsets, built with the riscv64 cross compiler.
const fakeNginx = `#include <stdio.h>
int main(int argc, char **argv) {
	fprintf(stderr, "nginx version: nginx/0.0.1\nconfigure arguments: --prefix=/srv/ngx --conf-path=/etc/ngx/nginx.conf\n");
	return 0;
}
`

const fakeKernel = `__asm__(".section .rodata\n.byte 7\n.incbin \"nginx\"\n.byte 1,2,3\n.incbin \"ld.so\"\n"
	".ascii \"some panic message\"\n.incbin \"libc.so.6\"\n.byte 0\n.incbin \"nginx.conf\"\n.byte 0,1\n.incbin \"mime.types\"\n.byte 0\n");
void _start(void) { for (;;); }
`

const carvedConf = "# the attempt's configuration\nworker_processes 1;\nevents {\n    worker_connections 64;\n}\nhttp {\n    include mime.types;\n    server {\n        listen 80;\n        root www;\n        index start.html;\n    }\n}\n"

const carvedTypes = "types {\n    text/html html;\n}\n"

func crossBuild(t *testing.T) (kernel, glibc string) {
	cc, err := exec.LookPath("riscv64-linux-gnu-gcc")
	if err != nil {
		t.Skip("needs riscv64-linux-gnu-gcc")
	}
	glibc = "/usr/riscv64-linux-gnu/lib"
	dir := t.TempDir()
	for name, text := range map[string]string{"nginx.c": fakeNginx, "kernel.c": fakeKernel, "nginx.conf": carvedConf, "mime.types": carvedTypes} {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	for _, lib := range []string{"ld-linux-riscv64-lp64d.so.1", "libc.so.6"} {
		b, err := os.ReadFile(filepath.Join(glibc, lib))
		if err != nil {
			t.Skip(err)
		}
		os.WriteFile(filepath.Join(dir, strings.Replace(lib, "ld-linux-riscv64-lp64d.so.1", "ld.so", 1)), b, 0o644)
	}
	for _, args := range [][]string{
		{"-O1", "-o", "nginx", "nginx.c"},
		{"-nostdlib", "-static", "-o", "kernel.elf", "kernel.c"},
	} {
		cmd := exec.Command(cc, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", cc, args, err, out)
		}
	}
	return filepath.Join(dir, "kernel.elf"), glibc
}

// The ELFs in a kernel's section are carved whole; the kernel, which
// carries nginx's bytes, is not itself taken for nginx.
func TestCarve(t *testing.T) {
	kernel, glibc := crossBuild(t)
	b, err := os.ReadFile(kernel)
	if err != nil {
		t.Fatal(err)
	}
	ims := carve(b)
	if len(ims) != 4 {
		t.Fatalf("carved %d images, want 4 (kernel, nginx, ld.so, libc)", len(ims))
	}
	if ims[0].nginx || len(ims[0].data) != len(b) {
		t.Errorf("the kernel: nginx %v, %d of %d bytes", ims[0].nginx, len(ims[0].data), len(b))
	}
	if !ims[1].nginx || ims[1].interp != "/lib/ld-linux-riscv64-lp64d.so.1" || strings.Join(ims[1].needed, ",") != "libc.so.6" {
		t.Errorf("nginx: %v %q %q", ims[1].nginx, ims[1].interp, ims[1].needed)
	}
	for i, lib := range []string{"ld-linux-riscv64-lp64d.so.1", "libc.so.6"} {
		want, _ := os.ReadFile(filepath.Join(glibc, lib))
		if im := ims[2+i]; im.soname != lib || string(im.data) != string(want) || im.nginx {
			t.Errorf("%s: soname %q, %d bytes, want %d", lib, im.soname, len(im.data), len(want))
		}
	}
	// A truncated image is not carved.
	if got := carve(ims[2].data[:len(ims[2].data)-1]); len(got) != 0 {
		t.Errorf("a truncated ELF carved: %d", len(got))
	}
	if got := carveText(b, confStart); got != carvedConf {
		t.Errorf("carved configuration:\n%q\nwant\n%q", got, carvedConf)
	}
	if got := carveText(b, typesStart); got != carvedTypes {
		t.Errorf("carved mime types: %q", got)
	}
}

// Find builds a root from the carved ELFs in which the carved nginx runs
// under qemu-riscv64; its configuration and the attempt's "/" are placed
// where it reads them.
func TestFindCarved(t *testing.T) {
	kernel, _ := crossBuild(t)
	tree, err := Find([]Source{{Path: kernel, Option: "-kernel"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Remove()
	if !tree.Carved || tree.Nginx != "usr/sbin/nginx" || tree.Source.Option != "-kernel" {
		t.Errorf("tree: %+v", tree)
	}
	if _, err := exec.LookPath("qemu-riscv64"); err != nil {
		t.Skip("needs qemu-riscv64")
	}
	b, err := tree.Inspect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != "0.0.1" || b.ConfPath != "/etc/ngx/nginx.conf" || b.Prefix != "/srv/ngx" {
		t.Errorf("nginx -V: %+v", b)
	}
	if err := tree.placeConf(b); err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1700000000, 0)
	if err := tree.PlaceIndex(b, 80, []byte("hello"), mtime); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"etc/ngx/nginx.conf": carvedConf, "etc/ngx/mime.types": carvedTypes, "srv/ngx/www/start.html": "hello"} {
		if got, err := os.ReadFile(filepath.Join(tree.Dir, rel)); err != nil || string(got) != want {
			t.Errorf("%s: %q %v", rel, got, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(tree.Dir, "srv/ngx/www/start.html")); err != nil || !fi.ModTime().Equal(mtime) {
		t.Errorf("index mtime: %v", err)
	}
	if o := tree.Official(b, Debian{Version: "1.26.3"}); !strings.HasPrefix(o, "unknown") {
		t.Errorf("official: %s", o)
	}
}

// apk writes an Alpine package as abuild does: gzip streams of tar
// segments, the first two without the tar's end.
func apk(t *testing.T, pkginfo string, nginx []byte) []byte {
	var out bytes.Buffer
	for i, seg := range []map[string][]byte{
		{".SIGN.RSA.alpine-devel.rsa.pub": []byte("signature")},
		{".PKGINFO": []byte(pkginfo)},
		{"usr/sbin/nginx": nginx},
	} {
		zw := gzip.NewWriter(&out)
		tw := tar.NewWriter(zw)
		for name, b := range seg {
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(b))})
			tw.Write(b)
		}
		if i == 2 {
			tw.Close()
		} else {
			tw.Flush()
		}
		zw.Close()
	}
	return out.Bytes()
}

// An apk in the attempt's directory that holds the same nginx names the
// build; one that holds another does not.
func TestAlpine(t *testing.T) {
	tree := &Tree{Dir: t.TempDir(), Nginx: "usr/sbin/nginx"}
	os.MkdirAll(filepath.Join(tree.Dir, "usr/sbin"), 0o755)
	os.WriteFile(filepath.Join(tree.Dir, tree.Nginx), []byte("the nginx ELF"), 0o755)
	att := t.TempDir()
	info := "# Generated by abuild\npkgname = nginx\npkgver = 1.28.0-r3\narch = riscv64\n"
	os.MkdirAll(filepath.Join(att, "pkgs"), 0o755)
	os.WriteFile(filepath.Join(att, "pkgs/other.apk"), apk(t, info, []byte("another build")), 0o644)
	if o, ok := tree.Alpine(att); ok {
		t.Errorf("another binary named Alpine's: %s", o)
	}
	os.WriteFile(filepath.Join(att, "pkgs/nginx-1.28.0-r3.apk"), apk(t, info, []byte("the nginx ELF")), 0o644)
	o, ok := tree.Alpine(att)
	if !ok || !strings.HasPrefix(o, "the official Alpine build (sha256 ") || !strings.Contains(o, "package nginx 1.28.0-r3 (riscv64), pkgs/nginx-1.28.0-r3.apk") {
		t.Errorf("Alpine: %v %s", ok, o)
	}
}
