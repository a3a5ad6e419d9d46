package rootfs

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// tinyModule builds a relocatable RISC-V ELF whose only content is a
// .modinfo section with the given NUL-separated strings.
func tinyModule(t *testing.T, modinfo ...string) []byte {
	t.Helper()
	var info []byte
	for _, s := range modinfo {
		info = append(info, s...)
		info = append(info, 0)
	}
	shstr := []byte("\x00.modinfo\x00.shstrtab\x00")
	const ehsize, shentsize = 64, 64
	infoOff := uint64(ehsize)
	strOff := infoOff + uint64(len(info))
	shOff := (strOff + uint64(len(shstr)) + 7) &^ 7
	var b bytes.Buffer
	hdr := elf.Header64{
		Type: uint16(elf.ET_REL), Machine: uint16(elf.EM_RISCV), Version: uint32(elf.EV_CURRENT),
		Shoff: shOff, Ehsize: ehsize, Shentsize: shentsize, Shnum: 3, Shstrndx: 2,
	}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	hdr.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	hdr.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	binary.Write(&b, binary.LittleEndian, hdr)
	b.Write(info)
	b.Write(shstr)
	b.Write(make([]byte, shOff-uint64(b.Len())))
	sections := []elf.Section64{
		{},
		{Name: 1, Type: uint32(elf.SHT_PROGBITS), Off: infoOff, Size: uint64(len(info)), Addralign: 1},
		{Name: 10, Type: uint32(elf.SHT_STRTAB), Off: strOff, Size: uint64(len(shstr)), Addralign: 1},
	}
	binary.Write(&b, binary.LittleEndian, sections)
	return b.Bytes()
}

func TestModuleDepends(t *testing.T) {
	ko := tinyModule(t, "license=GPL", "depends=net_failover,virtio-ring", "name=virtio_net")
	deps, err := moduleDepends(ko)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"net_failover", "virtio_ring"}; !reflect.DeepEqual(deps, want) {
		t.Errorf("depends = %v, want %v", deps, want)
	}
	deps, err = moduleDepends(tinyModule(t, "depends=", "name=failover"))
	if err != nil || len(deps) != 0 {
		t.Errorf("empty depends = %v, %v", deps, err)
	}
	if _, err := moduleDepends([]byte("not an elf")); err == nil {
		t.Error("garbage: want an error")
	}
}

func TestResolveModules(t *testing.T) {
	mods := map[string][]byte{
		"virtio_mmio":  tinyModule(t, "depends="),
		"failover":     tinyModule(t, "depends="),
		"net_failover": tinyModule(t, "depends=failover"),
		"virtio_net":   tinyModule(t, "depends=net_failover"),
	}
	dir := t.TempDir()
	index := map[string]string{}
	for name, ko := range mods {
		rel := filepath.Join("kernel", name+".ko")
		os.MkdirAll(filepath.Join(dir, "kernel"), 0o755)
		os.WriteFile(filepath.Join(dir, rel), ko, 0o644)
		index[name] = rel
	}
	order, kos, err := resolveModules(dir, index, []string{"virtio_mmio", "virtio_net"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"virtio_mmio", "failover", "net_failover", "virtio_net"}; !reflect.DeepEqual(order, want) {
		t.Errorf("order = %v, want %v", order, want)
	}
	if !bytes.Equal(kos["failover"], mods["failover"]) {
		t.Error("module content not returned")
	}
	if _, _, err := resolveModules(dir, index, []string{"nope"}); err == nil {
		t.Error("missing module: want an error")
	}
	_, _, err = resolveWith([]string{"a"}, func(name string) ([]byte, error) {
		return tinyModule(t, fmt.Sprintf("depends=%s", map[string]string{"a": "b", "b": "a"}[name])), nil
	})
	if err == nil {
		t.Error("cycle: want an error")
	}
}

func TestModuleIndex(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "kernel/drivers/net"), 0o755)
	os.WriteFile(filepath.Join(dir, "kernel/drivers/net/virtio-net.ko.xz"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "kernel/drivers/net/README"), nil, 0o644)
	idx, err := moduleIndex(dir)
	if err != nil || len(idx) != 1 || idx["virtio_net"] != "kernel/drivers/net/virtio-net.ko.xz" {
		t.Fatalf("index = %v, %v", idx, err)
	}
}

func TestCheckImage(t *testing.T) {
	p := filepath.Join(t.TempDir(), "Image")
	h := make([]byte, 64)
	copy(h, "MZ")
	copy(h[0x30:], "RISCV\x00\x00\x00RSC\x05")
	os.WriteFile(p, h, 0o644)
	if err := checkImage(p); err != nil {
		t.Fatalf("valid header: %v", err)
	}
	h[0x38] = 'X'
	os.WriteFile(p, h, 0o644)
	if err := checkImage(p); err == nil {
		t.Fatal("bad magic: want an error")
	}
}
