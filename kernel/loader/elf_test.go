package loader

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"testing"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

type testSeg struct {
	typ, flags uint32
	vaddr, mem uint64
	data       []byte
}

// makeELF writes an ELF64 RISC-V file: the header, the program headers, then
// each segment's data at an offset congruent to its address modulo the page
// size. A segment with nil data covers the file's headers from offset 0, as
// the first PT_LOAD of a real executable does.
func makeELF(typ uint16, machine uint16, entry uint64, segs []testSeg) []byte {
	const ehsize, phsize = 64, 56
	offs := make([]uint64, len(segs))
	off := uint64(ehsize + phsize*len(segs))
	for i, s := range segs {
		if s.data == nil {
			continue
		}
		if s.typ == 1 { // PT_LOAD: keep offset ≡ vaddr (mod page)
			for off%mm.PageSize != s.vaddr%mm.PageSize {
				off++
			}
		}
		offs[i] = off
		off += uint64(len(s.data))
	}
	b := make([]byte, off)
	copy(b, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	le := binary.LittleEndian
	le.PutUint16(b[16:], typ)
	le.PutUint16(b[18:], machine)
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[24:], entry)
	le.PutUint64(b[32:], ehsize)
	le.PutUint16(b[52:], ehsize)
	le.PutUint16(b[54:], phsize)
	le.PutUint16(b[56:], uint16(len(segs)))
	for i, s := range segs {
		p := b[ehsize+phsize*i:]
		le.PutUint32(p[0:], s.typ)
		le.PutUint32(p[4:], s.flags)
		le.PutUint64(p[8:], offs[i])
		le.PutUint64(p[16:], s.vaddr)
		le.PutUint64(p[24:], s.vaddr)
		filesz := uint64(len(s.data))
		if s.data == nil {
			filesz = ehsize + phsize*uint64(len(segs))
		}
		le.PutUint64(p[32:], filesz)
		le.PutUint64(p[40:], s.mem)
		le.PutUint64(p[48:], mm.PageSize)
		copy(b[offs[i]:], s.data)
	}
	return b
}

