package kprof

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/pprof/profile"

	"github.com/jiege-go/jiege/profiling"
)

// TestLayout checks that the byte layout the host decodes is the one the
// kernel's structures have.
func TestLayout(t *testing.T) {
	var h profiling.Header
	var s profiling.Sample
	var m profiling.Mapping
	checks := []struct {
		name      string
		got, want uintptr
	}{
		{"Header", unsafe.Sizeof(h), profiling.HeaderSize},
		{"Header.Head", unsafe.Offsetof(h.Head), 24},
		{"Sample", unsafe.Sizeof(s), profiling.SampleSize},
		{"Sample.PID", unsafe.Offsetof(s.PID), 8},
		{"Sample.Hart", unsafe.Offsetof(s.Hart), 12},
		{"Mapping", unsafe.Sizeof(m), profiling.MappingSize},
		{"Mapping.FileHash", unsafe.Offsetof(m.FileHash), 40},
		{"Mapping.Since", unsafe.Offsetof(m.Since), 48},
		{"Ring.Samples", unsafe.Offsetof(profiling.Ring.Samples), profiling.HeaderSize},
		{"Ring", unsafe.Sizeof(profiling.Ring), profiling.HeaderSize + profiling.RingSamples*profiling.SampleSize},
		{"Mappings.Entries", unsafe.Offsetof(profiling.Mappings.Entries), 8},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, the host decodes %d", c.name, c.got, c.want)
		}
	}
}

// rawRing encodes a ring as the kernel leaves it: head samples written,
// sample i with pc 0x1000+i.
func rawRing(head uint64) []byte {
	b := make([]byte, profiling.HeaderSize+profiling.RingSamples*profiling.SampleSize)
	le := binary.LittleEndian
	le.PutUint64(b, profiling.Magic)
	le.PutUint64(b[8:], 1000)
	le.PutUint64(b[16:], 10_000_000)
	le.PutUint64(b[24:], head)
	for i := uint64(0); i < head; i++ {
		s := b[profiling.HeaderSize+(i%profiling.RingSamples)*profiling.SampleSize:]
		le.PutUint64(s, 0x1000+i)
		le.PutUint32(s[8:], uint32(i%3))
		le.PutUint32(s[12:], 1)
	}
	return b
}

func rawMappings(ms ...profiling.Mapping) []byte {
	b := make([]byte, 8+profiling.MaxMappings*profiling.MappingSize)
	le := binary.LittleEndian
	le.PutUint64(b, uint64(len(ms)))
	for i, m := range ms {
		e := b[8+i*profiling.MappingSize:]
		for j, v := range []uint64{m.PID, m.Start, m.End, m.Offset, m.FileSize, m.FileHash, m.Since} {
			le.PutUint64(e[8*j:], v)
		}
	}
	return b
}

