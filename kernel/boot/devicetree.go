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
	// PLICContexts is each hart's S-mode context of the PLIC, by hart id:
	// the position in the PLIC's interrupts-extended of the pair naming
	// the hart's interrupt controller and the supervisor external
	// interrupt (9).
	PLICContexts map[int]int
	// Reserved are the reserved-memory nodes' ranges, [base, base+size).
	Reserved [][2]uint64
}

// Device is one device node the kernel knows how to use.
type Device struct {
	Kind string // "uart", "clint", "plic", "rtc", "test", "virtio-mmio"
	Node string
	Base uint64
	Size uint64
	IRQ  uint32 // 0 when the node has no interrupts property
	// Compatible is the compatible string the kind was found by.
	Compatible string
	// RegShift and RegIOWidth are a 16550's reg-shift and reg-io-width
	// (register n at Base + n<<RegShift, accessed RegIOWidth bytes wide).
	RegShift   uint
	RegIOWidth int
}

// compatibleKinds is the kind of each device the kernel knows, by its
// device-tree compatible string; a fixed table, only read.
var compatibleKinds = map[string]string{
	"ns16550a":            "uart",
	"ns16550":             "uart",
	"snps,dw-apb-uart":    "uart",
	"sifive,uart0":        "uart",
	"riscv,clint0":        "clint",
	"sifive,clint0":       "clint",
	"riscv,plic0":         "plic",
	"sifive,plic-1.0.0":   "plic",
	"google,goldfish-rtc": "rtc",
	"sifive,test0":        "test",
	"sifive,test1":        "test",
	"virtio,mmio":         "virtio-mmio",
}

// supervisorExternal is the interrupt a PLIC context raises at a hart's
// interrupt controller when it serves S-mode (riscv,cpu-intc numbers).
const supervisorExternal = 9

// ParseDeviceTree reads a flattened device tree (two address cells and two
// size cells for reg, as QEMU's machines and the VisionFive 2 have).
func ParseDeviceTree(blob []byte) (*Machine, error) {
	fdt, err := dt.ReadFDT(bytes.NewReader(blob))
	if err != nil {
		return nil, fmt.Errorf("device tree: %w", err)
	}
	m := &Machine{}
	root := fdt.RootNode
	intcHart := map[uint32]int{} // a hart's interrupt controller's phandle: its hart id
	var plic *dt.Node
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
			for _, c := range n.Children {
				if _, ok := c.LookProperty("interrupt-controller"); ok {
					if p, ok := c.LookProperty("phandle"); ok && len(p.Value) == 4 {
						intcHart[binary.BigEndian.Uint32(p.Value)] = int(number(n, "reg"))
					}
				}
			}
		case n.Name == "reserved-memory":
			for _, c := range n.Children {
				if base, size, ok := reg(c); ok {
					m.Reserved = append(m.Reserved, [2]uint64{base, base + size})
				}
			}
		}
		kind, compatible := kindOf(n)
		if kind == "" {
			return nil
		}
		base, size, _ := reg(n)
		d := Device{Kind: kind, Node: n.Name, Base: base, Size: size, IRQ: uint32(number(n, "interrupts")), Compatible: compatible, RegIOWidth: 1}
		if p, ok := n.LookProperty("reg-shift"); ok && len(p.Value) == 4 {
			d.RegShift = uint(binary.BigEndian.Uint32(p.Value))
		}
		if p, ok := n.LookProperty("reg-io-width"); ok && len(p.Value) == 4 {
			d.RegIOWidth = int(binary.BigEndian.Uint32(p.Value))
		}
		if kind == "plic" && plic == nil {
			plic = n
		}
		m.Devices = append(m.Devices, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if plic != nil {
		m.PLICContexts = plicContexts(plic, intcHart)
	}
	if m.RAMSize == 0 {
		return nil, fmt.Errorf("device tree: no memory node")
	}
	sort.Slice(m.Devices, func(i, j int) bool { return m.Devices[i].Base < m.Devices[j].Base })
	return m, nil
}

// plicContexts reads the PLIC's interrupts-extended: one (phandle,
// interrupt) pair per context, in context order, each naming a hart's
// interrupt controller (one interrupt cell). A pair whose interrupt is
// not the supervisor external one is another mode's context (M-mode's is
// 11), or none (-1, 0xffffffff, in a tree that leaves a hart out).
func plicContexts(plic *dt.Node, intcHart map[uint32]int) map[int]int {
	p, ok := plic.LookProperty("interrupts-extended")
	if !ok {
		return nil
	}
	contexts := map[int]int{}
	for i := 0; i+8 <= len(p.Value); i += 8 {
		phandle, irq := binary.BigEndian.Uint32(p.Value[i:]), binary.BigEndian.Uint32(p.Value[i+4:])
		hart, known := intcHart[phandle]
		if _, taken := contexts[hart]; known && irq == supervisorExternal && !taken {
			contexts[hart] = i / 8
		}
	}
	return contexts
}

func kindOf(n *dt.Node) (kind, compatible string) {
	p, ok := n.LookProperty("compatible")
	if !ok {
		return "", ""
	}
	for _, c := range strings.Split(strings.TrimRight(string(p.Value), "\x00"), "\x00") {
		if k, ok := compatibleKinds[c]; ok {
			return k, c
		}
	}
	return "", ""
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
