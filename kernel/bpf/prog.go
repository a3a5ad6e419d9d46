package bpf

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
)

// ProgTypeSocketFilter is the one program type offered.
const ProgTypeSocketFilter = unix.BPF_PROG_TYPE_SOCKET_FILTER

// progCost is what a program is charged besides its instructions.
const progCost = 256

// insnCost is what one decoded instruction is charged.
const insnCost = int(unsafe.Sizeof(insn{}))

// ProgSpec is what BPF_PROG_LOAD asks for, once its type is known to be
// a socket filter.
type ProgSpec struct {
	Insns []linux.BPFInsn
	// AnyAlignment is BPF_F_ANY_ALIGNMENT: map value and context accesses
	// need not be naturally aligned (the stack's always must).
	AnyAlignment bool
	// UninitStack lets the program read stack it did not write (an
	// unknown scalar; the interpreter's stack starts zeroed), as Linux
	// lets a caller with CAP_PERFMON.
	UninitStack bool
}

// Prog is a verified socket filter, open as an anonymous inode
// "bpf-prog". Its descriptors and the sockets it is attached to hold
// references; it holds the maps it names.
type Prog struct {
	insns   []insn
	maps    []*Map
	ino     uint64
	refs    atomic.Int64
	charged int
}

// Load decodes and verifies spec's program, resolving each map
// descriptor it loads with mapOf (which gives a reference, or EBADF).
// It returns the program with one reference, and the verifier's log:
// the line that says why a program is refused, or how much work the
// verification took. Errors are Linux's: E2BIG for too many
// instructions, EINVAL for malformed ones, EACCES for what the verifier
// cannot prove safe, ENOMEM past mm.Charged.
func Load(spec ProgSpec, mapOf func(fd int32) (*Map, error)) (*Prog, string, error) {
	if len(spec.Insns) == 0 || len(spec.Insns) > maxInsns {
		return nil, "", unix.E2BIG
	}
	p := &Prog{ino: fs.NewAnonIno(), charged: progCost + len(spec.Insns)*insnCost}
	if mm.Charged.Charge(p.charged) != nil {
		return nil, "", unix.ENOMEM
	}
	p.refs.Store(1)
	var err error
	p.insns, p.maps, err = decode(spec.Insns, mapOf)
	if err == nil {
		err = checkFlow(p.insns)
	}
	v := &verifier{insns: p.insns, anyAlignment: spec.AnyAlignment, uninitStack: spec.UninitStack}
	if err == nil {
		err = v.verify()
	}
	if err != nil {
		p.DecRef()
		if e, ok := err.(*verifyError); ok {
			return nil, e.msg + "\n", e.errno
		}
		return nil, "", err
	}
	return p, fmt.Sprintf("processed %d insns (limit %d)\n", v.processed, maxProcessed), nil
}

// decode turns raw instructions into insns, checking each opcode and
// register and resolving BPF_LD_MAP_FD's descriptors, as Linux's
// resolve_pseudo_ldimm64. It returns the maps named, referenced.
func decode(raw []linux.BPFInsn, mapOf func(fd int32) (*Map, error)) ([]insn, []*Map, error) {
	insns := make([]insn, len(raw))
	var maps []*Map
	for i := 0; i < len(raw); i++ {
		r := raw[i]
		in := insn{code: r.Code, dst: r.Dst(), src: r.Src(), off: r.Off, imm: r.Imm}
		if !validOpcode(in.code) {
			return nil, maps, refuse(unix.EINVAL, "unknown opcode %02x", in.code)
		}
		if in.dst >= numRegs || in.src >= numRegs {
			return nil, maps, refuse(unix.EINVAL, "R%d is invalid", max(in.dst, in.src))
		}
		if in.class() == classLD {
			if i+1 == len(raw) || raw[i+1].Code != 0 || raw[i+1].Regs != 0 || raw[i+1].Off != 0 || in.off != 0 {
				return nil, maps, refuse(unix.EINVAL, "invalid bpf_ld_imm64 insn")
			}
			switch in.src {
			case 0:
				in.imm64 = uint64(uint32(in.imm)) | uint64(uint32(raw[i+1].Imm))<<32
			case pseudoMapFD:
				if raw[i+1].Imm != 0 {
					return nil, maps, refuse(unix.EINVAL, "unrecognized bpf_ld_imm64 insn")
				}
				m, err := mapOf(in.imm)
				if err != nil {
					return nil, maps, refuse(unix.EBADF, "fd %d is not pointing to valid bpf_map", in.imm)
				}
				maps = append(maps, m)
				in.m = m
			default:
				return nil, maps, refuse(unix.EINVAL, "unrecognized bpf_ld_imm64 insn")
			}
			insns[i] = in
			insns[i+1] = insn{tail: true}
			i++
			continue
		}
		insns[i] = in
	}
	return insns, maps, nil
}

