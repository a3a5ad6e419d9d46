//go:build riscv64

package riscv64

import "github.com/jiege-go/jiege/mm"

// The early device-tree reader: the few facts the trap handler needs before
// the Go runtime runs (RAM, reserved ranges, timer, console, power-off). The
// kernel parses the whole tree later with u-root's pkg/dt.

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
	p := dtb + uintptr(be32(dtb+8))
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

// fdtCount counts the nodes whose names start with prefix.
//
//go:nosplit
func fdtCount(dtb uintptr, prefix string) int {
	if fdtSize(dtb) == 0 {
		return 0
	}
	p := dtb + uintptr(be32(dtb+8))
	count := 0
	for {
		tok := be32(p)
		p += 4
		switch tok {
		case fdtBeginNode:
			if cstrHasPrefix(p, prefix) {
				count++
			}
			for *(*byte)(mm.Ptr(p)) != 0 {
				p++
			}
			p = (p + 4) &^ 3
		case fdtProp:
			p = (p + 8 + uintptr(be32(p)) + 3) &^ 3
		case fdtEndNode, fdtNop:
		default:
			return count
		}
	}
}
