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
	"regexp"
	"slices"
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

// imageAt returns the arguments that make QEMU's OpenSBI (fw_dynamic)
// enter build/Image loaded at addr instead of RAM + 2 MiB, where QEMU's
// -kernel puts a raw Image: the Image inside an ELF whose one segment
// loads there, which QEMU loads at its address and gives OpenSBI as the
// next stage's address.
func imageAt(t *testing.T, addr uint64) []string {
	t.Helper()
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	image, err := os.ReadFile(filepath.Join(repoRoot, "build/Image"))
	if err != nil {
		t.Fatal(err)
	}
	return []string{"-bios", "default", "-kernel", writeELF(t, addr, image)}
}

// TestSBIImageElsewhere: the Image runs wherever the firmware loads it at
// a 2 MiB-aligned address, as Linux's does (its code stays at its linked
// address, mapped onto where it lies), on four harts started through HSM
// at their physical entry there; loaded 1 MiB off that alignment, it says
// so through the SBI console and stops.
func TestSBIImageElsewhere(t *testing.T) {
	r := bootKernelWith(t, imageAt(t, 0x80600000), "256M", "selftest", 5*time.Minute, "-smp", "4",
		"-global", "virtio-mmio.force-legacy=false", "-device", "virtio-rng-device")
	assertSelftestPassed(t, r, "entropy")
	for _, want := range []string{
		"Domain0 Next Address      : 0x0000000080600000",
		"4 of 4 harts running, under SBI firmware",
		"  0x80601000-", // the kernel image, as the kernel found it
		"kernel code at 0x3fc0001000",
	} {
		if !strings.Contains(r.console, want) {
			t.Errorf("console lacks %q:\n%s", want, r.console)
		}
	}

	r = bootKernelWith(t, imageAt(t, 0x80300000), "256M", "selftest", time.Minute)
	if r.timedOut || !strings.Contains(r.console, "kernel: the Image must be loaded at a 2 MiB-aligned address") ||
		strings.Contains(r.console, "Jiege-Go") {
		t.Fatalf("timed out %v; want the misplaced Image reported and nothing booted:\n%s", r.timedOut, r.console)
	}
}

