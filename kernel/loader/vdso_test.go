package loader

import (
	"bytes"
	"encoding/binary"
	"testing"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

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
	image := arch.VDSOImage()
	got := make([]byte, len(image))
	if err := as.CopyIn(VDSOAddr, got); err != nil || !bytes.Equal(got, image) {
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
