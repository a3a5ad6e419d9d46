package kernel

import (
	"testing"

	"github.com/jiege-go/jiege/kernel/loader"
	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

// TestProcfsNamesTheStackAndTheVDSO: /proc/PID/maps names the stack's
// mapping and the vDSO's data page and image, laid out as exec lays them.
func TestProcfsNamesTheStackAndTheVDSO(t *testing.T) {
	mem := mmtest.New(t, 256)
	as, err := mm.NewAddressSpace(mem)
	if err != nil {
		t.Fatal(err)
	}
	defer as.Release()
	const code = 0x10000
	if _, err := as.Map(code, mm.PageSize, mm.PTERead|mm.PTEExec, true); err != nil {
		t.Fatal(err)
	}
	if _, err := as.Map(mm.UserStackTop-mm.PageSize, mm.PageSize, mm.PTERead|mm.PTEWrite, true); err != nil {
		t.Fatal(err)
	}
	vvar := mm.Mapping{Perm: mm.PTERead, Fixed: true, Held: mm.NewKernelMemory(mem)}
	if _, err := as.Mmap(loader.VvarAddr, mm.PageSize, vvar); err != nil {
		t.Fatal(err)
	}
	if _, err := as.Map(loader.VDSOAddr, mm.PageSize, mm.PTERead|mm.PTEExec, true); err != nil {
		t.Fatal(err)
	}
	p := &Process{AS: as}
	p.vm.Store(&sharedVM{})
	got := map[uintptr]string{}
	for _, m := range (procfsProcess{p}).Mappings() {
		got[m.Start] = m.Name
	}
	want := map[uintptr]string{code: "", mm.UserStackTop - mm.PageSize: "[stack]", loader.VvarAddr: "[vvar]", loader.VDSOAddr: "[vdso]"}
	if len(got) != len(want) {
		t.Fatalf("mappings %v, want %v", got, want)
	}
	for start, name := range want {
		if got[start] != name {
			t.Errorf("mapping at %#x named %q, want %q", start, got[start], name)
		}
	}
}