// TestSBIEveryHartEntersImage: when every hart enters the Image's entry
// at once (a payload in front of it starts the others there through HSM,
// as firmware without HSM would, and as OpenSBI v1.1, which QEMU 7.2
// ships, can when it starts a hart the kernel asks for), one boots and the
// others wait, then run as the kernel's secondary harts: the kernel boots
// once and the selftest sees goroutines on all four.
func TestSBIEveryHartEntersImage(t *testing.T) {
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	payload := filepath.Join(t.TempDir(), "everyhart")
	if err := os.WriteFile(payload, crossCompile(t, "everyhart.S", "-nostdlib", "-static", "-Wl,-Ttext=0x80200000", "-Wl,-N", "-Wl,--no-warn-rwx-segments", "-Wl,--build-id=none"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := bootKernelWith(t, []string{"-bios", "default", "-kernel", payload,
		"-device", "loader,file=" + filepath.Join(repoRoot, "build/Image") + ",addr=0x80400000,force-raw=on"},
		"256M", "selftest", 2*time.Minute, "-smp", "4")
	assertSelftestPassed(t, r)
	if n := strings.Count(r.console, "sbi: spec "); n != 1 || !strings.Contains(r.console, "4 of 4 harts running, under SBI firmware") ||
		strings.Contains(r.console, "hart_start of hart") {
		t.Errorf("want one boot on four harts and no failed hart_start; %d boots:\n%s", n, r.console)
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

// TestSBIOtherMachines boots build/Image through OpenSBI on two QEMU
// machines whose layout is not virt's and types at busybox sh on their
// consoles. Every difference is one a kernel with virt's layout compiled
// in would trip on. The typed line reaching the shell proves the UART's
// receive interrupt arrives through the PLIC context the device tree
// names; the shell's sleep needs the timer interrupt, through SBI TIME
// (neither machine has Sstc):
//
//   - sifive_u, with the tree QEMU makes for it: hart 0 is the E51 monitor
//     core (no MMU, no S-mode), so OpenSBI boots the kernel on hart 1 or 2
//     (its lottery), and the kernel starts the other through HSM; the PLIC's S-mode contexts
//     are 2 and 4, not virt's 2*hart+1 (3 would be hart 1's M-mode
//     context: with it the typed line never arrives, which was checked);
//     the console is SiFive's UART at 0x10010000 (virt's 16550 sits at
//     0x10000000, which here is the clock controller); timebase 1 MHz.
//   - microchip-icicle-kit, which QEMU boots from a tree the user gives
//     (-dtb, with OpenSBI as its firmware): icicleTree, compiled with dtc,
//     describes its 16550 MMUART0 at 0x20000000 as Linux's tree does,
//     reg-shift 2 and reg-io-width 4 (32-bit registers 4 bytes apart:
//     with byte accesses at virt's spacing nothing appears), three harts
//     of which the kernel runs on two (hart 0 is again an E51), and a
//     reserved-memory range, which the boot log lists; the UART's
//     interrupt is PLIC source 90.
//
// Neither machine has virtio, an RTC or a test device, nor OpenSBI a
// shutdown device for them: the test stops QEMU.
func TestSBIOtherMachines(t *testing.T) {
	if err := buildKernelOnce(); err != nil {
		t.Fatal(err)
	}
	bb, err := os.ReadFile(linuxBusybox(t))
	if err != nil {
		t.Fatal(err)
	}
	cpio := initramfs(t, bb, map[string]string{"bin/busybox": string(bb)})
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"sifive_u", []string{"-machine", "sifive_u", "-smp", "3", "-m", "256M", "-bios", "default"}, []string{
			"S-mode, 2 of 3 harts running, under SBI firmware",
			"machine: SiFive HiFive Unleashed A00, timebase 1000000 Hz",
			"interrupt-controller@c000000 plic, S-mode contexts by hart id map[1:2 2:4]",
			"serial@10010000        uart, irq 4 (sifive,uart0, reg-shift 0, reg-io-width 1): the console",
		}},
		// QEMU's icicle kit wants more than 1.5 GiB; with -dtb and no
		// -bios its firmware is OpenSBI (fw_dynamic), loaded at 0x80000000.
		{"icicle", []string{"-machine", "microchip-icicle-kit", "-smp", "3", "-m", "2G", "-dtb", icicleTree(t, 3)}, []string{
			"S-mode, 2 of 3 harts running, under SBI firmware",
			"machine: Microchip PolarFire SoC Icicle Kit (a tree for QEMU), timebase 1000000 Hz",
			"  0x90000000-0x94000000 reserved",
			"interrupt-controller@c000000 plic, S-mode contexts by hart id map[1:2 2:4]",
			"serial@20000000        uart, irq 90 (ns16550a, reg-shift 2, reg-io-width 4): the console",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := typeAtShell(t, append(c.args, "-kernel", filepath.Join(repoRoot, "build/Image"), "-initrd", cpio,
				"-append", "init=/bin/busybox -- setsid -c /bin/busybox sh -i"))
			for _, want := range append(c.want, "sbi: timer TIME set_timer") {
				if !strings.Contains(out, want) {
					t.Errorf("console lacks %q:\n%s", want, out)
				}
			}
			// OpenSBI's lottery among the harts that can run S-mode.
			if !regexp.MustCompile(`Boot HART ID +: [12]\n`).MatchString(out) {
				t.Errorf("booted on a hart other than 1 or 2:\n%s", out)
			}
		})
	}
}

// typeAtShell boots QEMU with args (busybox sh -i as init), types a line
// and a sleep at the shell, and returns the console once both answered.
func typeAtShell(t *testing.T, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "qemu-system-riscv64", append([]string{"-nographic", "-monitor", "none"}, args...)...)
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
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { cmd.Process.Kill(); <-exited }()
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
			select {
			case err := <-exited:
				exited <- err
				t.Fatalf("QEMU ended (%v) before the console showed %q:\n%s", err, s.waitFor, out())
			case <-ctx.Done():
				t.Fatalf("the console never showed %q:\n%s", s.waitFor, out())
			case <-time.After(50 * time.Millisecond):
			}
		}
		stdin.Write([]byte(s.send))
	}
	return out()
}

