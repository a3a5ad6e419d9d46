package loader

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	arch "github.com/jiege-go/jiege/arch/riscv64"
	"github.com/jiege-go/jiege/fs"
	"github.com/jiege-go/jiege/mm"
	"github.com/jiege-go/jiege/mm/mmtest"
)

func TestExecStaticAndDynamic(t *testing.T) {
	static := makeELF(elfETExec, elfEMRISCV, 0x10000, []testSeg{{elfPTLoad, elfPFR | elfPFX, 0x10000, 0x1000, []byte{0x13, 0, 0, 0}}})
	dynamic := makeELF(elfETDyn, elfEMRISCV, 0x200, []testSeg{
		{elfPTLoad, elfPFR | elfPFX, 0, 0x1000, nil},
		{elfPTInterp, elfPFR, 0, 0, []byte("/lib/ld.so\x00")},
	})
	ld := makeELF(elfETDyn, elfEMRISCV, 0x80, []testSeg{{elfPTLoad, elfPFR | elfPFX, 0, 0x2000, nil}})
	tree := fs.NewTree(fs.NewDir(0o755))
	tree.Create(nil, "/lib", fs.NewDir(0o755))
	tree.Create(nil, "/static", &fs.Node{Mode: 0o755, Data: static})
	tree.Create(nil, "/dynamic", &fs.Node{Mode: 0o755, Data: dynamic})
	tree.Create(nil, "/lib/ld.so", &fs.Node{Mode: 0o755, Data: ld})
	tree.Create(nil, "/text", &fs.Node{Mode: 0o644, Data: []byte("hello")})
	tree.Create(nil, "/badinterp", &fs.Node{Mode: 0o755, Data: makeELF(elfETDyn, elfEMRISCV, 0, []testSeg{
		{elfPTLoad, elfPFR, 0, 0x1000, nil}, {elfPTInterp, elfPFR, 0, 0, []byte("/nope\x00")}})})
	mem, data := mmtest.New(t, 4096), NewVDSO()
	var regs arch.Frame

	as, err := Exec(mem, data, tree, nil, "/static", []string{"static"}, nil, StackSize, [16]byte{}, &regs)
	if err != nil {
		t.Fatal(err)
	}
	if regs.PC != 0x10000 || regs.Satp != as.Satp() || regs.X[arch.RegSP]%16 != 0 || as.BrkBase != 0x11000 {
		t.Fatalf("static: pc %#x sp %#x brk %#x", regs.PC, regs.X[arch.RegSP], as.BrkBase)
	}
	as.Release()

	as, err = Exec(mem, data, tree, nil, "/dynamic", []string{"dynamic"}, []string{"A=1"}, StackSize, [16]byte{}, &regs)
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
		_, err := Exec(mem, data, tree, nil, file, nil, nil, StackSize, [16]byte{}, &regs)
		var ee *ExecError
		if !errors.As(err, &ee) || ee.Errno != want {
			t.Errorf("%s: %v, want errno %v", file, err, want)
		}
	}
	tree.Create(nil, "/garbage", &fs.Node{Mode: 0o755, Data: []byte("\x7fELF garbage")})
	var ee *ExecError
	if _, err := Exec(mem, data, tree, nil, "/garbage", nil, nil, StackSize, [16]byte{}, &regs); !errors.As(err, &ee) || ee.Errno != unix.ENOEXEC {
		t.Errorf("garbage: %v", err)
	}
	// What stays is the vDSO's data page, which the kernel keeps for every
	// address space of mem.
	if inUse, _ := mem.Frames.Stats(); inUse != 1 {
		t.Errorf("%d frames in use after the execs, want 1 (the vDSO's data page)", inUse)
	}
}

// TestExecStackLimit checks that the stack mapping follows RLIMIT_STACK's
// soft limit within its bounds, that arguments past a quarter of it fail
// with E2BIG, and that exec refuses a program its caller may not execute.
func TestExecStackLimit(t *testing.T) {
	static := makeELF(elfETExec, elfEMRISCV, 0x10000, []testSeg{{elfPTLoad, elfPFR | elfPFX, 0x10000, 0x1000, []byte{0x13, 0, 0, 0}}})
	tree := fs.NewTree(fs.NewDir(0o755))
	tree.Create(nil, "/static", &fs.Node{Mode: 0o755, Data: static})
	tree.Create(nil, "/owner-only", &fs.Node{Mode: 0o700, Data: static})
	mem, data := mmtest.New(t, 4096), NewVDSO()
	var regs arch.Frame
	for _, c := range []struct {
		limit uint64
		want  uintptr
	}{{1 << 20, 1 << 20}, {StackSize, StackSize}, {1000, StackMin}, {unix.RLIM_INFINITY, StackMax}, {3<<20 + 1, 3<<20 + mm.PageSize}} {
		as, err := Exec(mem, data, tree, nil, "/static", []string{"static"}, nil, c.limit, [16]byte{}, &regs)
		if err != nil {
			t.Fatalf("limit %d: %v", c.limit, err)
		}
		var size uintptr
		for _, v := range as.VMAs() {
			if v.End == mm.UserStackTop {
				size = v.End - v.Start
			}
		}
		as.Release()
		if size != c.want {
			t.Errorf("limit %d: stack mapping %d bytes, want %d", c.limit, size, c.want)
		}
	}
	args := []string{"static", string(make([]byte, 40<<10))}
	var ee *ExecError
	if _, err := Exec(mem, data, tree, nil, "/static", args, nil, StackMin, [16]byte{}, &regs); !errors.As(err, &ee) || ee.Errno != unix.E2BIG {
		t.Errorf("40 KiB of arguments on a 128 KiB stack: %v, want E2BIG", err)
	}
	user := &fs.Cred{UID: 1000, GID: 1000}
	if _, err := Exec(mem, data, tree, user, "/owner-only", []string{"x"}, nil, StackSize, [16]byte{}, &regs); !errors.As(err, &ee) || ee.Errno != unix.EACCES {
		t.Errorf("a user executing root's 0700 program: %v, want EACCES", err)
	}
	as, err := Exec(mem, data, tree, &fs.Cred{}, "/owner-only", []string{"x"}, nil, StackSize, [16]byte{}, &regs)
	if err != nil {
		t.Fatalf("root executing its 0700 program: %v", err)
	}
	as.Release()
}
