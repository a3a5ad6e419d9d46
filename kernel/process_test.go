package kernel

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm/mmtest"
)

func TestExecStaticAndDynamic(t *testing.T) {
	static := makeELF(etExec, emRISCV, 0x10000, []testSeg{{ptLoad, pfR | pfX, 0x10000, 0x1000, []byte{0x13, 0, 0, 0}}})
	dynamic := makeELF(etDyn, emRISCV, 0x200, []testSeg{
		{ptLoad, pfR | pfX, 0, 0x1000, nil},
		{ptInterp, pfR, 0, 0, []byte("/lib/ld.so\x00")},
	})
	ld := makeELF(etDyn, emRISCV, 0x80, []testSeg{{ptLoad, pfR | pfX, 0, 0x2000, nil}})
	tree := &fs.Tree{Root: fs.NewDir(0o755)}
	tree.Create("/lib", fs.NewDir(0o755))
	tree.Create("/static", &fs.Node{Mode: 0o755, Data: static})
	tree.Create("/dynamic", &fs.Node{Mode: 0o755, Data: dynamic})
	tree.Create("/lib/ld.so", &fs.Node{Mode: 0o755, Data: ld})
	tree.Create("/text", &fs.Node{Mode: 0o644, Data: []byte("hello")})
	tree.Create("/badinterp", &fs.Node{Mode: 0o755, Data: makeELF(etDyn, emRISCV, 0, []testSeg{
		{ptLoad, pfR, 0, 0x1000, nil}, {ptInterp, pfR, 0, 0, []byte("/nope\x00")}})})
	mem := mmtest.New(t, 4096)
	var regs arch.Frame

	as, err := Exec(mem, tree, "/static", []string{"static"}, nil, [16]byte{}, &regs)
	if err != nil {
		t.Fatal(err)
	}
	if regs.PC != 0x10000 || regs.Satp != as.Satp() || regs.X[arch.RegSP]%16 != 0 || as.BrkBase != 0x11000 {
		t.Fatalf("static: pc %#x sp %#x brk %#x", regs.PC, regs.X[arch.RegSP], as.BrkBase)
	}
	as.Release()

	as, err = Exec(mem, tree, "/dynamic", []string{"dynamic"}, []string{"A=1"}, [16]byte{}, &regs)
	if err != nil {
		t.Fatal(err)
	}
	if regs.PC != interpBias+0x80 {
		t.Fatalf("dynamic: pc %#x, want the interpreter's entry", regs.PC)
	}
	as.Release()

	for file, want := range map[string]unix.Errno{
		"/missing": unix.ENOENT, "/text": unix.EACCES, "/lib": unix.EACCES, "/badinterp": unix.ENOENT,
	} {
		_, err := Exec(mem, tree, file, nil, nil, [16]byte{}, &regs)
		var ee *ExecError
		if !errors.As(err, &ee) || ee.Errno != want {
			t.Errorf("%s: %v, want errno %v", file, err, want)
		}
	}
	tree.Create("/garbage", &fs.Node{Mode: 0o755, Data: []byte("\x7fELF garbage")})
	var ee *ExecError
	if _, err := Exec(mem, tree, "/garbage", nil, nil, [16]byte{}, &regs); !errors.As(err, &ee) || ee.Errno != unix.ENOEXEC {
		t.Errorf("garbage: %v", err)
	}
	// What stays is the vDSO's data page, which the kernel keeps for every
	// address space of mem.
	if inUse, _ := mem.Frames.Stats(); inUse != 1 {
		t.Errorf("%d frames in use after the execs, want 1 (the vDSO's data page)", inUse)
	}
}
