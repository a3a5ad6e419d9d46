package boot

import (
	"os"
	"strings"
	"testing"
)

// virt-512m.dtb was dumped by QEMU 7.2: -machine virt,dumpdtb=... -m 512M -smp 2
// -append "console=ttyS0 trace=syscall selftest" -initrd <a small file>.
func TestParseDeviceTreeQEMUVirt(t *testing.T) {
	blob, err := os.ReadFile("testdata/virt-512m.dtb")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseDeviceTree(blob)
	if err != nil {
		t.Fatal(err)
	}
	if m.RAMBase != 0x8000_0000 || m.RAMSize != 512<<20 {
		t.Errorf("RAM = %#x+%#x", m.RAMBase, m.RAMSize)
	}
	if m.Harts != 2 || m.Timebase != 10_000_000 {
		t.Errorf("harts %d timebase %d", m.Harts, m.Timebase)
	}
	if m.Bootargs != "console=ttyS0 trace=syscall selftest" {
		t.Errorf("bootargs %q", m.Bootargs)
	}
	if m.InitrdStart == 0 || m.InitrdEnd <= m.InitrdStart {
		t.Errorf("initrd %#x-%#x", m.InitrdStart, m.InitrdEnd)
	}
	want := map[string]uint64{"uart": 0x1000_0000, "clint": 0x200_0000, "plic": 0xc00_0000, "rtc": 0x10_1000, "test": 0x10_0000}
	for kind, base := range want {
		ds := m.DevicesOf(kind)
		if len(ds) != 1 || ds[0].Base != base {
			t.Errorf("%s: %+v, want one at %#x", kind, ds, base)
		}
	}
	v := m.DevicesOf("virtio-mmio")
	if len(v) != 8 || v[0].Base != 0x1000_1000 || v[0].IRQ != 1 || v[7].IRQ != 8 {
		t.Errorf("virtio-mmio slots: %+v", v)
	}
	// virt's PLIC: two contexts per hart, M-mode's first.
	if c := m.PLICContexts; len(c) != 2 || c[0] != 1 || c[1] != 3 {
		t.Errorf("PLIC contexts %v, want map[0:1 1:3]", c)
	}
	if u := m.DevicesOf("uart"); len(u) != 1 || u[0].Compatible != "ns16550a" || u[0].RegShift != 0 || u[0].RegIOWidth != 1 {
		t.Errorf("uart %+v", u)
	}
}

// sifive_u-smp3.dtb was dumped by QEMU 7.2: -machine sifive_u,dumpdtb=...
// -smp 3 -m 256M. Hart 0 is the E51 monitor core, with an M-mode PLIC
// context only; the U54 harts 1 and 2 have M and S contexts each.
func TestParseDeviceTreeSiFiveU(t *testing.T) {
	blob, err := os.ReadFile("testdata/sifive_u-smp3.dtb")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseDeviceTree(blob)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.PLICContexts; len(c) != 2 || c[1] != 2 || c[2] != 4 {
		t.Errorf("PLIC contexts %v, want map[1:2 2:4]", c)
	}
	if p := m.DevicesOf("plic"); len(p) != 1 || p[0].Base != 0xc00_0000 {
		t.Errorf("plic %+v", p)
	}
	if u := m.DevicesOf("uart"); len(u) != 2 || u[0].Base != 0x1001_0000 || u[0].Compatible != "sifive,uart0" || u[0].IRQ != 4 {
		t.Errorf("uarts %+v", u)
	}
	if m.Harts != 3 || m.Timebase != 1_000_000 {
		t.Errorf("harts %d timebase %d", m.Harts, m.Timebase)
	}
}

// dw-uart.dtb is testdata/dw-uart.dts, a tree shaped like the VisionFive 2's.
func TestParseDeviceTreeDesignWareUART(t *testing.T) {
	blob, err := os.ReadFile("testdata/dw-uart.dtb")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseDeviceTree(blob)
	if err != nil {
		t.Fatal(err)
	}
	if m.RAMBase != 0x4000_0000 || m.RAMSize != 4<<30 {
		t.Errorf("RAM = %#x+%#x", m.RAMBase, m.RAMSize)
	}
	if r := m.Reserved; len(r) != 2 || r[0] != [2]uint64{0x4000_0000, 0x4008_0000} || r[1] != [2]uint64{0x6ce0_0000, 0x6e40_0000} {
		t.Errorf("reserved %#x", r)
	}
	if c := m.PLICContexts; len(c) != 2 || c[1] != 2 || c[2] != 4 {
		t.Errorf("PLIC contexts %v, want map[1:2 2:4]", c)
	}
	u := m.DevicesOf("uart")
	if len(u) != 1 || u[0].Base != 0x1000_0000 || u[0].Compatible != "snps,dw-apb-uart" || u[0].RegShift != 2 || u[0].RegIOWidth != 4 || u[0].IRQ != 32 {
		t.Errorf("uart %+v", u)
	}
}

func TestParseDeviceTreeRejectsGarbage(t *testing.T) {
	if _, err := ParseDeviceTree([]byte("not a device tree at all, just bytes")); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestParseCmdline(t *testing.T) {
	c, err := ParseCmdline("console=ttyS0  trace=syscall selftest quiet netecho")
	if err != nil {
		t.Fatal(err)
	}
	if c.Console != "ttyS0" || !c.Trace["syscall"] || !c.Selftest || !c.NetEcho || len(c.Unknown) != 1 || c.Unknown[0] != "quiet" {
		t.Errorf("%+v", c)
	}
	if c, err := ParseCmdline("profile=1000"); err != nil || c.Profile != 1000 {
		t.Errorf("profile=1000: %+v %v", c, err)
	}
	for _, bad := range []string{"trace=", "trace=bogus", "trace=syscall,net", "profile", "profile=0", "profile=-5", "profile=100001", "profile=fast"} {
		if _, err := ParseCmdline(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if c, err := ParseCmdline(""); err != nil || c.Selftest || c.Init != "/init" || len(c.InitArgs) != 0 {
		t.Errorf("empty: %+v %v", c, err)
	}
	c, err = ParseCmdline("init=/usr/sbin/nginx quiet -- -g daemon off;")
	if err != nil || c.Init != "/usr/sbin/nginx" || strings.Join(c.InitArgs, " ") != "-g daemon off;" {
		t.Errorf("init: %+v %v", c, err)
	}
	if _, err := ParseCmdline("init=nginx"); err == nil {
		t.Error("relative init accepted")
	}
	// Double quotes group words and go, as in Linux's next_arg.
	c, err = ParseCmdline(`init=/bin/sh quiet -- -c "echo a  b" x"y z"`)
	if err != nil || len(c.InitArgs) != 3 || c.InitArgs[0] != "-c" || c.InitArgs[1] != "echo a  b" || c.InitArgs[2] != "xy z" {
		t.Errorf("quoted: %q %v", c.InitArgs, err)
	}
	if c, _ := ParseCmdline(`-- "unterminated arg`); len(c.InitArgs) != 1 || c.InitArgs[0] != "unterminated arg" {
		t.Errorf("unterminated quote: %q", c.InitArgs)
	}
}
