package bpf

import (
	"encoding/binary"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/jiege-go/jiege/abi/linux"
	"github.com/jiege-go/jiege/mm"
)

// Instruction builders, as the BPF_* macros of Linux's filter.h.

func ins(code uint8, dst, src uint8, off int16, imm int32) linux.BPFInsn {
	return linux.BPFInsn{Code: code, Regs: dst | src<<4, Off: off, Imm: imm}
}

func mov64Imm(dst uint8, imm int32) linux.BPFInsn {
	return ins(classALU64|unix.BPF_MOV|unix.BPF_K, dst, 0, 0, imm)
}
func mov32Imm(dst uint8, imm int32) linux.BPFInsn {
	return ins(classALU|unix.BPF_MOV|unix.BPF_K, dst, 0, 0, imm)
}
func mov64Reg(dst, src uint8) linux.BPFInsn { return ins(classALU64|unix.BPF_MOV|srcX, dst, src, 0, 0) }
func alu64Imm(op, dst uint8, imm int32) linux.BPFInsn {
	return ins(classALU64|op|unix.BPF_K, dst, 0, 0, imm)
}
func alu32Imm(op, dst uint8, imm int32) linux.BPFInsn {
	return ins(classALU|op|unix.BPF_K, dst, 0, 0, imm)
}
func alu64Reg(op, dst, src uint8) linux.BPFInsn { return ins(classALU64|op|srcX, dst, src, 0, 0) }
func ldx(size, dst, src uint8, off int16) linux.BPFInsn {
	return ins(classLDX|modeMEM|size, dst, src, off, 0)
}
func stx(size, dst, src uint8, off int16) linux.BPFInsn {
	return ins(classSTX|modeMEM|size, dst, src, off, 0)
}
func st(size, dst uint8, off int16, imm int32) linux.BPFInsn {
	return ins(classST|modeMEM|size, dst, 0, off, imm)
}
func jmpImm(op, dst uint8, imm int32, off int16) linux.BPFInsn {
	return ins(classJMP|op|unix.BPF_K, dst, 0, off, imm)
}
func call(fn int32) linux.BPFInsn { return ins(classJMP|jmpCALL, 0, 0, 0, fn) }
func exit() linux.BPFInsn         { return ins(classJMP|jmpEXIT, 0, 0, 0, 0) }
func ldImm64(dst uint8, v uint64) []linux.BPFInsn {
	return []linux.BPFInsn{ins(classLD|modeIMM|unix.BPF_DW, dst, 0, 0, int32(uint32(v))), ins(0, 0, 0, 0, int32(uint32(v>>32)))}
}

// ldMapFD loads map number fd of the test's table (see load).
func ldMapFD(dst uint8, fd int32) []linux.BPFInsn {
	return []linux.BPFInsn{ins(classLD|modeIMM|unix.BPF_DW, dst, pseudoMapFD, 0, fd), ins(0, 0, 0, 0, 0)}
}

func prog(parts ...any) []linux.BPFInsn {
	var out []linux.BPFInsn
	for _, p := range parts {
		switch p := p.(type) {
		case linux.BPFInsn:
			out = append(out, p)
		case []linux.BPFInsn:
			out = append(out, p...)
		}
	}
	return out
}

// lookupKey0 is map_lookup_elem(map fd 3, &(u32)key) into R0, as the LTP
// programs do it.
func lookupKey(key int32) []linux.BPFInsn {
	return prog(ldMapFD(1, 3), mov64Reg(2, regFP), alu64Imm(unix.BPF_ADD, 2, -4),
		st(unix.BPF_W, 2, 0, key), call(linux.BPFFuncMapLookupElem))
}

func load(t *testing.T, m *Map, insns []linux.BPFInsn) (*Prog, string, error) {
	t.Helper()
	return Load(ProgSpec{Insns: insns}, func(fd int32) (*Map, error) {
		if fd != 3 || m == nil {
			return nil, unix.EBADF
		}
		m.IncRef()
		return m, nil
	})
}

