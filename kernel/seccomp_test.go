package kernel

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRunBPF runs classic BPF programs over a seccomp_data and compares
// their answers with what the instructions compute by hand.
func TestRunBPF(t *testing.T) {
	var data [seccompDataSize]byte
	binary.LittleEndian.PutUint32(data[0:], 63)        // nr
	binary.LittleEndian.PutUint32(data[16:], 0x0f0f00) // args[0] low word
	stmt := func(code uint16, k uint32) BPFInsn { return BPFInsn{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) BPFInsn { return BPFInsn{Code: code, JT: jt, JF: jf, K: k} }
	for _, c := range []struct {
		name string
		prog []BPFInsn
		want uint32
	}{
		{"load and return A", []BPFInsn{stmt(bpfLD|bpfW|bpfABS, 0), stmt(bpfRET|bpfA, 0)}, 63},
		{"arithmetic", []BPFInsn{stmt(bpfLD|bpfIMM, 10), stmt(bpfALU|bpfMUL|bpfK, 7), stmt(bpfALU|bpfSUB|bpfK, 6),
			stmt(bpfALU|bpfDIV|bpfK, 4), stmt(bpfALU|bpfLSH|bpfK, 3), stmt(bpfRET|bpfA, 0)}, (10*7 - 6) / 4 << 3},
		{"X and scratch memory", []BPFInsn{stmt(bpfLDX|bpfIMM, 5), stmt(bpfSTX, 2), stmt(bpfLD|bpfMEM, 2),
			stmt(bpfALU|bpfADD|bpfX, 0), stmt(bpfMISC|bpfTAX, 0), stmt(bpfALU|bpfXOR|bpfX, 0), stmt(bpfRET|bpfA, 0)}, 0},
		{"jset taken", []BPFInsn{stmt(bpfLD|bpfW|bpfABS, 16), jump(bpfJMP|bpfJSET|bpfK, 0x100, 0, 1),
			stmt(bpfRET|bpfK, 1), stmt(bpfRET|bpfK, 2)}, 1},
		{"jgt not taken, ja", []BPFInsn{stmt(bpfLD|bpfW|bpfABS, 0), jump(bpfJMP|bpfJGT|bpfK, 63, 0, 1),
			stmt(bpfRET|bpfK, 1), stmt(bpfJMP|bpfJA, 1), stmt(bpfRET|bpfK, 2), stmt(bpfRET|bpfK, 3)}, 3},
		{"division by a zero X", []BPFInsn{stmt(bpfLD|bpfIMM, 9), stmt(bpfLDX|bpfIMM, 0), stmt(bpfALU|bpfDIV|bpfX, 0),
			stmt(bpfRET|bpfK, 7)}, 0},
		{"negation", []BPFInsn{stmt(bpfLD|bpfIMM, 1), stmt(bpfALU|bpfNEG, 0), stmt(bpfRET|bpfA, 0)}, 0xffffffff},
	} {
		if err := checkSeccompProgram(c.prog); err != nil {
			t.Errorf("%s: refused: %v", c.name, err)
			continue
		}
		if got := runBPF(c.prog, &data); got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, got, c.want)
		}
	}
}

// TestCheckSeccompProgram checks programs the checker must refuse.
func TestCheckSeccompProgram(t *testing.T) {
	ret := BPFInsn{Code: bpfRET | bpfK}
	for name, prog := range map[string][]BPFInsn{
		"store then jump around it": {{Code: bpfJMP | bpfJEQ | bpfK, JT: 1}, {Code: bpfST, K: 1}, {Code: bpfLD | bpfMEM, K: 1}, ret},
		"scratch word 16":           {{Code: bpfST, K: 16}, ret},
		"shift by 32":               {{Code: bpfALU | bpfLSH | bpfK, K: 32}, ret},
		"modulo":                    {{Code: bpfALU | 0x90 | bpfK, K: 3}, ret},
		"no return at the end":      {ret, {Code: bpfLD | bpfIMM}},
	} {
		if err := checkSeccompProgram(prog); err != unix.EINVAL {
			t.Errorf("%s: %v, want EINVAL", name, err)
		}
	}
}