// icicleTree writes a device tree for QEMU's microchip-icicle-kit with
// harts harts (hart 0 the E51, without an MMU), compiles it with dtc and
// returns the blob's path. The addresses and interrupt numbers are
// QEMU's (hw/riscv/microchip_pfsoc.c): CLINT 0x2000000, PLIC 0xc000000
// (context 0 the E51's M-mode, then M and S per U54), MMUART0 0x20000000
// on PLIC source 90, DDR at 0x80000000; the UART's reg-shift 2 and
// reg-io-width 4 are Linux's tree's for the board (mpfs.dtsi).
func icicleTree(t *testing.T, harts int) string {
	t.Helper()
	dtc, err := exec.LookPath("dtc")
	if err != nil {
		t.Fatal("dtc not installed (apt-get install device-tree-compiler, or sh tools/deps.sh test)")
	}
	var cpus, clint, plic []string
	for h := 0; h < harts; h++ {
		isa, mmu := "rv64imafdc", `mmu-type = "riscv,sv39";`
		if h == 0 {
			isa, mmu = "rv64imac", ""
		}
		cpus = append(cpus, fmt.Sprintf(`cpu@%d { device_type = "cpu"; reg = <%d>; compatible = "riscv"; riscv,isa = "%s"; %s
			cpu%d_intc: interrupt-controller { #interrupt-cells = <1>; interrupt-controller; compatible = "riscv,cpu-intc"; }; };`,
			h, h, isa, mmu, h))
		clint = append(clint, fmt.Sprintf("<&cpu%d_intc 3>, <&cpu%d_intc 7>", h, h))
		plic = append(plic, fmt.Sprintf("<&cpu%d_intc 11>", h))
		if h > 0 {
			plic = append(plic, fmt.Sprintf("<&cpu%d_intc 9>", h))
		}
	}
	dts := fmt.Sprintf(`/dts-v1/;
/ {
	#address-cells = <2>; #size-cells = <2>;
	model = "Microchip PolarFire SoC Icicle Kit (a tree for QEMU)";
	compatible = "microchip,mpfs-icicle-kit", "microchip,mpfs";
	chosen { stdout-path = "/soc/serial@20000000"; };
	cpus { #address-cells = <1>; #size-cells = <0>; timebase-frequency = <1000000>;
		%s
	};
	memory@80000000 { device_type = "memory"; reg = <0x0 0x80000000 0x0 0x40000000>; };
	reserved-memory { #address-cells = <2>; #size-cells = <2>; ranges;
		fabric@90000000 { reg = <0x0 0x90000000 0x0 0x4000000>; no-map; };
	};
	soc { #address-cells = <2>; #size-cells = <2>; compatible = "simple-bus"; ranges;
		clint@2000000 { compatible = "sifive,clint0"; reg = <0x0 0x2000000 0x0 0xc000>; interrupts-extended = %s; };
		plic: interrupt-controller@c000000 { compatible = "sifive,plic-1.0.0"; reg = <0x0 0xc000000 0x0 0x4000000>;
			#address-cells = <0>; #interrupt-cells = <1>; interrupt-controller; riscv,ndev = <186>;
			interrupts-extended = %s; };
		serial@20000000 { compatible = "ns16550a"; reg = <0x0 0x20000000 0x0 0x400>; reg-io-width = <4>; reg-shift = <2>;
			clock-frequency = <150000000>; interrupt-parent = <&plic>; interrupts = <90>; };
	};
};
`, strings.Join(cpus, "\n\t\t"), strings.Join(clint, ", "), strings.Join(plic, ", "))
	dir := t.TempDir()
	src, blob := filepath.Join(dir, "icicle.dts"), filepath.Join(dir, "icicle.dtb")
	if err := os.WriteFile(src, []byte(dts), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(dtc, "-q", "-I", "dts", "-O", "dtb", "-o", blob, src).CombinedOutput(); err != nil {
		t.Fatalf("dtc: %v\n%s", err, out)
	}
	return blob
}

// TestReboot: busybox's reboot -f as init, reboot(2) with
// LINUX_REBOOT_CMD_RESTART, restarts the machine through SBI's SRST under
// OpenSBI and through the test device's reset under our own M-mode code:
// QEMU boots the kernel again (its boot line comes twice), and with
// -no-reboot exits with status 0 instead.
func TestReboot(t *testing.T) {
	bb, err := os.ReadFile(linuxBusybox(t))
	if err != nil {
		t.Fatal(err)
	}
	cpio := initramfs(t, bb, map[string]string{"bin/busybox": string(bb)})
	for _, c := range []struct {
		name string
		boot []string
	}{
		{"own", ownFirmware},
		{"opensbi", sbiFirmware},
	} {
		t.Run(c.name, func(t *testing.T) {
			boot := append(slices.Clone(c.boot), "-initrd", cpio)
			const cmdline = "init=/bin/busybox -- reboot -f"
			r := bootKernelWith(t, boot, "256M", cmdline, time.Minute, "-no-reboot")
			if r.timedOut || r.exitCode != 0 || strings.Count(r.console, "Jiege-Go 0.1.0") != 1 {
				t.Fatalf("with -no-reboot: timed out %v, exit %d, want exit 0 after one boot:\n%s", r.timedOut, r.exitCode, r.console)
			}
			r = bootKernelWith(t, boot, "256M", cmdline, 20*time.Second)
			if n := strings.Count(r.console, "Jiege-Go 0.1.0"); n < 2 {
				t.Fatalf("without -no-reboot the kernel booted %d times in 20 s, want it booted again:\n%s", n, r.console)
			}
		})
	}
}
