package controls

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jiege-go/jiege/qemu"
	"github.com/jiege-go/jiege/tools/jiege/internal/report"
)

func TestLoopELF(t *testing.T) {
	p := filepath.Join(t.TempDir(), "loop.elf")
	if err := os.WriteFile(p, LoopELF(loopAddr), 0o644); err != nil {
		t.Fatal(err)
	}
	if k, err := qemu.Kind(p); k != qemu.KindELF || err != nil {
		t.Fatalf("Kind = %v, %v", k, err)
	}
	if e, err := qemu.ELFEntry(p); e != loopAddr || err != nil {
		t.Fatalf("ELFEntry = %#x, %v", e, err)
	}
	f, err := elf.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Progs) != 1 || f.Progs[0].Type != elf.PT_LOAD || f.Progs[0].Paddr != loopAddr {
		t.Fatalf("program headers %+v", f.Progs)
	}
	code := make([]byte, 4)
	if _, err := f.Progs[0].ReadAt(code, 0); err != nil || string(code) != "\x6f\x00\x00\x00" {
		t.Fatalf("code %x, %v: want j . (0x0000006f)", code, err)
	}
}

// flavorInit has the shape of the linux flavor's /init.
const flavorInit = `#!/usr/bin/busybox sh
bb=/usr/bin/busybox
$bb mount -t proc proc /proc
$bb insmod /usr/lib/modules/6.12/kernel/drivers/virtio/virtio_mmio.ko || echo "init: insmod failed"
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 50 ]; do $bb sleep 0.1; i=$((i+1)); done
$bb ip link set lo up
$bb ip addr add 10.0.2.15/24 dev eth0
$bb ip link set eth0 up
$bb ip route add default via 10.0.2.2
echo "init: eth0 10.0.2.15/24, starting nginx"
exec /usr/sbin/nginx
`

func TestInits(t *testing.T) {
	want := map[string]struct {
		stage       string
		has, hasNot []string
	}{
		"never-boots":      {stage: report.StageBoot},
		"busybox-httpd":    {report.StageFingerprint, []string{"insmod", "ip addr add", "busybox httpd -f -p 80 -h /var/www/html"}, []string{"/usr/sbin/nginx"}},
		"nginx-dies":       {report.StageStability, []string{"insmod", "ip addr add", "/usr/sbin/nginx &", "killall -9 nginx", "-ge 500 ]"}, []string{"exec /usr/sbin/nginx"}},
		"forgery":          {report.StageFingerprint, []string{"insmod", "ip addr add", "exec /usr/sbin/jiege-forgery"}, []string{"/usr/sbin/nginx"}},
		"no-network":       {report.StagePortOpen, []string{"mount -t proc", "echo \"init: network left unconfigured, starting nginx\"\nexec /usr/sbin/nginx"}, []string{"insmod", " ip ", "eth0"}},
		"linux-as-attempt": {stage: report.StageProvenance},
	}
	if len(All()) != len(want) {
		t.Fatalf("%d controls, want %d", len(All()), len(want))
	}
	for _, c := range All() {
		w, ok := want[c.Name]
		if !ok || c.Stage != w.stage {
			t.Errorf("%s: stage %s, want %s", c.Name, c.Stage, w.stage)
			continue
		}
		if c.init == nil {
			continue
		}
		got, err := c.init(flavorInit)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, h := range w.has {
			if !strings.Contains(got, h) {
				t.Errorf("%s: /init lacks %q:\n%s", c.Name, h, got)
			}
		}
		for _, h := range w.hasNot {
			if strings.Contains(got, h) {
				t.Errorf("%s: /init has %q:\n%s", c.Name, h, got)
			}
		}
		if out, err := exec.Command("sh", "-n", "-c", got).CombinedOutput(); err != nil {
			t.Errorf("%s: shell syntax: %v %s", c.Name, err, out)
		}
		if _, err := c.init("#!/bin/sh\nexec /sbin/other\n"); err == nil {
			t.Errorf("%s: an /init of another shape must be refused", c.Name)
		}
	}
	if c, ok := Find("nginx-dies"); !ok || c.Name != "nginx-dies" {
		t.Error("Find")
	}
	if _, ok := Find("nope"); ok {
		t.Error("Find(nope)")
	}
}

func TestPackageAttempt(t *testing.T) {
	src := t.TempDir()
	kernel, initrd := filepath.Join(src, "vmlinux"), filepath.Join(src, "root.cpio")
	os.WriteFile(kernel, []byte("kernel bytes"), 0o644)
	os.WriteFile(initrd, []byte("070701 archive"), 0o644)
	dir := filepath.Join(t.TempDir(), "linux-as-attempt")
	for range 2 { // a second run replaces the first's files
		if err := packageAttempt(dir, kernel, initrd); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"kernel.bin": "kernel bytes", "rootfs.cpio": "070701 archive", "Makefile": AttemptMakefile} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	// make sees a build and a run target; run names the packaged files.
	out, err := exec.Command("make", "-C", dir, "-n", "build", "run").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n: %v\n%s", err, out)
	}
	for _, w := range []string{"qemu-system-riscv64 ", "-kernel kernel.bin", "-initrd rootfs.cpio", "-bios default", "hostfwd=tcp::8080-:80"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("make -n run lacks %q:\n%s", w, out)
		}
	}
	if err := packageAttempt(dir, filepath.Join(src, "missing"), initrd); err == nil {
		t.Error("a missing kernel must be an error")
	}
}