func newArray(t *testing.T, n uint32) *Map {
	t.Helper()
	m, err := NewMap(MapSpec{Type: unix.BPF_MAP_TYPE_ARRAY, KeySize: 4, ValueSize: 8, MaxEntries: n})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func arrayGet(t *testing.T, m *Map, i uint32) uint64 {
	t.Helper()
	v := make([]byte, 8)
	if err := m.Lookup(binary.LittleEndian.AppendUint32(nil, i), v); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint64(v)
}

func TestMapSpecChecks(t *testing.T) {
	for _, c := range []struct {
		spec MapSpec
		err  error
	}{
		{MapSpec{Type: unix.BPF_MAP_TYPE_ARRAY, KeySize: 4, ValueSize: 8, MaxEntries: 1}, nil},
		{MapSpec{Type: unix.BPF_MAP_TYPE_ARRAY, KeySize: 8, ValueSize: 8, MaxEntries: 1}, unix.EINVAL},
		{MapSpec{Type: unix.BPF_MAP_TYPE_ARRAY, KeySize: 4, ValueSize: 8}, unix.EINVAL},
		{MapSpec{Type: unix.BPF_MAP_TYPE_ARRAY, KeySize: 4, ValueSize: kmallocMax + 1, MaxEntries: 1}, unix.E2BIG},
		{MapSpec{Type: unix.BPF_MAP_TYPE_ARRAY, KeySize: 4, ValueSize: 8, MaxEntries: 1, Flags: unix.BPF_F_NO_PREALLOC}, unix.EINVAL},
		{MapSpec{Type: unix.BPF_MAP_TYPE_HASH, KeySize: 8, ValueSize: 8, MaxEntries: 1, Flags: unix.BPF_F_NO_PREALLOC}, nil},
		{MapSpec{Type: unix.BPF_MAP_TYPE_HASH, KeySize: 0, ValueSize: 8, MaxEntries: 1}, unix.EINVAL},
		{MapSpec{Type: unix.BPF_MAP_TYPE_HASH, KeySize: 8, ValueSize: kmallocMax, MaxEntries: 1}, unix.E2BIG},
		{MapSpec{Type: unix.BPF_MAP_TYPE_HASH, KeySize: 8, ValueSize: 8, MaxEntries: 1, Flags: unix.BPF_F_RDONLY | unix.BPF_F_WRONLY}, unix.EINVAL},
		{MapSpec{Type: unix.BPF_MAP_TYPE_PERCPU_ARRAY, KeySize: 4, ValueSize: 8, MaxEntries: 1}, unix.EINVAL},
	} {
		if err := c.spec.Check(); err != c.err {
			t.Errorf("%+v: %v, want %v", c.spec, err, c.err)
		}
	}
}

func TestArrayMap(t *testing.T) {
	before := mm.Charged.Total()
	m := newArray(t, 2)
	key := func(i uint32) []byte { return binary.LittleEndian.AppendUint32(nil, i) }
	val := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	if got := arrayGet(t, m, 1); got != 0 {
		t.Errorf("a new array's value is %d", got)
	}
	if err := m.Update(key(1), val(7), unix.BPF_ANY); err != nil || arrayGet(t, m, 1) != 7 {
		t.Errorf("update: %v, value %d", err, arrayGet(t, m, 1))
	}
	for _, c := range []struct {
		key   uint32
		flags uint64
		err   error
	}{
		{0, unix.BPF_NOEXIST, unix.EEXIST},
		{2, unix.BPF_ANY, unix.E2BIG},
		{0, 3, unix.EINVAL},
		{0, unix.BPF_EXIST, nil},
	} {
		if err := m.Update(key(c.key), val(1), c.flags); err != c.err {
			t.Errorf("update [%d] flags %d: %v, want %v", c.key, c.flags, err, c.err)
		}
	}
	if err := m.Lookup(key(2), make([]byte, 8)); err != unix.ENOENT {
		t.Errorf("lookup past the end: %v", err)
	}
	if err := m.Delete(key(0)); err != unix.EINVAL {
		t.Errorf("delete: %v", err)
	}
	for _, c := range []struct {
		key  []byte
		next uint32
		err  error
	}{{nil, 0, nil}, {key(0), 1, nil}, {key(1), 0, unix.ENOENT}, {key(9), 0, nil}} {
		next, err := m.NextKey(c.key)
		if err != c.err || (err == nil && binary.LittleEndian.Uint32(next) != c.next) {
			t.Errorf("next key after %v: %v %v, want %d %v", c.key, next, err, c.next, c.err)
		}
	}
	m.DecRef()
	if after := mm.Charged.Total(); after != before {
		t.Errorf("charged %d before, %d after", before, after)
	}
}

func TestHashMap(t *testing.T) {
	before := mm.Charged.Total()
	m, err := NewMap(MapSpec{Type: unix.BPF_MAP_TYPE_HASH, KeySize: 2, ValueSize: 3, MaxEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 3)
	if err := m.Lookup([]byte("ab"), out); err != unix.ENOENT {
		t.Errorf("lookup of an empty map: %v", err)
	}
	if _, err := m.NextKey(nil); err != unix.ENOENT {
		t.Errorf("next key of an empty map: %v", err)
	}
	steps := []struct {
		key, value string
		flags      uint64
		err        error
	}{
		{"ab", "xyz", unix.BPF_EXIST, unix.ENOENT},
		{"ab", "abc", unix.BPF_NOEXIST, nil},
		{"ab", "abd", unix.BPF_NOEXIST, unix.EEXIST},
		{"cd", "cde", unix.BPF_ANY, nil},
		{"ef", "efg", unix.BPF_ANY, unix.E2BIG},
		{"ab", "ABC", unix.BPF_ANY, nil}, // replacing in a full map
	}
	for _, s := range steps {
		if err := m.Update([]byte(s.key), []byte(s.value), s.flags); err != s.err {
			t.Errorf("update %s=%s flags %d: %v, want %v", s.key, s.value, s.flags, err, s.err)
		}
	}
	if err := m.Lookup([]byte("ab"), out); err != nil || string(out) != "ABC" {
		t.Errorf("lookup ab: %q %v", out, err)
	}
	var keys []string
	for k, err := m.NextKey(nil); err == nil; k, err = m.NextKey(k) {
		keys = append(keys, string(k))
	}
	if strings.Join(keys, ",") != "ab,cd" {
		t.Errorf("keys in order: %v", keys)
	}
	if k, err := m.NextKey([]byte("zz")); err != nil || string(k) != "ab" {
		t.Errorf("next key after a missing one: %q %v", k, err)
	}
	if err := m.Delete([]byte("ab")); err != nil {
		t.Error(err)
	}
	if err := m.Delete([]byte("ab")); err != unix.ENOENT {
		t.Errorf("delete again: %v", err)
	}
	if err := m.Update([]byte("ef"), []byte("efg"), unix.BPF_ANY); err != nil {
		t.Errorf("update after a delete made room: %v", err)
	}
	m.DecRef()
	if after := mm.Charged.Total(); after != before {
		t.Errorf("charged %d before, %d after", before, after)
	}
}

// The programs of LTP's bpf_prog01 and bpf_prog02: a filter that writes
// a map, and 64-bit arithmetic with a constant past 32 bits.
func TestProgWritesMap(t *testing.T) {
	m := newArray(t, 2)
	defer m.DecRef()
	p, log, err := load(t, m, prog(
		mov64Imm(6, 1),
		lookupKey(0),
		jmpImm(unix.BPF_JEQ, 0, 0, 17),
		mov64Reg(3, 0),
		ldImm64(4, 1<<60),
		alu64Reg(unix.BPF_ADD, 4, 6),
		stx(unix.BPF_DW, 3, 4, 0),
		lookupKey(1),
		jmpImm(unix.BPF_JEQ, 0, 0, 5),
		mov64Reg(3, 0),
		ldImm64(4, 1<<60),
		alu64Reg(unix.BPF_SUB, 4, 6),
		stx(unix.BPF_DW, 3, 4, 0),
		mov64Imm(0, 0),
		exit(),
	))
	if err != nil {
		t.Fatalf("load: %v: %s", err, log)
	}
	if !strings.HasPrefix(log, "processed ") {
		t.Errorf("log: %q", log)
	}
	if r := p.Filter([]byte("Ahoj!")); r != 0 {
		t.Errorf("returned %d", r)
	}
	if a, b := arrayGet(t, m, 0), arrayGet(t, m, 1); a != 1<<60+1 || b != 1<<60-1 {
		t.Errorf("map holds %#x %#x", a, b)
	}
	p.DecRef()
}

// A filter returns how much of the datagram to keep: here its length
// less 2, read from the context, and 0 (drop) for short ones.
func TestFilterReadsLen(t *testing.T) {
	p, log, err := load(t, nil, prog(
		ldx(unix.BPF_W, 0, 1, 0),
		jmpImm(unix.BPF_JGT, 0, 3, 2),
		mov64Imm(0, 0),
		exit(),
		alu64Imm(unix.BPF_SUB, 0, 2),
		exit(),
	))
	if err != nil {
		t.Fatalf("load: %v: %s", err, log)
	}
	defer p.DecRef()
	for _, c := range []struct {
		data string
		want uint32
	}{{"hello", 3}, {"abc", 0}} {
		if got := p.Filter([]byte(c.data)); got != c.want {
			t.Errorf("filter(%q) = %d, want %d", c.data, got, c.want)
		}
	}
}

// A pointer spilled to the stack comes back a pointer; cb[] is scratch
// the program may write and read.
func TestSpillAndScratch(t *testing.T) {
	m := newArray(t, 1)
	defer m.DecRef()
	p, log, err := load(t, m, prog(
		st(unix.BPF_W, 1, 48, 5), // cb[0] = 5
		ldx(unix.BPF_W, 6, 1, 48),
		lookupKey(0),
		jmpImm(unix.BPF_JNE, 0, 0, 1),
		exit(),
		stx(unix.BPF_DW, regFP, 0, -16), // spill the value pointer
		mov64Imm(0, 0),
		ldx(unix.BPF_DW, 7, regFP, -16),
		stx(unix.BPF_DW, 7, 6, 0),
		mov64Imm(0, 1),
		exit(),
	))
	if err != nil {
		t.Fatalf("load: %v: %s", err, log)
	}
	defer p.DecRef()
	if r := p.Filter([]byte("x")); r != 1 || arrayGet(t, m, 0) != 5 {
		t.Errorf("returned %d, map holds %d", r, arrayGet(t, m, 0))
	}
}

// Programs the verifier must refuse, with Linux's errno and a line in
// the log.
func TestVerifierRefuses(t *testing.T) {
	storeR0 := func(parts ...any) []linux.BPFInsn {
		return prog(lookupKey(0), jmpImm(unix.BPF_JNE, 0, 0, 1), exit(), prog(parts...), mov64Imm(0, 0), exit())
	}
	for _, c := range []struct {
		name  string
		insns []linux.BPFInsn
		errno unix.Errno
		log   string
	}{
		// LTP bpf_prog03 (CVE-2017-16995): a 32-bit -1 is 0xffffffff,
		// so the pointer moves 64 bytes before the value.
		{"sign extension", storeR0(mov32Imm(1, -1), alu64Imm(unix.BPF_ADD, 1, 1), alu64Imm(unix.BPF_RSH, 1, 26),
			mov64Reg(2, 0), alu64Reg(unix.BPF_SUB, 2, 1), stx(unix.BPF_DW, 2, 1, 0)),
			unix.EACCES, "invalid access to map value, value_size=8 off=-64 size=8"},
		// LTP bpf_prog04 (CVE-2018-18445): a 32-bit shift truncates first.
		{"32-bit shift", prog(mov64Imm(8, 2), alu64Imm(unix.BPF_LSH, 8, 31), alu32Imm(unix.BPF_RSH, 8, 31),
			alu32Imm(unix.BPF_SUB, 8, 2), storeR0(alu64Reg(unix.BPF_ADD, 0, 8), stx(unix.BPF_DW, 0, 8, 0))),
			unix.EACCES, "makes map_value pointer be out of bounds"},
		{"unknown offset", storeR0(ldx(unix.BPF_DW, 1, 0, 0), alu64Reg(unix.BPF_ADD, 0, 1), st(unix.BPF_B, 0, 0, 1)),
			unix.EACCES, "unknown scalar"},
		{"null not checked", prog(lookupKey(0), st(unix.BPF_DW, 0, 0, 1), mov64Imm(0, 0), exit()),
			unix.EACCES, "invalid mem access 'map_value_or_null'"},
		{"past the value", storeR0(st(unix.BPF_W, 0, 8, 1)), unix.EACCES, "invalid access to map value"},
		{"uninitialized register", prog(mov64Reg(0, 5), exit()), unix.EACCES, "R5 !read_ok"},
		{"no return value", prog(exit()), unix.EACCES, "R0 !read_ok"},
		{"uninitialized stack", prog(ldx(unix.BPF_DW, 0, regFP, -8), exit()), unix.EACCES, "invalid read from stack"},
		{"key not written", prog(ldMapFD(1, 3), mov64Reg(2, regFP), alu64Imm(unix.BPF_ADD, 2, -4),
			call(linux.BPFFuncMapLookupElem), mov64Imm(0, 0), exit()), unix.EACCES, "invalid indirect read from stack"},
		{"stack overflow", prog(st(unix.BPF_DW, regFP, -520, 0), mov64Imm(0, 0), exit()), unix.EACCES, "invalid stack off=-520"},
		{"frame pointer write", prog(mov64Imm(regFP, 0), exit()), unix.EACCES, "frame pointer is read only"},
		{"write len", prog(st(unix.BPF_W, 1, 0, 1), mov64Imm(0, 0), exit()), unix.EACCES, "invalid bpf_context access"},
		{"read data", prog(ldx(unix.BPF_W, 0, 1, 76), exit()), unix.EACCES, "invalid bpf_context access"},
		{"return a pointer", prog(mov64Reg(0, regFP), exit()), unix.EACCES, "R0 leaks addr"},
		{"pointer into map", storeR0(stx(unix.BPF_DW, 0, regFP, 0)), unix.EACCES, "leaks addr into map"},
		{"32-bit pointer math", prog(mov64Reg(0, regFP), alu32Imm(unix.BPF_ADD, 0, 1), exit()), unix.EACCES, "32-bit pointer"},
		{"pointer comparison", prog(mov64Imm(0, 0), jmpImm(unix.BPF_JGT, regFP, 0, 0), exit()), unix.EACCES, "pointer comparison"},
		{"unknown helper", prog(call(6), mov64Imm(0, 0), exit()), unix.EINVAL, "invalid func unknown#6"},
		{"map argument", prog(mov64Imm(1, 0), mov64Reg(2, regFP), call(linux.BPFFuncMapLookupElem), mov64Imm(0, 0), exit()),
			unix.EACCES, "R1 type=scalar expected=map_ptr"},
		{"back edge", prog(mov64Imm(0, 0), jmpImm(unix.BPF_JEQ, 0, 0, -2), exit()), unix.EINVAL, "back-edge from insn 1 to 0"},
		{"out of range", prog(mov64Imm(0, 0), jmpImm(unix.BPF_JEQ, 0, 0, 5), exit()), unix.EINVAL, "jump out of range"},
		{"into ld_imm64", prog(mov64Imm(0, 0), jmpImm(unix.BPF_JEQ, 0, 0, 1), ldImm64(0, 1), exit()), unix.EINVAL, "middle of ldimm64"},
		{"unreachable", prog(mov64Imm(0, 0), exit(), exit()), unix.EINVAL, "unreachable insn 2"},
		{"falls off", prog(mov64Imm(0, 0)), unix.EINVAL, "last insn is not an exit or jmp"},
		{"bad opcode", prog(ins(0xff, 0, 0, 0, 0), exit()), unix.EINVAL, "unknown opcode ff"},
		{"bad register", prog(mov64Imm(11, 0), exit()), unix.EINVAL, "R11 is invalid"},
		{"div by zero", prog(mov64Imm(0, 1), alu64Imm(unix.BPF_DIV, 0, 0), exit()), unix.EINVAL, "div by zero"},
		{"shift too far", prog(mov64Imm(0, 1), alu32Imm(unix.BPF_LSH, 0, 32), exit()), unix.EINVAL, "invalid shift 32"},
		{"bad map fd", prog(ldMapFD(1, 9), mov64Imm(0, 0), exit()), unix.EBADF, "fd 9 is not pointing to valid bpf_map"},
	} {
		m := newArray(t, 1)
		p, log, err := load(t, m, c.insns)
		if err != c.errno || !strings.Contains(log, c.log) {
			t.Errorf("%s: %v %q, want %v and %q", c.name, err, log, c.errno, c.log)
		}
		if p != nil {
			p.DecRef()
		}
		if m.refs.Load() != 1 {
			t.Errorf("%s: the map has %d references left", c.name, m.refs.Load())
		}
		m.DecRef()
	}
}

// Branches on what is known are followed one way only; a path count
// that doubles at each unknown branch is cut off (E2BIG), not walked.
func TestVerifierBounds(t *testing.T) {
	if _, _, err := load(t, nil, make([]linux.BPFInsn, maxInsns+1)); err != unix.E2BIG {
		t.Errorf("%d instructions: %v", maxInsns+1, err)
	}
	var insns []linux.BPFInsn
	insns = append(insns, ldx(unix.BPF_W, 2, 1, 0), mov64Imm(0, 0))
	for range 40 {
		insns = append(insns, jmpImm(unix.BPF_JGT, 2, 7, 1), alu64Imm(unix.BPF_ADD, 0, 1))
	}
	insns = append(insns, exit())
	if _, log, err := load(t, nil, insns); err != unix.E2BIG || !strings.Contains(log, "too large") {
		t.Errorf("2^40 paths: %v %q", err, log)
	}
	// The dead side of a known comparison is never walked: the store it
	// holds would be refused.
	p, log, err := load(t, nil, prog(mov64Imm(0, 1), jmpImm(unix.BPF_JEQ, 0, 1, 2),
		st(unix.BPF_W, 1, 0, 1), exit(), exit()))
	if err != nil {
		t.Errorf("known branch: %v %s", err, log)
	} else {
		p.DecRef()
	}
}

// A caller with CAP_PERFMON may read stack it never wrote, as on Linux:
// it reads the run's fresh zeroed stack.
func TestUninitStack(t *testing.T) {
	insns := prog(ldx(unix.BPF_DW, 0, regFP, -8), exit())
	p, _, err := Load(ProgSpec{Insns: insns, UninitStack: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.DecRef()
	if r := p.Filter([]byte("x")); r != 0 {
		t.Errorf("read %d", r)
	}
}

// The interpreter checks every access again: a program that escaped
// the verifier stops with 0 instead of reaching past its objects.
func TestInterpreterStopsOnFault(t *testing.T) {
	for _, insns := range [][]insn{
		{{code: classLDX | modeMEM | unix.BPF_DW, dst: 0, src: 1, off: 200}, {code: classJMP | jmpEXIT}},
		{{code: classST | modeMEM | unix.BPF_DW, dst: regFP, off: 0, imm: 1}, {code: classJMP | jmpEXIT}},
		{{code: classLDX | modeMEM | unix.BPF_DW, dst: 0, src: 2}, {code: classJMP | jmpEXIT}},
		{{code: classALU64 | unix.BPF_MOV | srcX, dst: 0, src: regFP}, {code: classJMP | jmpEXIT}},
		{{code: classJMP | jmpCALL, imm: linux.BPFFuncMapLookupElem}, {code: classJMP | jmpEXIT}},
		{{code: classJMP | jmpJA, off: -1}},
	} {
		p := &Prog{insns: insns}
		if r := p.Filter([]byte("data")); r != 0 {
			t.Errorf("%+v returned %d", insns, r)
		}
	}
}