// validOpcode reports whether code is an instruction this machine has
// (BPF_LD_ABS and BPF_LD_IND, classic BPF's packet loads, are not).
func validOpcode(code uint8) bool {
	in := insn{code: code}
	switch in.class() {
	case classALU, classALU64:
		switch in.op() {
		case unix.BPF_NEG:
			return !in.useReg()
		case opEND:
			return in.class() == classALU || !in.useReg()
		}
		_, ok := aluOps[in.op()]
		return ok
	case classLD:
		return code == classLD|modeIMM|unix.BPF_DW
	case classLDX:
		return in.mode() == modeMEM || (in.mode() == modeMEMSX && in.size() < 8)
	case classST, classSTX:
		return in.mode() == modeMEM
	}
	switch in.op() {
	case jmpJA:
		return !in.useReg()
	case jmpCALL, jmpEXIT:
		return in.class() == classJMP && !in.useReg()
	}
	return jmpConds[in.op()]
}

// jumpTarget is where a jump goes: off (BPF_JMP32's BPF_JA: imm)
// instructions past the next; ok false for an instruction that does not
// jump.
func jumpTarget(pc int, in insn) (int, bool) {
	if in.tail || (in.class() != classJMP && in.class() != classJMP32) {
		return 0, false
	}
	switch in.op() {
	case jmpCALL, jmpEXIT:
		return 0, false
	case jmpJA:
		if in.class() == classJMP32 {
			return pc + 1 + int(in.imm), true
		}
	}
	return pc + 1 + int(in.off), true
}

// checkFlow checks the control flow, as Linux's check_cfg: jumps land
// on instructions, only forward (so every path ends), every instruction
// is reached and the last one does not fall off the end.
func checkFlow(insns []insn) error {
	reached := make([]bool, len(insns)+1)
	reached[0] = true
	for pc, in := range insns {
		if in.tail {
			continue
		}
		if !reached[pc] {
			return refuse(unix.EINVAL, "unreachable insn %d", pc)
		}
		target, jumps := jumpTarget(pc, in)
		switch {
		case !jumps:
		case target < 0 || target >= len(insns):
			return refuse(unix.EINVAL, "jump out of range from insn %d to %d", pc, target)
		case target <= pc:
			return refuse(unix.EINVAL, "back-edge from insn %d to %d", pc, target)
		case insns[target].tail:
			return refuse(unix.EINVAL, "jump into the middle of ldimm64 insn %d", target-1)
		default:
			reached[target] = true
		}
		switch {
		case in.class() == classLD:
			reached[pc+2] = true
		case jumps && in.op() == jmpJA, in.class() == classJMP && in.op() == jmpEXIT:
		default:
			reached[pc+1] = true
		}
	}
	if reached[len(insns)] {
		return refuse(unix.EINVAL, "last insn is not an exit or jmp")
	}
	return nil
}

// IncRef takes a reference for a socket the program is attached to.
func (p *Prog) IncRef() { p.refs.Add(1) }

// DecRef drops a reference; the last gives back p's charge and its
// maps.
func (p *Prog) DecRef() {
	if p.refs.Add(-1) != 0 {
		return
	}
	mm.Charged.Uncharge(p.charged)
	for _, m := range p.maps {
		m.DecRef()
	}
}

// Filter runs p on a datagram as a socket filter: it returns how many
// of the datagram's bytes to keep, 0 to drop it.
func (p *Prog) Filter(datagram []byte) uint32 {
	ctx := linux.SkBuff{Len: uint32(len(datagram))}
	return uint32(p.run(linux.AsBytes(&ctx)))
}

// ReadTo refuses: a program is not read (EINVAL, as Linux's
// bpf_dummy_read).
func (p *Prog) ReadTo(fs.UserIO) (int64, error) { return 0, unix.EINVAL }

// WriteFrom refuses, as ReadTo.
func (p *Prog) WriteFrom(fs.UserIO) (int64, error) { return 0, unix.EINVAL }

// Stat is an anonymous inode's.
func (p *Prog) Stat() fs.Stat { return fs.AnonStat(p.ino) }

// Path is what /proc/PID/fd shows.
func (p *Prog) Path() string { return "anon_inode:bpf-prog" }

// Close drops the descriptor's reference.
func (p *Prog) Close() error {
	p.DecRef()
	return nil
}
