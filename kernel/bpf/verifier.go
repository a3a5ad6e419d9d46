package bpf

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// The verifier walks every path of a program from its first instruction
// to an exit, with the type of each register and stack slot, and
// refuses what it cannot prove safe. Jumps only go forward, so every
// path ends; the number of instructions walked over all paths, and of
// paths waiting at once, are bounded as Linux bounds them.

// Limits on what a program may make the verifier do.
const (
	maxInsns     = unix.BPF_MAXINSNS // instructions in a program (E2BIG beyond)
	maxProcessed = 1000000           // instructions walked over all paths (BPF_COMPLEXITY_LIMIT_INSNS)
	maxPending   = 8192              // paths waiting to be walked (BPF_COMPLEXITY_LIMIT_JMP_SEQ)
	maxPtrOff    = 1 << 29           // BPF_MAX_VAR_OFF: a pointer's constant offset
)

// regType is what the verifier knows a register holds.
type regType uint8

const (
	regUninit         regType = iota // never written: reading it is refused
	regScalar                        // a number, known (known, val) or not
	regCtx                           // the program's context, off bytes in
	regStack                         // the stack, off bytes from the frame pointer (negative)
	regMap                           // a map (BPF_LD_MAP_FD), for the helpers
	regMapValue                      // a map's value, off bytes in
	regMapValueOrNull                // map_lookup_elem's answer, not yet compared with 0
)

var regTypeNames = [...]string{"?", "scalar", "ctx", "fp", "map_ptr", "map_value", "map_value_or_null"}

func (t regType) String() string { return regTypeNames[t] }

func (t regType) pointer() bool { return t > regScalar }

// reg is a register's (or spilled stack slot's) abstract value.
type reg struct {
	typ   regType
	known bool   // a scalar whose value is val
	val   uint64 // a known scalar's value
	off   int32  // a pointer's constant offset
	id    uint32 // map_value_or_null: one lookup's answer, shared by its copies
	m     *Map   // regMap, regMapValue, regMapValueOrNull: which map
}

func scalarOf(v uint64) reg { return reg{typ: regScalar, known: true, val: v} }

var unknownScalar = reg{typ: regScalar}

// slot is 8 bytes of stack: a register spilled there whole, or bytes
// written (a bit each in written).
type slot struct {
	spilled reg
	written uint8
}

// state is what the verifier knows at one point of one path.
type state struct {
	regs  [numRegs]reg
	stack [stackSize / 8]slot
}

// stateCost is what one waiting path is charged.
const stateCost = int(unsafe.Sizeof(state{})) + 16

// verifyError is a refusal: Linux's errno, with the log's line.
type verifyError struct {
	errno unix.Errno
	msg   string
}

func (e *verifyError) Error() string { return e.msg }

func refuse(errno unix.Errno, format string, args ...any) error {
	return &verifyError{errno: errno, msg: fmt.Sprintf(format, args...)}
}

type pending struct {
	pc int
	st state
}

type verifier struct {
	insns        []insn
	anyAlignment bool // BPF_F_ANY_ALIGNMENT: no natural alignment asked of map value and context accesses
	uninitStack  bool // stack never written reads as an unknown scalar
	processed    int
	lookups      uint32 // ids given to map_lookup_elem's answers
	waiting      []pending
	charged      int
}

// verify walks every path of insns (decoded and checked by decode).
func (v *verifier) verify() error {
	defer func() { mm.Charged.Uncharge(v.charged) }()
	var start state
	start.regs[1] = reg{typ: regCtx}
	start.regs[regFP] = reg{typ: regStack}
	if err := v.push(0, &start); err != nil {
		return err
	}
	for len(v.waiting) > 0 {
		p := v.waiting[len(v.waiting)-1]
		v.waiting = v.waiting[:len(v.waiting)-1]
		mm.Charged.Uncharge(stateCost)
		v.charged -= stateCost
		if err := v.walk(p.pc, &p.st); err != nil {
			return err
		}
	}
	return nil
}

// push keeps a path to walk later: the other side of a branch.
func (v *verifier) push(pc int, st *state) error {
	if len(v.waiting) >= maxPending {
		return refuse(unix.E2BIG, "the sequence of %d jumps is too complex", len(v.waiting))
	}
	if mm.Charged.Charge(stateCost) != nil {
		return refuse(unix.ENOMEM, "out of memory for the paths to walk")
	}
	v.charged += stateCost
	v.waiting = append(v.waiting, pending{pc: pc, st: *st})
	return nil
}

