//go:build riscv64

package riscv64

import "github.com/jiege-go/jiege/mm"

// The early device-tree reader: the few facts the trap handler needs before
// the Go runtime runs (RAM, reserved ranges, the harts, timer, console,
// power-off). The kernel parses the whole tree later with u-root's pkg/dt
// (kernel/boot), which gives the PLIC's contexts (SetPLIC) and the
// console's receive interrupt. Like Linux's early reader it assumes two
// address cells and two size cells for reg (the root's and a simple
// bus's on QEMU's machines and the VisionFive 2), one for a cpu's.

const (
	fdtMagic     = 0xd00dfeed
	fdtBeginNode = 1
	fdtEndNode   = 2
	fdtProp      = 3
	fdtNop       = 4
	fdtEnd       = 9
)

//go:nosplit
func be32(pa uintptr) uint32 {
	p := (*[4]byte)(mm.Ptr(pa))
	return uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
}

//go:nosplit
func be64(pa uintptr) uint64 { return uint64(be32(pa))<<32 | uint64(be32(pa+4)) }

//go:nosplit
func fdtSize(dtb uintptr) uintptr {
	if be32(dtb) != fdtMagic {
		return 0
	}
	return uintptr(be32(dtb + 4))
}

// cstrHasPrefix reports whether the NUL-terminated string at pa starts with prefix.
//
//go:nosplit
func cstrHasPrefix(pa uintptr, prefix string) bool {
	for i := 0; i < len(prefix); i++ {
		if *(*byte)(mm.Ptr(pa + uintptr(i))) != prefix[i] {
			return false
		}
	}
	return true
}

//go:nosplit
func cstrEqual(pa uintptr, s string) bool {
	return cstrHasPrefix(pa, s) && *(*byte)(mm.Ptr(pa + uintptr(len(s)))) == 0
}

// fdtFind returns the value address and length of property prop in the
// first node whose name starts with node.
//
//go:nosplit
func fdtFind(dtb uintptr, node, prop string) (uintptr, uint32, bool) {
	if fdtSize(dtb) == 0 {
		return 0, 0, false
	}
	return fdtFindFrom(dtb, dtb+uintptr(be32(dtb+8)), node, prop)
}

// fdtFindFrom is fdtFind from the token at p (a node's FDT_BEGIN_NODE).
//
//go:nosplit
func fdtFindFrom(dtb, p uintptr, node, prop string) (uintptr, uint32, bool) {
	strs := dtb + uintptr(be32(dtb+12))
	depth, match := 0, -1
	for {
		tok := be32(p)
		p += 4
		switch tok {
		case fdtBeginNode:
			depth++
			if match < 0 && cstrHasPrefix(p, node) {
				match = depth
			}
			for *(*byte)(mm.Ptr(p)) != 0 {
				p++
			}
			p = (p + 4) &^ 3
		case fdtEndNode:
			if depth == match {
				return 0, 0, false
			}
			depth--
		case fdtProp:
			n := be32(p)
			name := strs + uintptr(be32(p+4))
			p += 8
			if depth == match && cstrEqual(name, prop) {
				return p, n, true
			}
			p = (p + uintptr(n) + 3) &^ 3
		case fdtNop:
		default:
			return 0, 0, false
		}
	}
}

// fdtReg returns the first (address, size) pair of node's reg property,
// assuming two address cells and two size cells, as on QEMU's virt machine.
//
//go:nosplit
func fdtReg(dtb uintptr, node string) (base, size uintptr, ok bool) {
	v, n, ok := fdtFind(dtb, node, "reg")
	if !ok || n < 16 {
		return 0, 0, false
	}
	return uintptr(be64(v)), uintptr(be64(v + 8)), true
}

// fdtNumber reads a property that holds one 32- or 64-bit number.
//
//go:nosplit
func fdtNumber(dtb uintptr, node, prop string) (uint64, bool) {
	v, n, ok := fdtFind(dtb, node, prop)
	switch {
	case !ok:
		return 0, false
	case n == 4:
		return uint64(be32(v)), true
	case n == 8:
		return be64(v), true
	}
	return 0, false
}

// fdtListHas reports whether the string list (NUL-separated, as a
// compatible property) at v, n bytes long, holds s.
//
//go:nosplit
func fdtListHas(v uintptr, n uint32, s string) bool {
	for i := uintptr(0); i < uintptr(n); {
		if cstrEqual(v+i, s) {
			return true
		}
		for i < uintptr(n) && *(*byte)(mm.Ptr(v + i)) != 0 {
			i++
		}
		i++
	}
	return false
}

// fdtCompatible returns the FDT_BEGIN_NODE token of the first node whose
// compatible list holds compat, or 0.
//
//go:nosplit
func fdtCompatible(dtb uintptr, compat string) uintptr {
	if fdtSize(dtb) == 0 {
		return 0
	}
	p := dtb + uintptr(be32(dtb+8))
	strs := dtb + uintptr(be32(dtb+12))
	node := uintptr(0)
	for {
		tok := be32(p)
		switch tok {
		case fdtBeginNode:
			node = p
			p += 4
			for *(*byte)(mm.Ptr(p)) != 0 {
				p++
			}
			p = (p + 4) &^ 3
		case fdtProp:
			n := be32(p + 4)
			if cstrEqual(strs+uintptr(be32(p+8)), "compatible") && fdtListHas(p+12, n, compat) {
				return node
			}
			p = (p + 12 + uintptr(n) + 3) &^ 3
		case fdtEndNode, fdtNop:
			p += 4
		default:
			return 0
		}
	}
}

