package tests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The kernel booted as Linux boots on RISC-V boards: build/Image, the
// payload of QEMU's OpenSBI (-bios default), entered in S-mode at
// 0x80200000 and reaching M-mode only through the SBI (DESIGN.md,
// "Booted by SBI firmware").

// sbiLog is what the boot log says the kernel uses of the firmware, with
// and without Sstc.
const (
	sbiLogSstc = "sbi: timer Sstc stimecmp, IPIs sPI, remote fences RFNC, harts HSM, power-off SRST, early console legacy putchar"
	sbiLogTime = "sbi: timer TIME set_timer, IPIs sPI, remote fences RFNC, harts HSM, power-off SRST, early console legacy putchar"
)

// TestSBISelftest runs the selftest under OpenSBI on one hart and on four,
// the other harts started through HSM, and with a CPU without Sstc, whose
// timer is SBI's set_timer. The selftest's success powers the machine off
// through SRST, which ends QEMU with status 0.
func TestSBISelftest(t *testing.T) {
	for _, c := range []struct {
		name  string
		harts int
		cpu   string
		log   string
	}{
		{"smp1", 1, "", sbiLogSstc},
		{"smp4", 4, "", sbiLogSstc},
		{"nosstc", 2, "rv64,sstc=false", sbiLogTime},
	} {
		t.Run(c.name, func(t *testing.T) {
			extra := []string{"-smp", strconv.Itoa(c.harts), "-global", "virtio-mmio.force-legacy=false", "-device", "virtio-rng-device"}
			if c.cpu != "" {
				extra = append(extra, "-cpu", c.cpu)
			}
			r := bootKernelWith(t, sbiFirmware, "256M", "selftest", 5*time.Minute, extra...)
			assertSelftestPassed(t, r, "entropy")
			for _, want := range []string{
				"OpenSBI v1.", // the firmware's banner: it ran first
				c.log,
				fmt.Sprintf("S-mode, %d of %d harts running, under SBI firmware", c.harts, c.harts),
				"0x80201000-", // the Image's code, 4 KiB above where OpenSBI loaded it
				fmt.Sprintf("selftest: harts: ok (%d harts, GOMAXPROCS %d, goroutines ran on every hart", c.harts, c.harts),
			} {
				if !strings.Contains(r.console, want) {
					t.Errorf("console lacks %q:\n%s", want, r.console)
				}
			}
		})
	}
}

// TestSBIExitStatus: a failure status still reaches QEMU's exit status
// under OpenSBI (SRST only tells success from failure; the kernel writes
// the test device the device tree names).
func TestSBIExitStatus(t *testing.T) {
	r := bootKernelWith(t, sbiFirmware, "256M", "trace=bogus", time.Minute)
	if r.timedOut || r.exitCode != 2 || !strings.Contains(r.console, `unknown trace "bogus"`) {
		t.Fatalf("timed out %v, exit %d, want exit 2 and the error:\n%s", r.timedOut, r.exitCode, r.console)
	}
}

// TestSBINginx boots Debian's nginx from build/Image under OpenSBI on
// four harts and fetches its index page from the host through hostfwd.
func TestSBINginx(t *testing.T) {
	initrd, _ := oursRootfs(t)
	port, console, _, _ := startKernelFirmware(t, sbiFirmware, 5*time.Minute, "512M", "", initrd, 80, "4")
	client := &http.Client{Timeout: time.Minute}
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := client.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Server"), "nginx/1.") || !strings.Contains(string(body), "nginx") {
				t.Fatalf("GET /: %d, Server %q, body %q", resp.StatusCode, resp.Header.Get("Server"), body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer from nginx: %v\nconsole:\n%s", err, console.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(console.String(), "4 of 4 harts running, under SBI firmware") {
		t.Errorf("not booted on four harts under SBI firmware:\n%s", console.String())
	}
}

// TestSBINginxFreshConnections: 1000 fresh connections, 20 at a time, to
// nginx's four workers on four harts under OpenSBI, where every TLB
// shootdown is the firmware's remote fence and every wake-up its IPI.
func TestSBINginxFreshConnections(t *testing.T) {
	nginxLoadSMP(t, sbiFirmware, "index.html", "/", 1000, 20)
}

// ubootSmode is Debian's U-Boot for S-mode on QEMU's virt (u-boot-qemu).
const ubootSmode = "/usr/lib/u-boot/qemu-riscv64_smode/uboot.elf"

// ubootFirmware writes a boot disk (qemu/cmd/bootdisk) with build/Image,
// the initramfs (or none) and the command line args, and returns the
// arguments that boot it: OpenSBI, then U-Boot, whose distro boot finds
// extlinux.conf on the disk.
func ubootFirmware(t *testing.T, initrd, args string) []string {
	t.Helper()
	if _, err := os.Stat(ubootSmode); err != nil {
		t.Fatalf("%v (apt-get install u-boot-qemu, or sh tools/deps.sh qemu)", err)
	}
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(t.TempDir(), "boot.img")
	cmd := exec.Command("go", "run", "./qemu/cmd/bootdisk", "-image", "build/Image", "-append", args, "-out", disk)
	if initrd != "" {
		cmd.Args = append(cmd.Args, "-initrd", initrd)
	}
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bootdisk: %v\n%s", err, out)
	}
	return []string{"-bios", "default", "-kernel", ubootSmode,
		"-drive", "file=" + disk + ",format=raw,if=none,id=boot,readonly=on", "-device", "virtio-blk-device,drive=boot"}
}

