package mm_test

import (
	"errors"
	"testing"

	. "github.com/jiege-go/jiege/mm"
)

type uffdCtx struct{ sigbus bool }

func (c *uffdCtx) SigBus() bool { return c.sigbus }

// A registered range's absent pages are the context's: the fault says
// where and how; the rest of the mapping faults as before, and the VMA
// split by the registration merges again when it ends.
func TestUserfaultRegisterAndFault(t *testing.T) {
	as, _ := newTestAS(t, 256)
	addr, _ := as.Map(0x40_0000, 4*PageSize, PTERead|PTEWrite, true)
	ctx := &uffdCtx{}
	if err := as.UffdRegister(ctx, addr+PageSize, 2*PageSize, UffdMissing); err != nil {
		t.Fatal(err)
	}
	if as.MapCount() != 3 {
		t.Fatalf("%d VMAs after registering the middle, want 3", as.MapCount())
	}
	var uf *Userfault
	if err := as.Fault(addr+PageSize+0x123, Write); !errors.As(err, &uf) || uf.Ctx != ctx || uf.Addr != addr+PageSize+0x123 || !uf.Write {
		t.Fatalf("fault in the range: %v %+v", err, uf)
	}
	if !as.UffdAbsent(ctx, addr+PageSize+7) {
		t.Fatal("the page is not absent")
	}
	if err := as.Fault(addr, Write); err != nil {
		t.Fatalf("fault beside the range: %v", err)
	}
	if err := as.UffdRegister(&uffdCtx{}, addr, 2*PageSize, UffdMissing); !errors.Is(err, ErrBusy) {
		t.Fatalf("another context over the range: %v", err)
	}
	if err := as.UffdUnregister(ctx, addr, 4*PageSize); err != nil {
		t.Fatal(err)
	}
	if as.MapCount() != 1 {
		t.Fatalf("%d VMAs after unregistering, want 1", as.MapCount())
	}
	if err := as.Fault(addr+PageSize, Read); err != nil {
		t.Fatalf("fault after unregistering: %v", err)
	}
}

func TestUserfaultRegisterErrors(t *testing.T) {
	as, _ := newTestAS(t, 256)
	addr, _ := as.Map(0x40_0000, 2*PageSize, PTERead|PTEWrite, true)
	shared, _ := as.Mmap(0x80_0000, PageSize, Mapping{Perm: PTERead | PTEWrite, Fixed: true, Shared: true})
	ctx := &uffdCtx{}
	for _, c := range []struct {
		name       string
		addr, size uintptr
		want       error
	}{
		{"unaligned", addr + 1, PageSize, ErrInvalid},
		{"odd length", addr, PageSize + 1, ErrInvalid},
		{"empty", addr, 0, ErrInvalid},
		{"below UserMin", 0x1000, PageSize, ErrInvalid},
		{"past user memory", MaxUserVA, PageSize, ErrInvalid},
		{"no memory", 0x60_0000, PageSize, ErrInvalid},
		{"shared memory", shared, PageSize, ErrInvalid},
	} {
		if err := as.UffdRegister(ctx, c.addr, c.size, UffdMissing); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// A hole inside the range is skipped.
	if err := as.UffdRegister(ctx, addr, 4*PageSize, UffdMissing); err != nil {
		t.Fatalf("range past the mapping: %v", err)
	}
}

// UffdResolve fills an absent page once; a page outside the context's
// ranges is ErrNotRegistered.
func TestUserfaultResolve(t *testing.T) {
	as, _ := newTestAS(t, 256)
	addr, _ := as.Map(0x40_0000, 2*PageSize, PTERead|PTEWrite, true)
	ctx := &uffdCtx{}
	as.UffdRegister(ctx, addr, PageSize, UffdMissing)
	var data [PageSize]byte
	data[5] = 'X'
	if err := as.UffdResolve(ctx, addr+PageSize, UffdCopy, &data); !errors.Is(err, ErrNotRegistered) {
		t.Fatalf("copy outside the range: %v", err)
	}
	if err := as.UffdResolve(&uffdCtx{}, addr, UffdCopy, &data); !errors.Is(err, ErrNotRegistered) {
		t.Fatalf("copy by another context: %v", err)
	}
	if err := as.UffdResolve(ctx, addr, UffdCopy, &data); err != nil {
		t.Fatal(err)
	}
	if err := as.UffdResolve(ctx, addr, UffdZero, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("zeropage over a page: %v", err)
	}
	if err := as.Fault(addr+5, Read); err != nil {
		t.Fatalf("fault on the copied page: %v", err)
	}
	got := make([]byte, 1)
	if as.CopyIn(addr+5, got); got[0] != 'X' {
		t.Fatalf("copied page reads %q", got)
	}
}

// A poisoned page faults ErrPoisoned and is EFAULT to the kernel, even
// once the context is gone, until it is unmapped; a fork keeps the mark.
func TestUserfaultPoison(t *testing.T) {
	as, _ := newTestAS(t, 256)
	addr, _ := as.Map(0x40_0000, PageSize, PTERead|PTEWrite, true)
	ctx := &uffdCtx{}
	as.UffdRegister(ctx, addr, PageSize, UffdMissing)
	if err := as.UffdResolve(ctx, addr, UffdPoison, nil); err != nil {
		t.Fatal(err)
	}
	as.UffdRelease(ctx)
	if err := as.Fault(addr, Read); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("fault on a poisoned page: %v", err)
	}
	if err := as.CopyIn(addr, make([]byte, 1)); !errors.Is(err, ErrFault) {
		t.Fatalf("kernel read of a poisoned page: %v", err)
	}
	child, err := as.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer child.Release()
	if err := child.Fault(addr, Read); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("child's fault on a poisoned page: %v", err)
	}
	as.Unmap(addr, PageSize)
	as.Map(addr, PageSize, PTERead|PTEWrite, true)
	if err := as.Fault(addr, Read); err != nil {
		t.Fatalf("fault after remapping: %v", err)
	}
}

// A fork's child does not inherit the registration; a SIGBUS context's
// faults are ErrBus; a move takes the source's frame.
func TestUserfaultForkSigbusMove(t *testing.T) {
	as, f := newTestAS(t, 256)
	addr, _ := as.Map(0x40_0000, 2*PageSize, PTERead|PTEWrite, true)
	ctx := &uffdCtx{sigbus: true}
	as.UffdRegister(ctx, addr, PageSize, UffdMissing)
	if err := as.Fault(addr, Read); !errors.Is(err, ErrBus) {
		t.Fatalf("fault with UFFD_FEATURE_SIGBUS: %v", err)
	}
	child, err := as.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Fault(addr, Read); err != nil {
		t.Fatalf("child's fault: %v", err)
	}
	child.Release()
	src := addr + PageSize
	if err := as.UffdMove(ctx, addr, src, false); !errors.Is(err, ErrNotRegistered) {
		t.Fatalf("move from a hole: %v", err)
	}
	if err := as.UffdMove(ctx, addr, src, true); err != nil {
		t.Fatalf("move from a hole, holes allowed: %v", err)
	}
	as.CopyOut(src, []byte{'M'})
	before, _ := f.Stats()
	if err := as.UffdMove(ctx, addr, src, false); err != nil {
		t.Fatal(err)
	}
	if after, _ := f.Stats(); after != before {
		t.Fatalf("move took a frame: %d, was %d", after, before)
	}
	got := make([]byte, 1)
	if as.CopyIn(addr, got); got[0] != 'M' {
		t.Fatalf("moved page reads %q", got)
	}
	if as.UffdAbsent(ctx, addr) {
		t.Fatal("the moved page is absent")
	}
}