func newAS(t *testing.T) *mm.AddressSpace {
	as, err := mm.NewAddressSpace(mmtest.New(t, 2048))
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func TestLoadELFExec(t *testing.T) {
	code := []byte{0x13, 0, 0, 0, 0x73, 0, 0, 0}
	data := []byte("initialised data")
	file := makeELF(elfETExec, elfEMRISCV, 0x10000, []testSeg{
		{elfPTInterp, elfPFR, 0, 0, []byte("/lib/ld-linux-riscv64-lp64d.so.1\x00")},
		{elfPTLoad, elfPFR | elfPFX, 0x10000, uint64(len(code)), code},
		{elfPTLoad, elfPFR | elfPFW, 0x12000, 0x3000, data},
	})
	as := newAS(t)
	img, err := LoadELF(as, file, 0x5555_0000, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if img.Entry != 0x10000 || img.Bias != 0 || img.Interp != "/lib/ld-linux-riscv64-lp64d.so.1" || img.End != 0x15000 || img.Phnum != 3 {
		t.Fatalf("image %+v", img)
	}
	got := make([]byte, len(code))
	if err := as.CopyIn(0x10000, got); err != nil || !bytes.Equal(got, code) {
		t.Fatalf("code %x %v", got, err)
	}
	bss := make([]byte, 16)
	if err := as.CopyIn(0x14ff0, bss); err != nil || !bytes.Equal(bss, make([]byte, 16)) {
		t.Fatalf("bss %x %v", bss, err)
	}
	if err := as.CopyOut(0x10000, []byte{1}); err == nil {
		t.Fatal("text segment writable")
	}
	if err := as.CopyOut(0x12000, []byte{1}); err != nil {
		t.Fatalf("data segment not writable: %v", err)
	}
}

func TestLoadELFDynBias(t *testing.T) {
	file := makeELF(elfETDyn, elfEMRISCV, 0x100, []testSeg{{elfPTLoad, elfPFR | elfPFX, 0, 0x1000, nil}})
	as := newAS(t)
	img, err := LoadELF(as, file, 0x40_0000, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if img.Entry != 0x40_0100 || img.Phdr != 0x40_0040 {
		t.Fatalf("entry %#x phdr %#x", img.Entry, img.Phdr)
	}
	magic := make([]byte, 4)
	if err := as.CopyIn(0x40_0000, magic); err != nil || string(magic) != "\x7fELF" {
		t.Fatalf("headers not loaded: %q %v", magic, err)
	}
}

func TestLoadELFRejectsMalformed(t *testing.T) {
	good := []testSeg{{elfPTLoad, elfPFR | elfPFX, 0x10000, 0x1000, []byte{1, 2, 3}}}
	cases := map[string][]byte{
		"x86-64":             makeELF(elfETExec, 62, 0x10000, good),
		"no loads":           makeELF(elfETExec, elfEMRISCV, 0x10000, []testSeg{{elfPTInterp, elfPFR, 0, 0, []byte("/x\x00")}}),
		"garbage":            []byte("#!/bin/sh\necho not an ELF\n"),
		"truncated":          makeELF(elfETExec, elfEMRISCV, 0x10000, good)[:70],
		"null page":          makeELF(elfETExec, elfEMRISCV, 0, []testSeg{{elfPTLoad, elfPFR, 0, 0x1000, []byte{1}}}),
		"kernel va":          makeELF(elfETExec, elfEMRISCV, 0x10000, []testSeg{{elfPTLoad, elfPFR, 0x3f_8000_0000, 0x1000, []byte{1}}}),
		"filesz>mem":         makeELF(elfETExec, elfEMRISCV, 0x10000, []testSeg{{elfPTLoad, elfPFR, 0x10000, 1, []byte{1, 2}}}),
		"phentsize":          patchELF(makeELF(elfETExec, elfEMRISCV, 0x10000, good), 54, 32),
		"phnum 0":            patchELF(makeELF(elfETExec, elfEMRISCV, 0x10000, good), 56, 0),
		"phdrs past the end": patchELF(makeELF(elfETExec, elfEMRISCV, 0x10000, good), 32, 1<<40),
		"32-bit":             patchELF(makeELF(elfETExec, elfEMRISCV, 0x10000, good), 4, 1),
		"big-endian":         patchELF(makeELF(elfETExec, elfEMRISCV, 0x10000, good), 5, 2),
		"core file":          patchELF(makeELF(elfETExec, elfEMRISCV, 0x10000, good), 16, 4),
	}
	for name, file := range cases {
		if _, err := LoadELF(newAS(t), file, 0, nil, ""); !errors.Is(err, ErrNoExec) {
			t.Errorf("%s: err = %v, want ErrNoExec", name, err)
		}
	}
}

// patchELF writes v at off of an ELF file made by makeELF: a byte at
// e_ident, a half word in the header, a word for e_phoff.
func patchELF(b []byte, off int, v uint64) []byte {
	switch {
	case off < 16:
		b[off] = byte(v)
	case off == 32:
		binary.LittleEndian.PutUint64(b[off:], v)
	default:
		binary.LittleEndian.PutUint16(b[off:], uint16(v))
	}
	return b
}

// FuzzParseELF checks the kernel's reading of ELF and program headers
// against debug/elf: a file debug/elf reads as a RISC-V 64-bit executable
// or shared object with program headers of the native size, the kernel
// reads too, with the same entry point and program headers; and a file the
// kernel reads, debug/elf reads the same way whenever it reads it at all
// (it also reads section headers, which the kernel, as Linux, ignores).
func FuzzParseELF(f *testing.F) {
	f.Add(makeELF(elfETExec, elfEMRISCV, 0x10000, []testSeg{
		{elfPTInterp, elfPFR, 0, 0, []byte("/lib/ld.so\x00")},
		{elfPTLoad, elfPFR | elfPFX, 0x10000, 0x1000, []byte{1, 2, 3}},
	}))
	f.Add(makeELF(elfETDyn, elfEMRISCV, 0x100, []testSeg{{elfPTLoad, elfPFR | elfPFX, 0, 0x1000, nil}}))
	f.Add(arch.VDSOImage())
	f.Fuzz(func(t *testing.T, data []byte) {
		ours, err := parseELF(data)
		if err != nil && !errors.Is(err, ErrNoExec) {
			t.Fatalf("error %v does not wrap ErrNoExec", err)
		}
		theirs, theirErr := elf.NewFile(bytes.NewReader(data))
		if theirErr != nil {
			return
		}
		runnable := theirs.Class == elf.ELFCLASS64 && theirs.Data == elf.ELFDATA2LSB && theirs.Machine == elf.EM_RISCV &&
			(theirs.Type == elf.ET_EXEC || theirs.Type == elf.ET_DYN) && len(theirs.Progs) > 0 &&
			binary.LittleEndian.Uint16(data[54:]) == elfPhdrSize
		if runnable != (err == nil) {
			t.Fatalf("parseELF: %v; debug/elf reads %v %v %v %v with %d program headers", err, theirs.Class, theirs.Data, theirs.Machine, theirs.Type, len(theirs.Progs))
		}
		if err != nil {
			return
		}
		if ours.entry != theirs.Entry || uint16(ours.typ) != uint16(theirs.Type) || len(ours.progs) != len(theirs.Progs) {
			t.Fatalf("entry %#x type %d, %d program headers; debug/elf: %#x %v, %d", ours.entry, ours.typ, len(ours.progs), theirs.Entry, theirs.Type, len(theirs.Progs))
		}
		for i, p := range theirs.Progs {
			want := elfProg{uint32(p.Type), uint32(p.Flags), p.Off, p.Vaddr, p.Filesz, p.Memsz}
			if ours.progs[i] != want {
				t.Fatalf("program header %d: %+v, debug/elf %+v", i, ours.progs[i], want)
			}
		}
	})
}

func TestBuildStack(t *testing.T) {
	as := newAS(t)
	exe := &Image{Entry: 0x10078, Phdr: 0x10040, Phent: 56, Phnum: 4}
	interp := &Image{Bias: 0x3f_4000_0000}
	var random [16]byte
	for i := range random {
		random[i] = byte(i + 1)
	}
	sp, err := buildStack(as, []string{"/sbin/nginx", "-g", "daemon off;"}, []string{"PATH=/bin"}, exe, interp, "/sbin/nginx", StackSize, random)
	if err != nil {
		t.Fatal(err)
	}
	if sp%16 != 0 || sp > mm.UserStackTop || sp < mm.UserStackTop-StackSize {
		t.Fatalf("sp %#x", sp)
	}
	word := func(i int) uint64 {
		b := make([]byte, 8)
		if err := as.CopyIn(sp+uintptr(8*i), b); err != nil {
			t.Fatal(err)
		}
		return binary.LittleEndian.Uint64(b)
	}
	str := func(va uint64) string {
		s, err := as.CopyInString(uintptr(va), 256)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if word(0) != 3 || str(word(1)) != "/sbin/nginx" || str(word(3)) != "daemon off;" || word(4) != 0 {
		t.Fatalf("argc/argv wrong")
	}
	if str(word(5)) != "PATH=/bin" || word(6) != 0 {
		t.Fatalf("envp wrong")
	}
	aux := map[uint64]uint64{}
	for i := 7; ; i += 2 {
		k, v := word(i), word(i+1)
		if k == atNull {
			break
		}
		aux[k] = v
	}
	if aux[atPhdr] != 0x10040 || aux[atEntry] != 0x10078 || aux[atBase] != 0x3f_4000_0000 || aux[atPagesz] != 4096 || aux[atPhnum] != 4 {
		t.Fatalf("auxv %v", aux)
	}
	rb := make([]byte, 16)
	if err := as.CopyIn(uintptr(aux[atRandom]), rb); err != nil || !bytes.Equal(rb, random[:]) {
		t.Fatalf("AT_RANDOM bytes %x", rb)
	}
	if str(aux[atExecfn]) != "/sbin/nginx" {
		t.Fatal("AT_EXECFN")
	}
}

// TestLoadELFMapsTheFile: given the file, the loader maps its pages as
// Linux does instead of copying them: a second load of a program shares
// its code page with the first (one frame fewer than a copy), each page
// is mapped at once (no fault to come), the bytes of the file past the
// data segment's end read as the zeros of its bss, a write to data stays
// in its address space, and the file's frames go with the last mapping.
func TestLoadELFMapsTheFile(t *testing.T) {
	code := []byte{0x13, 0, 0, 0, 0x73, 0, 0, 0}
	data := []byte("initialised data")
	img := makeELF(elfETExec, elfEMRISCV, 0x10000, []testSeg{
		{elfPTLoad, elfPFR | elfPFX, 0x10000, uint64(len(code)), code},
		{elfPTLoad, elfPFR | elfPFW, 0x12000, 0x3000, data},
	})
	img = append(img, "not bss"...) // on the data segment's last page, past its end
	node := &fs.Node{Mode: 0o755, Data: img}
	mem := mmtest.New(t, 2048)
	start, _ := mem.Frames.Stats()
	load := func(file *fs.Node) (*mm.AddressSpace, uint64) {
		t.Helper()
		before, _ := mem.Frames.Stats()
		as, err := mm.NewAddressSpace(mem)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := LoadELF(as, img, 0, file, "/prog"); err != nil {
			t.Fatal(err)
		}
		after, _ := mem.Frames.Stats()
		return as, after - before
	}
	a, _ := load(node)
	b, mapped := load(node)
	c, copied := load(nil)
	if copied != mapped+1 {
		t.Errorf("a second load took %d frames mapping the file, %d copying it: want one fewer (the code page)", mapped, copied)
	}
	for _, as := range []*mm.AddressSpace{a, b} {
		if r, err := as.Resident(0x10000, mm.PageSize); err != nil || r[0]&1 == 0 {
			t.Errorf("code page not mapped at load: %v %v", r, err)
		}
		got := make([]byte, len(code))
		if err := as.CopyIn(0x10000, got); err != nil || !bytes.Equal(got, code) {
			t.Errorf("code %x %v", got, err)
		}
		got = make([]byte, len(data)+16)
		if err := as.CopyIn(0x12000, got); err != nil || !bytes.Equal(got, append(append([]byte{}, data...), make([]byte, 16)...)) {
			t.Errorf("data and bss %q %v", got, err)
		}
	}
	if err := a.CopyOut(0x12000, []byte("I")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 1)
	if err := b.CopyIn(0x12000, got); err != nil || got[0] != 'i' {
		t.Errorf("another load reads %q after a write to data", got)
	}
	if n, err := node.ReadAt(got, int64(bytes.Index(img, data))); err != nil || n != 1 || got[0] != 'i' {
		t.Errorf("the file reads %q after a write to data", got)
	}
	for _, as := range []*mm.AddressSpace{a, b, c} {
		as.Release()
	}
	if now, _ := mem.Frames.Stats(); now != start {
		t.Errorf("%d frames in use after releasing every load, %d before", now, start)
	}
}