// TestUBootSelftest boots OpenSBI, U-Boot and the kernel from a disk on
// four harts; the command line comes from the disk's extlinux.conf only.
func TestUBootSelftest(t *testing.T) {
	boot := ubootFirmware(t, "", "selftest")
	r := bootKernelWith(t, boot, "256M", "", 5*time.Minute, "-smp", "4",
		"-global", "virtio-mmio.force-legacy=false", "-device", "virtio-rng-device")
	assertSelftestPassed(t, r, "entropy")
	for _, want := range []string{
		"U-Boot 20",
		"Found /extlinux/extlinux.conf",
		"Moving Image from 0x84000000 to 0x80200000", // booti puts it at text_offset
		sbiLogSstc,
		"4 of 4 harts running, under SBI firmware",
		`command line: "selftest"`,
	} {
		if !strings.Contains(r.console, want) {
			t.Errorf("console lacks %q:\n%s", want, r.console)
		}
	}
}

// TestUBootNginx boots nginx's root filesystem from the U-Boot disk (the
// initrd line of extlinux.conf) and fetches its index page from the host.
func TestUBootNginx(t *testing.T) {
	initrd, _ := oursRootfs(t)
	boot := ubootFirmware(t, initrd, "")
	port, console, _, _ := startKernelFirmware(t, boot, 5*time.Minute, "512M", "", "", 80, "2")
	client := &http.Client{Timeout: time.Minute}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Server"), "nginx/1.") {
				t.Fatalf("GET /: %d, Server %q", resp.StatusCode, resp.Header.Get("Server"))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer from nginx: %v\nconsole:\n%s", err, console.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(console.String(), "Retrieving file: /initrd") {
		t.Errorf("U-Boot did not load the initramfs from the disk:\n%s", console.String())
	}
}

// TestSBISiFiveU boots build/Image through OpenSBI on QEMU's sifive_u,
// a machine whose layout is not virt's, with the device tree QEMU makes
// for it, and types at busybox sh on its console. Every difference is one
// a kernel with virt's layout compiled in would trip on:
//   - hart 0 is the E51 monitor core (no MMU, no S-mode): OpenSBI boots
//     the kernel on hart 1, and the kernel starts hart 2 through HSM;
//   - the PLIC's S-mode contexts are 2 and 4 (hart 1's and hart 2's), not
//     virt's 2*hart+1 (3 would be hart 1's M-mode context);
//   - the console is SiFive's UART at 0x10010000 (virt's 16550 sits at
//     0x10000000, which here is the clock controller);
//   - no Sstc and a 1 MHz timebase: the timer is SBI TIME's set_timer.
//
// The typed line reaching the shell proves the UART's receive interrupt
// arrives through the PLIC context the device tree names, and the shell's
// sleep the timer interrupt. sifive_u has no virtio, no RTC and no test
// device, and OpenSBI no shutdown device for it: QEMU is stopped by the test.
func TestSBISiFiveU(t *testing.T) {
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	bb, err := os.ReadFile(linuxBusybox(t))
	if err != nil {
		t.Fatal(err)
	}
	cpio := initramfs(t, bb, map[string]string{"bin/busybox": string(bb)})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-riscv64", "-machine", "sifive_u", "-smp", "3", "-m", "256M",
		"-nographic", "-monitor", "none", "-bios", "default", "-kernel", filepath.Join(repoRoot, "build/Image"),
		"-initrd", cpio, "-append", "init=/bin/busybox -- setsid -c /bin/busybox sh -i")
	var mu sync.Mutex
	var console bytes.Buffer
	cmd.Stdout = writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return console.Write(p)
	})
	cmd.Stderr = cmd.Stdout
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = dieWithTest
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	out := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.ReplaceAll(console.String(), "\r\n", "\n")
	}
	steps := []struct{ waitFor, send string }{
		{"built-in shell", "echo typed $((6*7))\n"},
		{"typed 42", "sleep 1; echo slept $((6*8))\n"},
		{"slept 48", ""},
	}
	for _, s := range steps {
		for !strings.Contains(out(), s.waitFor) {
			if ctx.Err() != nil {
				t.Fatalf("the console never showed %q:\n%s", s.waitFor, out())
			}
			time.Sleep(50 * time.Millisecond)
		}
		stdin.Write([]byte(s.send))
	}
	for _, want := range []string{
		"Boot HART ID              : 1", // OpenSBI's choice, not hart 0
		"sbi: timer TIME set_timer",
		"S-mode, 2 of 3 harts running, under SBI firmware",
		"machine: SiFive HiFive Unleashed A00, timebase 1000000 Hz",
		"interrupt-controller@c000000 plic, S-mode contexts by hart id map[1:2 2:4]",
		"serial@10010000        uart, irq 4 (sifive,uart0, reg-shift 0, reg-io-width 1): the console",
	} {
		if !strings.Contains(out(), want) {
			t.Errorf("console lacks %q:\n%s", want, out())
		}
	}
}
