package loader

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

// TestVDSOImage reads the image with debug/elf, as a tool would: a riscv64
// shared object whose dynamic symbols are the functions glibc and Go look
// up, each at its code, with version LINUX_4.15.
func TestVDSOImage(t *testing.T) {
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
	off := SigreturnAddr - VDSOAddr
	if !bytes.Equal(vdso.image[off:off+8], []byte{0x93, 0x08, 0xb0, 0x08, 0x73, 0, 0, 0}) {
		t.Errorf("rt_sigreturn code % x", vdso.image[off:off+8])
	}
}

// TestVDSOMappedAndDataPage: exec maps the image read-execute and the data
// page read-only below it, names the image in AT_SYSINFO_EHDR, and the data
// page follows SetClock with an even sequence number; the data page
// cannot be made writable.
func TestVDSOMappedAndDataPage(t *testing.T) {
	mem := mmtest.New(t, 2048)
	as, err := mm.NewAddressSpace(mem)
	if err != nil {
		t.Fatal(err)
	}
	defer as.Release()
	data := NewVDSO()
	if err := data.mapVDSO(mem, as); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(vdso.image))
	if err := as.CopyIn(VDSOAddr, got); err != nil || !bytes.Equal(got, vdso.image) {
		t.Fatalf("image not mapped: %v", err)
	}
	var perms []uint64
	for _, v := range as.VMAs() {
		perms = append(perms, v.Perm)
	}
	if len(perms) != 2 || perms[0] != mm.PTERead || perms[1] != mm.PTERead|mm.PTEExec {
		t.Fatalf("VMAs %v", as.VMAs())
	}
	data.SetClock(10_000_000, 1_700_000_000_000_000_000, -12345)
	page := make([]byte, 32)
	if err := as.CopyIn(VvarAddr, page); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if seq := le.Uint64(page); seq == 0 || seq%2 != 0 {
		t.Errorf("sequence %d, want even and bumped", seq)
	}
	if le.Uint64(page[8:]) != 10_000_000 || int64(le.Uint64(page[16:])) != 1_700_000_000_000_000_000 ||
		int64(le.Uint64(page[24:])) != -12345 {
		t.Errorf("data page % x", page)
	}
	if err := as.Protect(VvarAddr, mm.PageSize, mm.PTERead|mm.PTEWrite); err != mm.ErrAccess {
		t.Errorf("mprotect of the data page to writable: %v, want ErrAccess", err)
	}
	// A forked child maps the same data page.
	child, err := as.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer child.Release()
	data.SetClock(10_000_000, 5, 6)
	if err := child.CopyIn(VvarAddr, page); err != nil || int64(le.Uint64(page[16:])) != 5 {
		t.Errorf("child's data page % x, %v", page, err)
	}
}

// TestVDSOAuxv: the auxiliary vector names the vDSO.
func TestVDSOAuxv(t *testing.T) {
	mem := mmtest.New(t, 4096)
	as, err := mm.NewAddressSpace(mem)
	if err != nil {
		t.Fatal(err)
	}
	defer as.Release()
	exe := &Image{Entry: 0x10000}
	sp, err := buildStack(as, []string{"a"}, nil, exe, nil, "/a", StackSize, [16]byte{})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, min(8*64, mm.UserStackTop-sp))
	if err := as.CopyIn(sp, buf); err != nil {
		t.Fatal(err)
	}
	// argc, argv[0], NULL, envp NULL, then the auxv pairs.
	for i := 4; 8*i+16 <= len(buf); i += 2 {
		k, v := binary.LittleEndian.Uint64(buf[8*i:]), binary.LittleEndian.Uint64(buf[8*i+8:])
		if k == atSysinfoEhdr {
			if v != uint64(VDSOAddr) {
				t.Fatalf("AT_SYSINFO_EHDR %#x, want %#x", v, VDSOAddr)
			}
			return
		}
		if k == atNull {
			break
		}
	}
	t.Fatal("no AT_SYSINFO_EHDR in the auxiliary vector")
}