// walk follows one path from pc to its exit.
func (v *verifier) walk(pc int, st *state) error {
	for {
		v.processed++
		if v.processed > maxProcessed {
			return refuse(unix.E2BIG, "BPF program is too large. Processed %d insn", v.processed)
		}
		in := v.insns[pc]
		next, done, err := v.step(pc, in, st)
		if err != nil {
			return withPC(pc, err)
		}
		if done {
			return nil
		}
		pc = next
	}
}

func withPC(pc int, err error) error {
	if e, ok := err.(*verifyError); ok {
		return &verifyError{errno: e.errno, msg: fmt.Sprintf("%d: %s", pc, e.msg)}
	}
	return err
}

// step checks one instruction and applies it to st: the next
// instruction, or done at an exit.
func (v *verifier) step(pc int, in insn, st *state) (int, bool, error) {
	switch in.class() {
	case classALU, classALU64:
		return pc + 1, false, v.alu(in, st)
	case classLD:
		st.regs[in.dst] = scalarOf(in.imm64)
		if in.m != nil {
			st.regs[in.dst] = reg{typ: regMap, m: in.m}
		}
		return pc + 2, false, nil
	case classLDX:
		if in.imm != 0 {
			return 0, false, refuse(unix.EINVAL, "BPF_LDX uses reserved fields")
		}
		if err := readable(st, in.src); err != nil {
			return 0, false, err
		}
		if err := writable(in.dst); err != nil {
			return 0, false, err
		}
		r, err := v.access(st, in.src, in.off, in.size(), nil)
		if err != nil {
			return 0, false, err
		}
		if in.mode() == modeMEMSX {
			r = unknownScalar
		}
		st.regs[in.dst] = r
		return pc + 1, false, nil
	case classST:
		if in.src != 0 {
			return 0, false, refuse(unix.EINVAL, "BPF_ST uses reserved fields")
		}
		if err := readable(st, in.dst); err != nil {
			return 0, false, err
		}
		val := scalarOf(uint64(int64(in.imm)))
		_, err := v.access(st, in.dst, in.off, in.size(), &val)
		return pc + 1, false, err
	case classSTX:
		if in.mode() != modeMEM {
			return 0, false, refuse(unix.EINVAL, "BPF_STX mode %#x is not supported", in.mode())
		}
		if in.imm != 0 {
			return 0, false, refuse(unix.EINVAL, "BPF_STX uses reserved fields")
		}
		if err := readable(st, in.src); err != nil {
			return 0, false, err
		}
		if err := readable(st, in.dst); err != nil {
			return 0, false, err
		}
		val := st.regs[in.src]
		_, err := v.access(st, in.dst, in.off, in.size(), &val)
		return pc + 1, false, err
	}
	return v.jump(pc, in, st)
}

func readable(st *state, r uint8) error {
	if st.regs[r].typ == regUninit {
		return refuse(unix.EACCES, "R%d !read_ok", r)
	}
	return nil
}

func writable(r uint8) error {
	if r == regFP {
		return refuse(unix.EACCES, "frame pointer is read only")
	}
	return nil
}

