package bpf

import (
	"encoding/binary"
	"math/rand/v2"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
)

// The interpreter runs a verified program. Pointers are Go slices of
// the objects the verifier allowed (the stack, the context, a map's
// value) with an offset, and every access is checked against its
// slice again: a program the verifier wrongly passed stops (and
// returns 0) instead of touching anything else.

// cell is a register's (or spilled slot's) value at run time.
type cell struct {
	mem   []byte // a pointer's object; nil for a scalar or a map
	m     *Map   // a map from BPF_LD_MAP_FD
	n     uint64 // a scalar, or a pointer's offset into mem
	stack bool   // mem is the stack, where pointers spill
}

func (c cell) pointer() bool { return c.mem != nil || c.m != nil }

// bytes is the memory of an access of size bytes at off past c.
func (c cell) bytes(off int16, size int) ([]byte, bool) {
	at := int64(c.n) + int64(off)
	if c.mem == nil || at < 0 || at+int64(size) > int64(len(c.mem)) {
		return nil, false
	}
	return c.mem[at : at+int64(size)], true
}

type machine struct {
	regs  [numRegs]cell
	stack [stackSize]byte
	spill [stackSize / 8]cell // pointers spilled, by 8-byte slot
}

// run runs p with ctx as its context and returns R0; 0 when the program
// stops on a fault.
func (p *Prog) run(ctx []byte) uint64 {
	mc := &machine{}
	mc.regs[1] = cell{mem: ctx}
	mc.regs[regFP] = cell{mem: mc.stack[:], n: stackSize, stack: true}
	for pc := 0; pc < len(p.insns); {
		in := p.insns[pc]
		next, ret, done, ok := mc.step(pc, in)
		switch {
		case !ok:
			return 0
		case done:
			return ret
		case next <= pc:
			return 0 // the verifier lets only forward jumps through
		}
		pc = next
	}
	return 0
}

// step runs one instruction: the next one's index, or done and R0.
func (mc *machine) step(pc int, in insn) (next int, ret uint64, done, ok bool) {
	switch in.class() {
	case classALU, classALU64:
		return pc + 1, 0, false, mc.alu(in)
	case classLD:
		mc.regs[in.dst] = cell{n: in.imm64, m: in.m}
		return pc + 2, 0, false, true
	case classLDX:
		v, ok := mc.load(mc.regs[in.src], in.off, in.size())
		if ok && in.mode() == modeMEMSX {
			v.n = signExtend(v.n, 8*in.size())
		}
		mc.regs[in.dst] = v
		return pc + 1, 0, false, ok
	case classST:
		return pc + 1, 0, false, mc.store(mc.regs[in.dst], in.off, in.size(), cell{n: uint64(int64(in.imm))})
	case classSTX:
		return pc + 1, 0, false, mc.store(mc.regs[in.dst], in.off, in.size(), mc.regs[in.src])
	}
	is64 := in.class() == classJMP
	switch in.op() {
	case jmpJA:
		if is64 {
			return pc + 1 + int(in.off), 0, false, true
		}
		return pc + 1 + int(in.imm), 0, false, true
	case jmpEXIT:
		return 0, mc.regs[0].n, true, !mc.regs[0].pointer()
	case jmpCALL:
		return pc + 1, 0, false, mc.call(in.imm)
	}
	dst, src := mc.regs[in.dst], cell{n: uint64(int64(in.imm))}
	if in.useReg() {
		src = mc.regs[in.src]
	}
	if dst.pointer() || src.pointer() {
		// Only a lookup's answer, against 0: a pointer is never NULL.
		if src.pointer() || src.n != 0 || (in.op() != unix.BPF_JEQ && in.op() != unix.BPF_JNE) {
			return 0, 0, false, false
		}
		if in.op() == unix.BPF_JNE {
			return pc + 1 + int(in.off), 0, false, true
		}
		return pc + 1, 0, false, true
	}
	if cond(in.op(), is64, dst.n, src.n) {
		return pc + 1 + int(in.off), 0, false, true
	}
	return pc + 1, 0, false, true
}