func TestDecode(t *testing.T) {
	m := profiling.Mapping{PID: 7, Start: 0x2000, End: 0x3000, Offset: 0x1000, FileSize: 99, FileHash: 42, Since: 3}
	d, err := Decode(rawRing(10), rawMappings(m), 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Samples) != 6 || d.Lost != 0 || d.Samples[0].PC != 0x1004 || d.Samples[5].PC != 0x1009 || d.Samples[0].PID != 1 || d.Samples[0].Hart != 1 {
		t.Errorf("window [4,10): got %d samples, lost %d, first %+v", len(d.Samples), d.Lost, d.Samples[0])
	}
	if len(d.Mappings) != 1 || d.Mappings[0] != m {
		t.Errorf("mappings: got %+v, want %+v", d.Mappings, m)
	}
	// The ring wrapped past the window's start: the oldest samples are gone.
	head := uint64(profiling.RingSamples + 5)
	d, err = Decode(rawRing(head), rawMappings(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(d.Samples)) != profiling.RingSamples || d.Lost != 3 || d.Samples[0].PC != 0x1005 || d.Samples[len(d.Samples)-1].PC != 0x1000+head-1 {
		t.Errorf("wrapped: %d samples, lost %d, first pc %#x", len(d.Samples), d.Lost, d.Samples[0].PC)
	}
	if _, err := Decode(rawRing(3), rawMappings(), 4); err == nil {
		t.Error("a head behind the window's start decoded")
	}
	off := rawRing(3)
	off[0] = 0
	if _, err := Decode(off, rawMappings(), 0); err == nil || !strings.Contains(err.Error(), "profile=") {
		t.Errorf("a ring without the magic: %v", err)
	}
}

// elfSymbol returns the address of a symbol in the ELF file at path.
func elfSymbol(t *testing.T, path, name string) uint64 {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0
}

// TestBuild symbolises samples against testdata/prog, a Go ELF program,
// standing in both for the kernel and for a user program in a root
// filesystem, and checks the written profile against what the Go
// runtime in that program says about its own function.
func TestBuild(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "prog")
	if out, err := exec.Command("go", "build", "-o", exe, "./testdata/prog").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	var name, wantFile string
	var runtimePC uint64
	var wantLine, result int
	if _, err := fmt.Sscan(string(out), &name, &runtimePC, &wantFile, &wantLine, &result); err != nil {
		t.Fatalf("prog printed %q: %v", out, err)
	}
	// The ELF address of the same pc (the program may have run
	// position-independent, elsewhere).
	pc := elfSymbol(t, exe, name) + 8

	syms, err := OpenGo(exe)
	if err != nil {
		t.Fatal(err)
	}
	if gotFn, file, line, ok := syms.Lookup(pc); !ok || gotFn != name || file != wantFile || line != wantLine {
		t.Fatalf("Lookup(%#x) = %s %s:%d %v, the runtime says %s %s:%d", pc, gotFn, file, line, ok, name, wantFile, wantLine)
	}

	// The same binary as /bin/prog of a tree, mapped by a process at a
	// different address than its own.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "prog"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	var text elf.ProgHeader
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			text = p.ProgHeader
		}
	}
	f.Close()
	const userBase = 0x7000_0000
	segStart := text.Vaddr &^ 0xfff
	m := profiling.Mapping{PID: 5, Start: userBase, End: userBase + (text.Vaddr+text.Memsz-segStart+0xfff)&^0xfff,
		Offset: text.Off &^ 0xfff, FileSize: uint64(len(data)), FileHash: profiling.FileHash(data)}
	userPC := userBase + pc - segStart

	d := &Dump{
		Header: profiling.Header{Magic: profiling.Magic, RateHz: 500, Timebase: 10_000_000, Head: 6},
		Samples: []profiling.Sample{
			{PC: pc}, {PC: pc, Hart: 1}, {PC: pc},
			{PC: userPC, PID: 5}, {PC: userPC, PID: 5},
			{PC: 0x1234, PID: 9}, // no mapping recorded for it
		},
		Mappings: []profiling.Mapping{m},
	}
	files, err := FindFiles(root, d.Mappings)
	if err != nil {
		t.Fatal(err)
	}
	if got := files.Path(m); got != "/bin/prog" {
		t.Fatalf("the mapping's file: %q, want /bin/prog", got)
	}
	p, err := Build(d, Sources{Kernel: syms, KernelPath: exe, Files: files}, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := profile.Parse(io.Reader(&buf))
	if err != nil {
		t.Fatal(err)
	}
	if got.Period != 2_000_000 || len(got.Sample) != 6 {
		t.Fatalf("period %d, %d samples; want 2000000 ns, 6", got.Period, len(got.Sample))
	}
	byName := map[string]int64{}
	pids := map[string]int64{}
	for _, s := range got.Sample {
		l := s.Location[0].Line[0]
		byName[l.Function.Name] += s.Value[0]
		pids[s.Label["pid"][0]] += s.Value[1]
		if s.Location[0].Mapping == nil && l.Function.Name != "[user]" {
			t.Errorf("%s: location without a mapping", l.Function.Name)
		}
	}
	// Kernel samples carry the line the runtime names; user ones the ELF
	// symbol at the file offset.
	if byName[name] != 5 || byName["[user]"] != 1 {
		t.Errorf("samples by function: %v; want 5 in %s (3 kernel, 2 user) and 1 unmapped", byName, name)
	}
	if pids["kernel"] != 3*2_000_000 || pids["5"] != 2*2_000_000 || pids["9"] != 2_000_000 {
		t.Errorf("cpu ns by pid: %v", pids)
	}
	for _, l := range got.Location {
		if l.Mapping != nil && l.Mapping.File == exe && l.Line[0].Line != int64(wantLine) {
			t.Errorf("kernel location line %d, want %d", l.Line[0].Line, wantLine)
		}
		if l.Mapping != nil && l.Mapping.File == "/bin/prog" && l.Address != userPC {
			t.Errorf("user location address %#x, want %#x", l.Address, userPC)
		}
	}
}