// alu checks an arithmetic instruction, as Linux's check_alu_op: scalars
// are folded when known; a pointer only moves by a known constant, in
// 64 bits, and stays a pointer of its kind.
func (v *verifier) alu(in insn, st *state) error {
	op, is64 := in.op(), in.class() == classALU64
	name, ok := aluOps[op]
	if !ok {
		return refuse(unix.EINVAL, "invalid BPF_ALU opcode %x", op)
	}
	switch op {
	case unix.BPF_NEG:
		if in.useReg() || in.src != 0 || in.off != 0 || in.imm != 0 {
			return refuse(unix.EINVAL, "BPF_NEG uses reserved fields")
		}
	case opEND:
		if in.src != 0 || in.off != 0 || (in.imm != 16 && in.imm != 32 && in.imm != 64) || (is64 && in.useReg()) {
			return refuse(unix.EINVAL, "BPF_END uses reserved fields")
		}
	case unix.BPF_MOV:
		if in.useReg() {
			if in.imm != 0 || (in.off != 0 && in.off != 8 && in.off != 16 && (!is64 || in.off != 32)) {
				return refuse(unix.EINVAL, "BPF_MOV uses reserved fields")
			}
		} else if in.src != 0 || in.off != 0 {
			return refuse(unix.EINVAL, "BPF_MOV uses reserved fields")
		}
		return v.mov(in, is64, st)
	default:
		signedOK := op == unix.BPF_DIV || op == unix.BPF_MOD
		if (in.useReg() && in.imm != 0) || (!in.useReg() && in.src != 0) || (in.off != 0 && (in.off != 1 || !signedOK)) {
			return refuse(unix.EINVAL, "BPF_ALU uses reserved fields")
		}
	}
	src := scalarOf(uint64(int64(in.imm)))
	if in.useReg() {
		if err := readable(st, in.src); err != nil {
			return err
		}
		src = st.regs[in.src]
	}
	if err := readable(st, in.dst); err != nil {
		return err
	}
	if (op == unix.BPF_DIV || op == unix.BPF_MOD) && !in.useReg() && in.imm == 0 {
		return refuse(unix.EINVAL, "div by zero")
	}
	if (op == unix.BPF_LSH || op == unix.BPF_RSH || op == unix.BPF_ARSH) && !in.useReg() {
		width := int32(32)
		if is64 {
			width = 64
		}
		if in.imm < 0 || in.imm >= width {
			return refuse(unix.EINVAL, "invalid shift %d", in.imm)
		}
	}
	if err := writable(in.dst); err != nil {
		return err
	}
	dst := &st.regs[in.dst]
	if op == unix.BPF_NEG || op == opEND {
		if dst.typ.pointer() {
			return refuse(unix.EACCES, "R%d pointer arithmetic prohibited", in.dst)
		}
		if dst.known {
			if op == opEND {
				*dst = scalarOf(endian(in.class(), in.useReg(), in.imm, dst.val))
			} else {
				*dst = scalarOf(alu(op, is64, false, dst.val, 0))
			}
		} else {
			*dst = unknownScalar
		}
		return nil
	}
	if dst.typ.pointer() || src.typ.pointer() {
		return v.pointerArith(in, is64, name, dst, src)
	}
	if dst.known && src.known {
		*dst = scalarOf(alu(op, is64, in.off == 1, dst.val, src.val))
	} else {
		*dst = unknownScalar
	}
	return nil
}

// mov checks a move: a 64-bit move copies a register whole, pointers
// included; a narrower or sign-extending one is only for scalars.
func (v *verifier) mov(in insn, is64 bool, st *state) error {
	src := scalarOf(uint64(int64(in.imm)))
	if in.useReg() {
		if err := readable(st, in.src); err != nil {
			return err
		}
		src = st.regs[in.src]
	}
	if err := writable(in.dst); err != nil {
		return err
	}
	switch {
	case src.typ.pointer() && (!is64 || in.off != 0):
		return refuse(unix.EACCES, "R%d partial copy of pointer", in.src)
	case src.typ.pointer():
	case !src.known:
		src = unknownScalar
	case in.off != 0:
		src = scalarOf(signExtend(src.val, int(in.off)))
	}
	if !is64 && src.known {
		src = scalarOf(uint64(uint32(src.val)))
	}
	st.regs[in.dst] = src
	return nil
}

// pointerArith checks arithmetic with a pointer: only ptr += k, ptr -= k
// and k += ptr with k a known constant, on pointers into memory.
func (v *verifier) pointerArith(in insn, is64 bool, name string, dst *reg, src reg) error {
	switch {
	case !is64:
		return refuse(unix.EACCES, "R%d 32-bit pointer arithmetic prohibited", in.dst)
	case dst.typ.pointer() && src.typ.pointer():
		return refuse(unix.EACCES, "R%d pointer %s pointer prohibited", in.dst, name)
	case in.op() != unix.BPF_ADD && (in.op() != unix.BPF_SUB || src.typ.pointer()):
		return refuse(unix.EACCES, "R%d pointer arithmetic with %s operator prohibited", in.dst, name)
	}
	ptr, k := *dst, src
	if src.typ.pointer() {
		ptr, k = src, *dst
	}
	switch ptr.typ {
	case regMap:
		return refuse(unix.EACCES, "R%d pointer arithmetic on map_ptr prohibited", in.dst)
	case regMapValueOrNull:
		return refuse(unix.EACCES, "R%d pointer arithmetic on map_value_or_null prohibited, null-check it first", in.dst)
	}
	if !k.known {
		return refuse(unix.EACCES, "R%d pointer arithmetic with an unknown scalar prohibited: only constant offsets are proven", in.dst)
	}
	off := int64(ptr.off) + int64(k.val)
	if in.op() == unix.BPF_SUB {
		off = int64(ptr.off) - int64(k.val)
	}
	if int64(k.val) >= maxPtrOff || int64(k.val) <= -maxPtrOff || off >= maxPtrOff || off <= -maxPtrOff {
		return refuse(unix.EACCES, "value %d makes %s pointer be out of bounds", int64(k.val), ptr.typ)
	}
	ptr.off = int32(off)
	*dst = ptr
	return nil
}

