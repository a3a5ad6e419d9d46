package boot

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/u-root/u-root/pkg/dt"
)

// Machine is what the device tree says about the machine.
type Machine struct {
	Model       string
	RAMBase     uint64
	RAMSize     uint64
	Harts       int
	Timebase    uint64
	Bootargs    string
	InitrdStart uint64
	InitrdEnd   uint64
	Devices     []Device
}

// Device is one device node the kernel knows how to use.
type Device struct {
	Kind string // "uart", "clint", "plic", "rtc", "test", "virtio-mmio"
	Node string
	Base uint64
	Size uint64
	IRQ  uint32 // 0 when the node has no interrupts property
}

// compatibleKinds is the kind of each device the kernel knows, by its
// device-tree compatible string; a fixed table, only read.
var compatibleKinds = map[string]string{
	"ns16550a":            "uart",
	"riscv,clint0":        "clint",
	"sifive,clint0":       "clint",
	"riscv,plic0":         "plic",
	"sifive,plic-1.0.0":   "plic",
	"google,goldfish-rtc": "rtc",
	"sifive,test0":        "test",
	"sifive,test1":        "test",
	"virtio,mmio":         "virtio-mmio",
}

// ParseDeviceTree reads a flattened device tree (QEMU virt's layout: two
// address cells and two size cells).
func ParseDeviceTree(blob []byte) (*Machine, error) {
	fdt, err := dt.ReadFDT(bytes.NewReader(blob))
	if err != nil {
		return nil, fmt.Errorf("device tree: %w", err)
	}
	m := &Machine{}
	root := fdt.RootNode
	if p, ok := root.LookProperty("model"); ok {
		m.Model, _ = p.AsString()
	}
	err = root.Walk(func(n *dt.Node) error {
		switch {
		case strings.HasPrefix(n.Name, "memory@"):
			base, size, ok := reg(n)
			if ok && m.RAMSize == 0 {
				m.RAMBase, m.RAMSize = base, size
			}
		case n.Name == "chosen":
			if p, ok := n.LookProperty("bootargs"); ok {
				m.Bootargs, _ = p.AsString()
			}
			m.InitrdStart = number(n, "linux,initrd-start")
			m.InitrdEnd = number(n, "linux,initrd-end")
		case n.Name == "cpus":
			m.Timebase = number(n, "timebase-frequency")
		case strings.HasPrefix(n.Name, "cpu@"):
			m.Harts++
		}
		kind := kindOf(n)
		if kind == "" {
			return nil
		}
		base, size, _ := reg(n)
		m.Devices = append(m.Devices, Device{Kind: kind, Node: n.Name, Base: base, Size: size, IRQ: uint32(number(n, "interrupts"))})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if m.RAMSize == 0 {
		return nil, fmt.Errorf("device tree: no memory node")
	}
	sort.Slice(m.Devices, func(i, j int) bool { return m.Devices[i].Base < m.Devices[j].Base })
	return m, nil
}

func kindOf(n *dt.Node) string {
	p, ok := n.LookProperty("compatible")
	if !ok {
		return ""
	}
	for _, c := range strings.Split(strings.TrimRight(string(p.Value), "\x00"), "\x00") {
		if k, ok := compatibleKinds[c]; ok {
			return k
		}
	}
	return ""
}

func reg(n *dt.Node) (base, size uint64, ok bool) {
	p, found := n.LookProperty("reg")
	if !found || len(p.Value) < 16 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(p.Value), binary.BigEndian.Uint64(p.Value[8:]), true
}

// number reads a property holding one 32- or 64-bit number (0 when absent).
// For a list such as interrupts it returns the first cell.
func number(n *dt.Node, name string) uint64 {
	p, ok := n.LookProperty(name)
	if !ok {
		return 0
	}
	switch {
	case len(p.Value) == 8:
		return binary.BigEndian.Uint64(p.Value)
	case len(p.Value) >= 4:
		return uint64(binary.BigEndian.Uint32(p.Value))
	}
	return 0
}

// DevicesOf returns the devices of one kind.
func (m *Machine) DevicesOf(kind string) []Device {
	var out []Device
	for _, d := range m.Devices {
		if d.Kind == kind {
			out = append(out, d)
		}
	}
	return out
}