func (mc *machine) alu(in insn) bool {
	op, is64 := in.op(), in.class() == classALU64
	src := cell{n: uint64(int64(in.imm))}
	if in.useReg() {
		src = mc.regs[in.src]
	}
	dst := &mc.regs[in.dst]
	switch {
	case op == unix.BPF_MOV:
		if src.pointer() {
			*dst = src
			return is64 && in.off == 0
		}
		v := src.n
		if in.off != 0 {
			v = signExtend(v, int(in.off))
		}
		if !is64 {
			v = uint64(uint32(v))
		}
		*dst = cell{n: v}
	case dst.pointer() || src.pointer():
		switch {
		case !is64 || (dst.pointer() && src.pointer()) || dst.m != nil || src.m != nil:
			return false
		case op == unix.BPF_ADD && dst.pointer():
			dst.n += src.n
		case op == unix.BPF_ADD:
			src.n += dst.n
			*dst = src
		case op == unix.BPF_SUB && dst.pointer():
			dst.n -= src.n
		default:
			return false
		}
	case op == opEND:
		*dst = cell{n: endian(in.class(), in.useReg(), in.imm, dst.n)}
	default:
		*dst = cell{n: alu(op, is64, in.off == 1, dst.n, src.n)}
	}
	return true
}

// load reads size bytes at off past base; a whole spilled pointer comes
// back as it was stored.
func (mc *machine) load(base cell, off int16, size int) (cell, bool) {
	b, ok := base.bytes(off, size)
	if !ok {
		return cell{}, false
	}
	if base.stack && size == 8 {
		if at := int64(base.n) + int64(off); at%8 == 0 && mc.spill[at/8].pointer() {
			return mc.spill[at/8], true
		}
	}
	var v [8]byte
	copy(v[:], b)
	return cell{n: binary.LittleEndian.Uint64(v[:])}, true
}

// store writes v's size bytes at off past base: a pointer only whole to
// an aligned stack slot, where it spills.
func (mc *machine) store(base cell, off int16, size int, v cell) bool {
	b, ok := base.bytes(off, size)
	if !ok {
		return false
	}
	at := int64(base.n) + int64(off)
	if base.stack {
		for s := at / 8; s <= (at+int64(size)-1)/8; s++ {
			mc.spill[s] = cell{}
		}
	}
	if v.pointer() {
		if !base.stack || size != 8 || at%8 != 0 {
			return false
		}
		mc.spill[at/8] = v
		clear(b)
		return true
	}
	var le [8]byte
	binary.LittleEndian.PutUint64(le[:], v.n)
	copy(b, le[:size])
	return true
}

// call runs a helper: its result in R0, R1-R5 then cleared.
func (mc *machine) call(fn int32) bool {
	r := &mc.regs
	var ret cell
	switch fn {
	case linux.BPFFuncMapLookupElem, linux.BPFFuncMapUpdateElem, linux.BPFFuncMapDeleteElem:
		m := r[1].m
		if m == nil {
			return false
		}
		key, ok := mc.argBytes(r[2], int(m.KeySize))
		if !ok {
			return false
		}
		var err error
		switch fn {
		case linux.BPFFuncMapLookupElem:
			if v := m.lookupValue(key); v != nil {
				ret = cell{mem: v}
			}
		case linux.BPFFuncMapUpdateElem:
			value, ok := mc.argBytes(r[3], int(m.ValueSize))
			if !ok {
				return false
			}
			err = m.Update(key, value, r[4].n)
		case linux.BPFFuncMapDeleteElem:
			err = m.Delete(key)
		}
		if errno, isErrno := err.(unix.Errno); isErrno {
			ret = cell{n: uint64(-int64(errno))}
		}
	case linux.BPFFuncGetPrandomU32:
		ret = cell{n: uint64(rand.Uint32())}
	default:
		return false
	}
	for i := 1; i <= 5; i++ {
		r[i] = cell{}
	}
	r[0] = ret
	return true
}

// argBytes copies the n bytes a helper's pointer argument points to.
func (mc *machine) argBytes(p cell, n int) ([]byte, bool) {
	b, ok := p.bytes(0, n)
	return append([]byte(nil), b...), ok
}