// skbReadable and skbWritable are the bytes of struct __sk_buff a socket
// filter may read and write, as Linux's sk_filter_is_valid_access: the
// socket buffer's numbers and the scratch cb[], not the packet pointers,
// the addresses of the socket or the time stamps.
var (
	skb         linux.SkBuff
	cbStart     = int(unsafe.Offsetof(skb.Cb))
	cbEnd       = cbStart + int(unsafe.Sizeof(skb.Cb))
	skbReadable = [][2]int{
		{0, cbStart}, // len ... tc_index
		{cbStart, cbEnd},
		field(unsafe.Offsetof(skb.Hash), unsafe.Sizeof(skb.Hash)),
		field(unsafe.Offsetof(skb.NapiID), unsafe.Sizeof(skb.NapiID)),
		field(unsafe.Offsetof(skb.GsoSegs), unsafe.Sizeof(skb.GsoSegs)),
		field(unsafe.Offsetof(skb.GsoSize), unsafe.Sizeof(skb.GsoSize)),
	}
)

func field(off, size uintptr) [2]int { return [2]int{int(off), int(off + size)} }

// ctxAccessOK reports whether a socket filter may access size bytes of
// its context at off: aligned, within one readable field (cb[] may be
// read and written 8 bytes at a time), writes only to cb[].
func ctxAccessOK(off, size int, write bool) bool {
	if off < 0 || off%size != 0 {
		return false
	}
	if off >= cbStart && off+size <= cbEnd {
		return true
	}
	if write || size > 4 {
		return false
	}
	for _, r := range skbReadable {
		if off >= r[0] && off+size <= r[1] {
			return true
		}
	}
	return false
}

// access checks a load (value nil) or a store of value through register
// base at its offset off, as Linux's check_mem_access, and returns what
// a load reads.
func (v *verifier) access(st *state, base uint8, off int16, size int, value *reg) (reg, error) {
	write := value != nil
	p := st.regs[base]
	leak := write && value.typ.pointer()
	at := int(p.off) + int(off)
	switch p.typ {
	case regStack:
		if at%size != 0 {
			return reg{}, refuse(unix.EACCES, "misaligned stack access off %d+%d size %d", p.off, off, size)
		}
		if at < -stackSize || at+size > 0 {
			return reg{}, refuse(unix.EACCES, "invalid stack off=%d size=%d", at, size)
		}
		if write {
			return reg{}, storeStack(st, at, size, *value)
		}
		return loadStack(st, at, size, v.uninitStack)
	case regCtx:
		if leak {
			return reg{}, refuse(unix.EACCES, "R%d leaks addr into ctx", base)
		}
		if p.off != 0 {
			return reg{}, refuse(unix.EACCES, "dereference of modified ctx ptr R%d off=%d disallowed", base, p.off)
		}
		if !ctxAccessOK(at, size, write) {
			return reg{}, refuse(unix.EACCES, "invalid bpf_context access off=%d size=%d", at, size)
		}
		return unknownScalar, nil
	case regMapValue:
		if leak {
			return reg{}, refuse(unix.EACCES, "R%d leaks addr into map", base)
		}
		if !v.anyAlignment && at%size != 0 {
			return reg{}, refuse(unix.EACCES, "misaligned value access off (%d)+%d size %d", p.off, off, size)
		}
		return unknownScalar, mapValueAccess(p.m, at, size, write)
	}
	return reg{}, refuse(unix.EACCES, "R%d invalid mem access '%s'", base, p.typ)
}

// mapValueAccess checks size bytes at off of one of m's values.
func mapValueAccess(m *Map, off, size int, write bool) error {
	switch {
	case off < 0 || off+size > int(m.ValueSize):
		return refuse(unix.EACCES, "invalid access to map value, value_size=%d off=%d size=%d", m.ValueSize, off, size)
	case write && m.Flags&unix.BPF_F_RDONLY_PROG != 0:
		return refuse(unix.EACCES, "write into map forbidden, value_size=%d off=%d size=%d", m.ValueSize, off, size)
	case !write && m.Flags&unix.BPF_F_WRONLY_PROG != 0:
		return refuse(unix.EACCES, "read from map forbidden, value_size=%d off=%d size=%d", m.ValueSize, off, size)
	}
	return nil
}