// fdtCompatibleReg is fdtReg of the first node compatible with compat.
//
//go:nosplit
func fdtCompatibleReg(dtb uintptr, compat string) (base, size uintptr, ok bool) {
	node := fdtCompatible(dtb, compat)
	if node == 0 {
		return 0, 0, false
	}
	v, n, ok := fdtFindFrom(dtb, node, "", "reg")
	if !ok || n < 16 {
		return 0, 0, false
	}
	return uintptr(be64(v)), uintptr(be64(v + 8)), true
}

// memRange is a range of physical addresses [start, end).
type memRange struct{ start, end uintptr }

// fdtReserved appends to rs what the device tree reserves: the memory
// reservation block's entries and the reg of every child of
// /reserved-memory (the firmware's own region among them: OpenSBI adds
// one for itself). It returns how many it appended; past len(rs) it stops.
//
//go:nosplit
func fdtReserved(dtb uintptr, rs []memRange) int {
	n := 0
	for e := dtb + uintptr(be32(dtb+16)); n < len(rs); e += 16 {
		addr, size := be64(e), be64(e+8)
		if addr == 0 && size == 0 {
			break
		}
		rs[n] = memRange{uintptr(addr), uintptr(addr + size)}
		n++
	}
	p := dtb + uintptr(be32(dtb+8))
	strs := dtb + uintptr(be32(dtb+12))
	depth, inReserved := 0, false
	for n < len(rs) {
		tok := be32(p)
		p += 4
		switch tok {
		case fdtBeginNode:
			depth++
			if depth == 2 {
				inReserved = cstrEqual(p, "reserved-memory")
			}
			for *(*byte)(mm.Ptr(p)) != 0 {
				p++
			}
			p = (p + 4) &^ 3
		case fdtEndNode:
			depth--
		case fdtProp:
			l := be32(p)
			if inReserved && depth == 3 && l >= 16 && cstrEqual(strs+uintptr(be32(p+4)), "reg") {
				base := uintptr(be64(p + 8))
				rs[n] = memRange{base, base + uintptr(be64(p+16))}
				n++
			}
			p = (p + 8 + uintptr(l) + 3) &^ 3
		case fdtNop:
		default:
			return n
		}
	}
	return n
}

// fdtHarts lists the harts the kernel can run on: the enabled cpu nodes
// (status absent or "okay") that have an MMU (mmu-type, not "riscv,none")
// and a hart id below 64 (the SBI's hart masks are read from base 0),
// which is what tells a hart with S-mode from a monitor core (the
// E51 of QEMU's sifive_u, the S7 of the VisionFive 2's JH7110). first
// goes first; ids gets at most len(ids). It also returns the cpu node of
// first (its FDT_BEGIN_NODE token), or 0 when the tree does not list it.
//
//go:nosplit
func fdtHarts(dtb uintptr, first int, ids []int) (n int, firstNode uintptr) {
	if len(ids) > 0 {
		ids[0] = first
		n = 1
	}
	if fdtSize(dtb) == 0 {
		return n, 0
	}
	p := dtb + uintptr(be32(dtb+8))
	strs := dtb + uintptr(be32(dtb+12))
	depth, inCPUs := 0, false
	var node uintptr // the cpu node whose properties are being read
	id, usable := -1, true
	mmu := false
	for {
		tok := be32(p)
		if node != 0 && (tok == fdtBeginNode || tok == fdtEndNode) {
			// A cpu node's properties precede its children: they are all read.
			if id == first {
				firstNode = node
			} else if id >= 0 && id < 64 && usable && mmu && n < len(ids) {
				ids[n] = id
				n++
			}
			node = 0
		}
		start := p
		p += 4
		switch tok {
		case fdtBeginNode:
			depth++
			if depth == 2 {
				inCPUs = cstrEqual(p, "cpus")
			} else if depth == 3 && inCPUs && cstrHasPrefix(p, "cpu@") {
				node, id, usable, mmu = start, -1, true, false
			}
			for *(*byte)(mm.Ptr(p)) != 0 {
				p++
			}
			p = (p + 4) &^ 3
		case fdtEndNode:
			depth--
		case fdtProp:
			l := be32(p)
			name, v := strs+uintptr(be32(p+4)), p+8
			if node != 0 {
				switch {
				case cstrEqual(name, "reg") && l == 4:
					id = int(be32(v))
				case cstrEqual(name, "status"):
					usable = cstrEqual(v, "okay") || cstrEqual(v, "ok")
				case cstrEqual(name, "mmu-type"):
					mmu = !cstrEqual(v, "riscv,none")
				}
			}
			p = (p + 8 + uintptr(l) + 3) &^ 3
		case fdtNop:
		default:
			return n, firstNode
		}
	}
}
