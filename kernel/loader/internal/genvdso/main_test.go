package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"testing"

	arch "github.com/jiege-go/jiege/arch/riscv64"
)

// TestGenerated keeps arch/riscv64/zvdso.go what the builder makes: the
// file's text, and so the image the kernel and the loader use.
func TestGenerated(t *testing.T) {
	const path = "../../../../arch/riscv64/zvdso.go"
	vdso := buildVDSO()
	want, err := source(vdso)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const fix = "run go generate ./kernel/loader"
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what kernel/loader/internal/genvdso writes: %s", path, fix)
	}
	if !bytes.Equal(arch.VDSOImage(), vdso.image) || arch.VDSOSigreturn != vdso.symbols["__vdso_rt_sigreturn"] {
		t.Fatalf("arch/riscv64's compiled vDSO image is not the builder's: %s", fix)
	}
}

// TestVDSOImage reads the image with debug/elf, as a tool would: a riscv64
// shared object whose dynamic symbols are the functions glibc and Go look
// up, each at its code, with version LINUX_4.15.
func TestVDSOImage(t *testing.T) {
	vdso := buildVDSO()
	f, err := elf.NewFile(bytes.NewReader(vdso.image))
	if err != nil {
		t.Fatal(err)
	}
	if f.Type != elf.ET_DYN || f.Machine != elf.EM_RISCV || f.Class != elf.ELFCLASS64 {
		t.Fatalf("type %v machine %v class %v", f.Type, f.Machine, f.Class)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"__vdso_rt_sigreturn": true, "__vdso_gettimeofday": true,
		"__vdso_clock_gettime": true, "__vdso_clock_getres": true, "__vdso_time": true}
	text := f.Section(".text")
	for _, s := range syms {
		if !want[s.Name] {
			t.Errorf("unexpected symbol %q", s.Name)
			continue
		}
		delete(want, s.Name)
		if !s.HasVersion || s.Version != "LINUX_4.15" {
			t.Errorf("%s: version %q (has %v), want LINUX_4.15", s.Name, s.Version, s.HasVersion)
		}
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || elf.ST_BIND(s.Info) != elf.STB_GLOBAL ||
			s.Value < text.Addr || s.Value >= text.Addr+text.Size || s.Value%4 != 0 {
			t.Errorf("%s: info %#x value %#x outside .text", s.Name, s.Info, s.Value)
		}
	}
	for n := range want {
		t.Errorf("missing %s", n)
	}
	soname, err := f.DynString(elf.DT_SONAME)
	if err != nil || len(soname) != 1 || soname[0] != "linux-vdso.so.1" {
		t.Errorf("DT_SONAME %q, %v", soname, err)
	}
	// The dynamic section's DT_HASH finds every symbol through its chain.
	var hashAddr uint64
	for _, p := range f.Progs {
		if p.Type != elf.PT_DYNAMIC {
			continue
		}
		d := vdso.image[p.Off : p.Off+p.Filesz]
		for i := 0; i+16 <= len(d); i += 16 {
			if binary.LittleEndian.Uint64(d[i:]) == uint64(elf.DT_HASH) {
				hashAddr = binary.LittleEndian.Uint64(d[i+8:])
			}
		}
	}
	h := vdso.image[hashAddr:]
	nbucket := binary.LittleEndian.Uint32(h)
	found := 0
	for _, s := range syms {
		i := binary.LittleEndian.Uint32(h[8+4*(elfHash(s.Name)%nbucket):])
		for ; i != 0; i = binary.LittleEndian.Uint32(h[8+4*nbucket+4*i:]) {
			if int(i) <= len(syms) && syms[i-1].Name == s.Name {
				found++
				break
			}
		}
	}
	if found != len(syms) {
		t.Errorf("DT_HASH finds %d of %d symbols", found, len(syms))
	}
	// Signal handlers return to the vDSO's li a7, 139; ecall.
	off := vdso.symbols["__vdso_rt_sigreturn"]
	if !bytes.Equal(vdso.image[off:off+8], []byte{0x93, 0x08, 0xb0, 0x08, 0x73, 0, 0, 0}) {
		t.Errorf("rt_sigreturn code % x", vdso.image[off:off+8])
	}
}