// storeStack records a store at off (from the frame pointer): a whole
// aligned 8 bytes spill the register (a pointer, or a scalar that stays
// known); anything narrower leaves bytes, and a pointer may not be
// stored in part.
func storeStack(st *state, off, size int, value reg) error {
	i, b := (off+stackSize)/8, (off+stackSize)%8
	s := &st.stack[i]
	if size == 8 {
		*s = slot{spilled: value, written: 0xff}
		return nil
	}
	if value.typ.pointer() {
		return refuse(unix.EACCES, "invalid size of register spill")
	}
	if s.spilled.typ != regUninit {
		*s = slot{written: 0xff} // what was spilled is now bytes
	}
	s.written |= uint8((1<<size - 1) << b)
	return nil
}

// loadStack reads size bytes at off: a spilled register back whole, or
// bytes written before as an unknown scalar.
func loadStack(st *state, off, size int, uninit bool) (reg, error) {
	i, b := (off+stackSize)/8, (off+stackSize)%8
	s := st.stack[i]
	if s.spilled.typ != regUninit {
		if size == 8 {
			return s.spilled, nil
		}
		if s.spilled.typ.pointer() {
			return reg{}, refuse(unix.EACCES, "corrupted spill memory")
		}
		return unknownScalar, nil
	}
	if mask := uint8((1<<size - 1) << b); s.written&mask != mask && !uninit {
		return reg{}, refuse(unix.EACCES, "invalid read from stack off %d+0 size %d", off, size)
	}
	return unknownScalar, nil
}

// memArg checks a helper's pointer argument to n bytes it reads: stack
// bytes all written (unless uninit allows), a spilled pointer not being
// bytes to read, or a map value.
func (v *verifier) memArg(st *state, r uint8, n int) error {
	p := st.regs[r]
	switch p.typ {
	case regStack:
		off := int(p.off)
		if off < -stackSize || off+n > 0 {
			return refuse(unix.EACCES, "invalid indirect access to stack R%d off=%d size=%d", r, off, n)
		}
		for at := off; at < off+n; at++ {
			s := st.stack[(at+stackSize)/8]
			written := s.written&(1<<((at+stackSize)%8)) != 0
			if s.spilled.typ.pointer() || (s.spilled.typ == regUninit && !written && !v.uninitStack) {
				return refuse(unix.EACCES, "invalid indirect read from stack R%d off %d+%d size %d", r, off, at-off, n)
			}
		}
		return nil
	case regMapValue:
		return mapValueAccess(p.m, int(p.off), n, false)
	case regUninit:
		return refuse(unix.EACCES, "R%d !read_ok", r)
	}
	return refuse(unix.EACCES, "R%d type=%s expected=fp, map_value", r, p.typ)
}

// jump checks a jump, call or exit.
func (v *verifier) jump(pc int, in insn, st *state) (int, bool, error) {
	op, is64 := in.op(), in.class() == classJMP
	switch {
	case op == jmpJA:
		if in.useReg() || in.src != 0 || in.dst != 0 || (is64 && in.imm != 0) || (!is64 && in.off != 0) {
			return 0, false, refuse(unix.EINVAL, "BPF_JA uses reserved fields")
		}
		if is64 {
			return pc + 1 + int(in.off), false, nil
		}
		return pc + 1 + int(in.imm), false, nil
	case op == jmpEXIT && is64:
		if in.useReg() || in.src != 0 || in.dst != 0 || in.off != 0 || in.imm != 0 {
			return 0, false, refuse(unix.EINVAL, "BPF_EXIT uses reserved fields")
		}
		if err := readable(st, 0); err != nil {
			return 0, false, err
		}
		if st.regs[0].typ.pointer() {
			return 0, false, refuse(unix.EACCES, "R0 leaks addr as return value")
		}
		return 0, true, nil
	case op == jmpCALL && is64:
		if in.useReg() || in.dst != 0 || in.off != 0 {
			return 0, false, refuse(unix.EINVAL, "BPF_CALL uses reserved fields")
		}
		if in.src != 0 {
			return 0, false, refuse(unix.EINVAL, "calls of BPF functions and kfuncs are not supported")
		}
		return pc + 1, false, v.call(in.imm, st)
	case !jmpConds[op]:
		return 0, false, refuse(unix.EINVAL, "invalid BPF_JMP/JMP32 opcode %x", op)
	}
	if (in.useReg() && in.imm != 0) || (!in.useReg() && in.src != 0) {
		return 0, false, refuse(unix.EINVAL, "BPF_JMP/JMP32 uses reserved fields")
	}
	if err := readable(st, in.dst); err != nil {
		return 0, false, err
	}
	src := scalarOf(uint64(int64(in.imm)))
	if in.useReg() {
		if err := readable(st, in.src); err != nil {
			return 0, false, err
		}
		src = st.regs[in.src]
	}
	dst, target := st.regs[in.dst], pc+1+int(in.off)
	if dst.typ.pointer() || src.typ.pointer() {
		if dst.typ != regMapValueOrNull || in.useReg() || in.imm != 0 || !is64 || (op != unix.BPF_JEQ && op != unix.BPF_JNE) {
			return 0, false, refuse(unix.EACCES, "R%d pointer comparison prohibited", in.dst)
		}
		isNull, notNull := *st, *st
		markNull(&isNull, dst.id, true)
		markNull(&notNull, dst.id, false)
		taken, fallthru := &isNull, &notNull
		if op == unix.BPF_JNE {
			taken, fallthru = &notNull, &isNull
		}
		if err := v.push(target, taken); err != nil {
			return 0, false, err
		}
		*st = *fallthru
		return pc + 1, false, nil
	}
	if dst.known && src.known {
		if cond(op, is64, dst.val, src.val) {
			return target, false, nil
		}
		return pc + 1, false, nil
	}
	taken := *st
	if src.known && is64 && (op == unix.BPF_JEQ || op == unix.BPF_JNE) {
		equal := &taken
		if op == unix.BPF_JNE {
			equal = st
		}
		equal.regs[in.dst] = src
	}
	if err := v.push(target, &taken); err != nil {
		return 0, false, err
	}
	return pc + 1, false, nil
}

// markNull resolves a lookup's answer (id) in every register and spill
// that holds it: 0 when it compared equal to NULL, the value when not.
func markNull(st *state, id uint32, null bool) {
	resolve := func(r *reg) {
		if r.typ != regMapValueOrNull || r.id != id {
			return
		}
		if null {
			*r = scalarOf(0)
		} else {
			*r = reg{typ: regMapValue, m: r.m}
		}
	}
	for i := range st.regs {
		resolve(&st.regs[i])
	}
	for i := range st.stack {
		resolve(&st.stack[i].spilled)
	}
}

// call checks a helper call's arguments; R1-R5 are then unreadable and
// R0 holds what the helper returns.
func (v *verifier) call(fn int32, st *state) error {
	ret := unknownScalar
	switch fn {
	case linux.BPFFuncMapLookupElem, linux.BPFFuncMapUpdateElem, linux.BPFFuncMapDeleteElem:
		if err := readable(st, 1); err != nil {
			return err
		}
		m := st.regs[1].m
		if st.regs[1].typ != regMap {
			return refuse(unix.EACCES, "R1 type=%s expected=map_ptr", st.regs[1].typ)
		}
		if err := v.memArg(st, 2, int(m.KeySize)); err != nil {
			return err
		}
		switch fn {
		case linux.BPFFuncMapLookupElem:
			v.lookups++
			ret = reg{typ: regMapValueOrNull, m: m, id: v.lookups}
		case linux.BPFFuncMapUpdateElem:
			if err := v.memArg(st, 3, int(m.ValueSize)); err != nil {
				return err
			}
			if err := readable(st, 4); err != nil {
				return err
			}
			if st.regs[4].typ.pointer() {
				return refuse(unix.EACCES, "R4 type=%s expected=scalar", st.regs[4].typ)
			}
		}
		if fn != linux.BPFFuncMapLookupElem && m.Flags&unix.BPF_F_RDONLY_PROG != 0 {
			return refuse(unix.EACCES, "write into map forbidden")
		}
	case linux.BPFFuncGetPrandomU32:
	default:
		return refuse(unix.EINVAL, "invalid func unknown#%d: the helpers offered are map_lookup_elem, map_update_elem, map_delete_elem and get_prandom_u32", fn)
	}
	for r := 1; r <= 5; r++ {
		st.regs[r] = reg{}
	}
	st.regs[0] = ret
	return nil
}
